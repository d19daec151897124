r"""Property checks that call the accounting layer (:mod:`rdpsym.accounting`).

* composition (Mironov 2017, arXiv:1702.07476 v3, Prop. 1): :func:`rdpsym.accounting.check_composition`
  compares the summed curve with the product pair's divergence computed from the joint density;
* group privacy (Prop. 2): for a 2^c-stable map and alpha >= 2^(c+1), the group curve at alpha/2^c
  is at most 3^c eps(alpha). Checked against the exact group curve of :func:`rdpsym.group_privacy`
  (itself checked against the numeric path on the shifted pair, :func:`rdpsym.numeric.maximum.numeric_maximum`);
* RDP -> (eps, delta) (Prop. 3; Canonne–Kamath–Steinke 2020, Prop. 12):
  :func:`rdpsym.accounting.check_conversion` against the exact privacy profile.

Each wrapper turns the accounting layer's report (or an exception from it) into a
:class:`~rdpsym.properties.PropertyReport`; an exception gives ``inconclusive`` with its message.
"""

from __future__ import annotations

import mpmath
import sympy as sp

from ..derive.mechanism_rdp import rdp, worst_pairs
from ..numeric.maximum import Direction, numeric_maximum
from ..specify.mechanism import Mechanism
from ..specify.text import as_number
from .curve import as_curve
from .report import PropertyReport, PropertyVerdict, report_from_rows

__all__ = ["composition", "group_privacy_check", "conversion"]

REF1 = "Mironov 2017 (arXiv:1702.07476 v3), Prop. 1"
REF2 = "Mironov 2017 (arXiv:1702.07476 v3), Prop. 2"
REF3 = "Mironov 2017 (arXiv:1702.07476 v3), Prop. 3; Canonne, Kamath, Steinke 2020, Prop. 12"


def _failed(name, ref, exc, target="") -> PropertyReport:
    return PropertyReport(name, PropertyVerdict.INCONCLUSIVE, "numeric", (), None, 0,
                          f"could not run: {type(exc).__name__}: {exc}", ref, target)


def composition(mechanism: Mechanism, values: dict, *, other: Mechanism | None = None, other_values: dict | None = None,
                dps: int = 20, alphas=(sp.Rational(3, 2), 2, 5)) -> PropertyReport:
    """Prop. 1 on the product of ``mechanism`` with ``other`` (default: itself)."""
    from ..accounting import check_composition

    name = "composition (Prop. 1)"
    other = other or mechanism
    try:
        rep = check_composition(mechanism, other, values, other_values if other_values is not None else values,
                                alphas=alphas, dps=dps)
    except Exception as exc:  # noqa: BLE001 - reported, never hidden
        return _failed(name, REF1, exc, mechanism.name)
    rows = [(f"alpha={a}: |sum - product|", disc, rep.tolerance) for a, _, _, disc in rep.points]
    out = report_from_rows(name, rows, 0, reference=REF1, target=mechanism.name, detail=rep.detail)
    if not rep.verdict and out.verdict is PropertyVerdict.HOLDS:  # accounting saw a failure we cannot see in the points
        out = PropertyReport(name, PropertyVerdict.FAILS, "numeric", out.evidence, out.worst_margin, out.tolerance, rep.detail, REF1, mechanism.name)
    return out


def group_privacy_check(mechanism: Mechanism, values: dict, *, c: int = 1, constant=3, orders=None,
                        dps: int = 30) -> PropertyReport:
    r"""Prop. 2 with ``constant`` (3 in the paper): group(alpha/2^c) <= constant^c eps(alpha) for
    alpha >= 2^(c+1), with the exact group curve from :func:`rdpsym.group_privacy` at k = 2^c.

    The exact curve is also compared (both ways) with the shifted pair's divergence computed by the
    numeric path (:func:`rdpsym.numeric.maximum.numeric_maximum`). Inconclusive when no exact group curve exists (status ``bound``).
    """
    from ..accounting import group_mechanism, group_privacy, is_location_family

    name = f"group privacy (Prop. 2, c = {c})"
    k = 2**c
    try:
        group = group_privacy(mechanism, k)
    except Exception as exc:  # noqa: BLE001
        return _failed(name, REF2, exc, mechanism.name)
    if group.status.value != "closed_form":
        return PropertyReport(name, PropertyVerdict.INCONCLUSIVE, "numeric", (), None, 0,
                              f"not applicable: no exact group curve (status {group.status}); Prop. 2 cannot be compared",
                              REF2, mechanism.name, {"applicable": False})
    base = as_curve(rdp(mechanism), values)
    grp = as_curve(group, values)
    cf = mpmath.mpf(sp.Float(sp.nsimplify(constant), dps + 10)) ** c
    lo = 2 ** (c + 1)
    orders = orders or (lo, sp.Rational(3, 2) * lo, 2 * lo, 10 * lo, 100 * lo)
    rows = []
    with mpmath.workdps(dps + 10):
        for a in orders:
            beta = as_number(a, "orders") / k
            rows.append((f"D_group(alpha/{k}) <= {sp.sstr(sp.nsimplify(constant))}^{c} eps(alpha), alpha={a}",
                         grp.value(beta, dps + 10), cf * base.value(a, dps + 10)))
        if is_location_family(mechanism):
            # the pairs of inputs k steps apart (a family's at its supremum, where rdp shows it)
            for pair in worst_pairs(group_mechanism(mechanism, k)):
                for beta in (sp.Rational(3, 2), 2, 5):
                    nv = numeric_maximum((Direction(pair.P, pair.Q, mechanism.variable, mechanism.support),), beta,
                                         values, dps)
                    g = grp.value(beta, dps + 10)
                    if not nv.converged:
                        rows.append((f"exact group curve at {beta}", None, None, 0, "numerics did not converge"))
                        continue
                    rows.append((f"group curve <= numeric, beta={beta}", g, nv.value, nv.error))
                    rows.append((f"numeric <= group curve, beta={beta}", nv.value, g, nv.error))
    return report_from_rows(name, rows, mpmath.mpf(10) ** (-(dps - 10)), reference=REF2, target=mechanism.name,
                            detail=f"group curve: {group.label} [{group.status}]")


def conversion(mechanism: Mechanism, values: dict, *, epsilons=(sp.Rational(1, 2), 1, 2),
               deltas=(sp.Rational(1, 10**3), sp.Rational(1, 10**6)), method: str = "improved", converter=None,
               dps: int = 30) -> PropertyReport:
    """The conversion ``method`` (or ``converter``) never claims a delta below the exact profile."""
    from ..accounting import check_conversion

    name = f"RDP -> (eps, delta) [{method if converter is None else 'custom'}] vs exact profile"
    try:
        rep = check_conversion(mechanism, epsilons=epsilons, deltas=deltas, method=method, converter=converter,
                               dps=dps, **values)
    except Exception as exc:  # noqa: BLE001
        return _failed(name, REF3, exc, mechanism.name)
    rows = []
    for pt in rep.points:
        target, claimed, exact = pt[0], pt[1], pt[2]
        if claimed is None or exact is None:
            rows.append((f"target {target}", None, None))
        else:
            rows.append((f"target {target}: exact delta <= claimed", exact, claimed))
    out = report_from_rows(name, rows, rep.tolerance, reference=REF3, target=mechanism.name, detail=rep.detail)
    if rep.verdict and out.verdict is PropertyVerdict.FAILS:
        # the accounting layer accepts the violation as within the profile's error estimate
        out = PropertyReport(name, PropertyVerdict.INCONCLUSIVE, "numeric", out.evidence, out.worst_margin, out.tolerance,
                             rep.detail + "; violation within the profile's error estimate", REF3, mechanism.name)
    if not rep.verdict and out.verdict is PropertyVerdict.HOLDS:
        out = PropertyReport(name, PropertyVerdict.FAILS, "numeric", out.evidence, out.worst_margin, out.tolerance, rep.detail, REF3, mechanism.name)
    return out
