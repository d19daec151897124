"""rdpsym: derive, verify and export Rényi differential privacy guarantees.

Built on Mironov, "Rényi Differential Privacy", CSF 2017 (arXiv:1702.07476 v3).
"""

from ._version import __version__

from .symbols import alpha
from .specify.params import Parameter, parameter
from .specify.adjacency import AdjacentFamily, AdjacentPair, ShiftBall
from .specify.mechanism import Mechanism
from .derive.result import DivergenceResult, ExceptionalPoint, Provenance, Status, Step

__all__ = [
    "__version__",
    "alpha",
    "Parameter",
    "parameter",
    "AdjacentPair",
    "AdjacentFamily",
    "ShiftBall",
    "Mechanism",
    "DivergenceResult",
    "ExceptionalPoint",
    "Provenance",
    "Status",
    "Step",
]

from .derive.engine import renyi_divergence
from .derive.mechanism_rdp import rdp
from . import mechanisms
from .mechanisms.subsample import subsample

__all__ += ["renyi_divergence", "rdp", "mechanisms", "subsample"]

from .numeric import numeric_divergence
from .verification import verify

__all__ += ["numeric_divergence", "verify", "strategies"]


def __getattr__(name):
    # `rdpsym.strategies` needs hypothesis (the `test` extra): import it only when asked for.
    if name == "strategies":
        import importlib

        return importlib.import_module(".strategies", __name__)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

from .accounting import compose, delta, epsilon, group_privacy

__all__ += ["compose", "group_privacy", "epsilon", "delta"]

from .claims import Certificate, check_claim

__all__ += ["check_claim", "Certificate"]

from . import properties

__all__ += ["properties"]

from .accounting import Accountant

__all__ += ["Accountant"]
