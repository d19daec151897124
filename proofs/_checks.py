"""Shared body of the proofs that certify a property check: verdict, points, worst margin."""

import mpmath

from ._certificate import Certificate


def from_reports(slug, title, statement, source, reports, formulas=None, numbers=None, notes=()):
    cert = Certificate(slug, title, statement, source, formulas=dict(formulas or {}), numbers=dict(numbers or {}))
    cert.steps += list(notes)
    for r in reports:
        margin = "-" if r.worst_margin is None else mpmath.nstr(r.worst_margin, 6)
        cert.steps.append(f"- {r.name} on {r.target or 'the target'}: **{r.verdict}** ({r.mode}, {r.points_checked} points, "
                          f"worst margin {margin}, tolerance {mpmath.nstr(mpmath.mpf(r.tolerance), 3)})")
        for e in r.evidence[:6]:
            cert.steps.append(f"  - {e.point}: {mpmath.nstr(mpmath.mpf(e.value), 15) if e.value is not None else 'n/a'} <= "
                              f"{mpmath.nstr(mpmath.mpf(e.bound), 15) if e.bound is not None else 'n/a'} [{e.status}]")
        cert.verdicts[f"{r.name} [{r.target}]"] = str(r.verdict)
    return cert
