"""Numerically stable, vectorised float code generated from a derivation result.

``generate_source(result)`` turns the sympy closed form of a :class:`~rdpsym.derive.result.DivergenceResult`
into Python source that imports only numpy; ``to_numpy(result)`` executes that same source and returns the
function, so the code a user pastes and the code rdpsym runs are one text.

Nothing here is written per mechanism. The generator walks the expression tree:

* ``log`` of a sum is emitted as a (signed) log-sum-exp over the logarithms of the summands, each taken
  in log space (``log(alpha * exp(y)) -> log(alpha) + y``, ``log(p**alpha) -> alpha*log(p)``), so
  ``exp((alpha-1)/b)`` never overflows (Mironov 2017, Prop. 6 at b = 1e-4, alpha = 1e6);
  ``log(1 + x)`` becomes ``log1p(x)`` and ``exp(y) - 1`` becomes ``expm1(y)``.
* Where the closed form is 0/0 or loses digits, Taylor series computed by sympy take over:
  - around alpha = 1 (the form ``log(...)/(alpha-1)``; the series starts at the KL divergence),
  - around every exceptional point (Laplace at alpha = 1/2),
  - around each parameter boundary where the divergence tends to 0 (Laplace as b -> oo, randomized
    response as p -> 1/2): there every term of the closed form is O(1) while the value is O(1/b^2), and
    no float evaluation of the closed form can be accurate. The coefficients of these series are
    polynomials in alpha without cancellation.
  At run time a series is used at a point only where its last two terms are below 1e-17 of its value
  (the truncation error is then far below a unit in the last place); elsewhere the closed form is used.
  A series around an order is used only where the closed form's estimated rounding error
  (:mod:`~rdpsym.compile.errors`) says it lost digits; where the series is cheap it is computed first:
  where the two agree to a few roundings the closed form stays, where they agree to 1e-13 the series
  serves (the value is then within 1e-13 of the better of two independent evaluations), and the
  estimate runs only where they disagree by more.
* Speed on grids (orders x parameter values): inputs keep their own shapes (an order-only term is
  computed once per row); the grid is evaluated in cache-sized blocks, with what does not depend on the
  block (coefficients in the parameters alone, a boundary series' screen and coefficient matrix)
  computed once per call; a series over a grid is one matrix product of its coefficients by the powers
  of its variable, on the rectangle of the block that holds its points (written in place); the error
  estimate names each subexpression once.
* alpha = 1 routes to ``result.kl``, alpha = oo to ``result.max_divergence``, exceptional orders to their
  limits, and the value is +inf wherever ``result.conditions`` fail. Parameters outside their domains and
  NaN raise ``ValueError`` naming the argument.
* Orders where the closed form is singular and that depend on the parameters (a factor of degree 1 in
  alpha such as alpha (b1 + b2) - b1 for two Laplace scales, see :class:`_Factor`) are found in the
  closed form itself; the factor is evaluated in double-double arithmetic (next to its root its float
  value would be rounding error). Where the singularity is removable, a Taylor series around the
  parameter-dependent root (Taylor-mode arithmetic, the vanishing sums deflated) serves the points
  next to it; where neither the series nor the closed form (by its estimated cancellation error) is
  accurate, the value is NaN and a ``RuntimeWarning`` gives the count: never a wrong finite number.
  Only then is NaN returned.

Accuracy and speed are measured by ``benchmarks/numerics.py``.

The modules: :mod:`~rdpsym.compile.emitter` (one expression as stable numpy code),
:mod:`~rdpsym.compile.forms` (evaluation forms), :mod:`~rdpsym.compile.series` (symbolic series),
:mod:`~rdpsym.compile.taylor` (Taylor-mode series), :mod:`~rdpsym.compile.factors` (parameter-dependent
singular orders), :mod:`~rdpsym.compile.evaluator` (the generated dispatch),
:mod:`~rdpsym.compile.runtime` (the run-time helpers, copied into every generated module),
:mod:`~rdpsym.compile.generate` (the entry points) and :mod:`~rdpsym.compile.store` (the disk caches).
"""

from .emitter import CodegenError, doc_text, identifier
from .factors import MOVING_TRUST, MOVING_WINDOW, singular_factors
from .forms import evaluation_form
from .generate import generate_source, to_numpy
from .series import SERIES_TERMS, SERIES_TOLERANCE, Series, series_expansions

__all__ = [
    "MOVING_TRUST",
    "MOVING_WINDOW",
    "SERIES_TERMS",
    "SERIES_TOLERANCE",
    "CodegenError",
    "Series",
    "doc_text",
    "evaluation_form",
    "generate_source",
    "identifier",
    "series_expansions",
    "singular_factors",
    "to_numpy",
]
