"""Deprecated: :mod:`rdpsym.export` is split into :mod:`rdpsym.compile` (numpy code generation) and
:mod:`rdpsym.report` (LaTeX, Markdown, tables, plots, reports). The modules here re-export the same
names for one release and warn on import."""
