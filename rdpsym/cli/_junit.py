"""JUnit XML of a regression run (``rdpsym regress --junit FILE``), for CI systems that read test reports.

One ``<testsuite name="rdpsym regress">`` with one ``<testcase>`` per registry entry (``classname`` is
the registry file's stem, ``name`` the entry, ``time`` its seconds). A regression (the formula or its
derivation is wrong) is a ``<failure>``; an inconclusive entry (the independent check gave no answer)
is an ``<error>``: never a pass, since what was not computed counts against the entry. Each case's
``<system-out>`` has the verdict, the derivation status, the independent numerics and the source.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Sequence

__all__ = ["junit_xml", "write_junit"]


def junit_xml(rows: Sequence, suite: str = "rdpsym regress") -> ET.ElementTree:
    """The JUnit tree of regression ``rows`` (:class:`rdpsym.regress.RegressionRow`)."""
    fails = sum(r.label == "fail" for r in rows)
    errors = sum(r.label == "inconclusive" for r in rows)
    root = ET.Element("testsuites", tests=str(len(rows)), failures=str(fails), errors=str(errors))
    ts = ET.SubElement(root, "testsuite", name=suite, tests=str(len(rows)), failures=str(fails), errors=str(errors),
                       skipped="0", time=f"{sum(r.seconds for r in rows):.3f}")
    for r in rows:
        stem = Path(str(getattr(r, "file", "") or "registry")).stem or "registry"
        case = ET.SubElement(ts, "testcase", classname=f"rdpsym.regress.{stem}", name=str(r.name),
                             time=f"{r.seconds:.3f}")
        message = f"{r.verdict}: {r.detail}" if r.detail else str(r.verdict)
        if r.label == "fail":
            ET.SubElement(case, "failure", message=message[:500], type="regression").text = str(r.detail or r.verdict)
        elif r.label == "inconclusive":
            ET.SubElement(case, "error", message=message[:500], type="inconclusive").text = str(r.detail or r.verdict)
        ET.SubElement(case, "system-out").text = (f"derivation: {r.status}\nverdict: {r.verdict}\n"
                                                  f"independent numerics: {r.independent}\nsource: {r.source}")
    ET.indent(root)
    return ET.ElementTree(root)


def write_junit(rows: Sequence, path) -> Path:
    """Write :func:`junit_xml` of ``rows`` to ``path`` (UTF-8, with the XML declaration)."""
    path = Path(path)
    junit_xml(rows).write(path, encoding="utf-8", xml_declaration=True)
    return path
