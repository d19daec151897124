"""Pytest helpers: regression-check your own closed forms in your CI.

    import rdpsym
    from rdpsym.testing import assert_closed_form

    def test_my_laplace_formula():
        assert_closed_form("laplace", "1/lambda + exp(-1/lambda) - 1", order=1)

    def test_my_registry():
        assert_registry("tests/my_closed_forms.toml")

Both raise ``AssertionError`` with the full report (the verdict's evidence, the counterexample at high
precision) when a formula does not hold; see :func:`rdpsym.check_claim` for the verdicts and
:mod:`rdpsym.regress` for the registry format.
"""

from __future__ import annotations

from typing import Sequence

__all__ = ["assert_closed_form", "assert_registry"]


def assert_closed_form(target, formula, relation: str = "==", order=None, symbols=None, *,
                       require_proof: bool = False, **kwargs):
    """Assert that ``formula`` holds for ``target`` (a Mechanism, a DivergenceResult or a registered
    mechanism name); return the :class:`~rdpsym.claims.ClaimVerdict`.

    Passes on ``proved`` and, unless ``require_proof``, on ``confirmed``; fails on ``refuted`` and
    ``inconclusive``. ``kwargs`` go to :func:`rdpsym.check_claim` (``fixed``, ``latex``, ``parameters``,
    ``alpha_range``, ``digits``, ...).
    """
    from .claims import Verdict, check_claim

    if isinstance(target, str):
        from . import mechanisms

        target = mechanisms.get(target)
    verdict = check_claim(target, formula, relation, order, symbols, **kwargs)
    wanted = (Verdict.PROVED,) if require_proof else (Verdict.PROVED, Verdict.CONFIRMED)
    if verdict.verdict not in wanted:
        raise AssertionError(f"closed form does not hold ({verdict.verdict}, wanted {' or '.join(wanted)}):\n{verdict}")
    return verdict


def assert_registry(*paths, only: Sequence[str] = (), search: int = 60, allow_inconclusive: bool = False,
                    executor=None):
    """Assert that every entry of the registry files passes ``rdpsym regress``; return the rows.

    An ``inconclusive`` entry (the formula holds but the independent numerics gave no answer) fails the
    assertion too unless ``allow_inconclusive``. ``executor`` as in :func:`rdpsym.regress.run_registry`.
    """
    from .regress import run_registry

    rows = run_registry(paths, only=only, search=search, executor=executor)
    bad = [r for r in rows if r.label == "fail" or (r.label == "inconclusive" and not allow_inconclusive)]
    if bad:
        lines = [f"{r.name}: {r.label}: {r.verdict} ({r.independent}) {r.detail}" for r in bad]
        raise AssertionError(f"{len(bad)} of {len(rows)} registry entries did not pass:\n" + "\n".join(lines))
    return rows
