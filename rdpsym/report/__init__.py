"""Presenting results: LaTeX and Markdown, tables, plots and the report document.

Every document is generated from the :class:`~rdpsym.derive.result.DivergenceResult` it presents, so
it cannot drift from the derivation. The numerical code a report's plots evaluate comes from
:mod:`rdpsym.compile`.

* :mod:`~rdpsym.report.latex` -- formulas, derivation steps, documents, :func:`~rdpsym.report.latex.parse_back`
* :mod:`~rdpsym.report.markdown` -- the same in Markdown
* :mod:`~rdpsym.report.paper` -- formulas as a paper prints them: display forms, line breaks, the cases display
* :mod:`~rdpsym.report.paper_report` -- the LaTeX statement (a fragment to ``\\input``) and standalone document
* :mod:`~rdpsym.report.derivation` -- the derivation as mathematics, from the provenance's step records
* :mod:`~rdpsym.report.table` -- Table II rows (Markdown, booktabs LaTeX, JSON)
* :mod:`~rdpsym.report.plots` -- Figures 1 and 2 and the conversion plot (matplotlib, imported lazily)
* :mod:`~rdpsym.report.report` -- the report on one mechanism
"""
