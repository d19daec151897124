"""Presenting results: LaTeX and Markdown, tables, plots and the report document.

Every document is generated from the :class:`~rdpsym.derive.result.DivergenceResult` it presents, so
it cannot drift from the derivation. The numerical code a report's plots evaluate comes from
:mod:`rdpsym.compile`.

* :mod:`~rdpsym.report.latex` -- formulas, derivation steps, documents, :func:`~rdpsym.report.latex.parse_back`
* :mod:`~rdpsym.report.markdown` -- the same in Markdown
* :mod:`~rdpsym.report.table` -- Table II rows (Markdown and LaTeX)
* :mod:`~rdpsym.report.plots` -- Figures 1 and 2 and the conversion plot (matplotlib, imported lazily)
* :mod:`~rdpsym.report.report` -- the report on one mechanism
"""
