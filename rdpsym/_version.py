"""The package's version and the versions of the libraries a result is made with (a leaf: what records
them reads it without importing the package root)."""

import platform

__version__ = "0.1.0"


def library_versions() -> dict[str, str]:
    """The versions of rdpsym, sympy, mpmath, numpy and Python: recorded in every result's provenance and
    part of every cache key (a result made by other libraries is not served)."""
    import mpmath
    import numpy
    import sympy

    return {
        "rdpsym": __version__,
        "sympy": sympy.__version__,
        "mpmath": mpmath.__version__,
        "numpy": numpy.__version__,
        "python": platform.python_version(),
    }
