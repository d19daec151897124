"""The paper's results as checked, regenerable derivations (Mironov 2017, arXiv:1702.07476 v3).

Each module ``proofs/<slug>.py`` has ``prove() -> Certificate`` and ``CHEAP`` (cheap enough for the
default test run). ``python -m proofs [--check] [--only SLUG ...]`` regenerates the Markdown
certificates in ``proofs/certificates/`` (or, with ``--check``, compares them semantically), with the
claim certificates (``rdpsym-certificate/1``) of the results that are claims about a curve.
"""

import importlib

PROOFS = ("table2_randomized_response", "table2_laplace", "table2_gaussian", "table1", "prop3", "prop4", "prop10",
          "prop11", "lemma1", "corollary1", "corollary4")


def load(slug):
    if slug not in PROOFS:
        raise ValueError(f"unknown proof {slug!r}; known: {', '.join(PROOFS)}")
    return importlib.import_module(f"{__name__}.{slug}")


def check(slug) -> list[str]:
    """Differences between the committed certificate and a fresh run (empty: up to date); the claims'
    certificates (Table II rows) are replayed and compared with the paper and the derivation of now."""
    from ._certificate import CERT_DIR, claim_differences, differences, read_front_matter

    path = CERT_DIR / f"{slug}.md"
    if not path.exists():
        return [f"{path} is missing"]
    fresh = load(slug).prove()
    committed = read_front_matter(path)
    return differences(committed, fresh.data()) + claim_differences(fresh, committed)
