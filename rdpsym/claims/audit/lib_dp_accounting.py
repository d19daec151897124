r"""Google's dp_accounting: the functions of ``dp_accounting.rdp.rdp_privacy_accountant`` and the DpEvents.

Every function the module defines and every ``DpEvent`` subclass of ``dp_accounting.dp_event`` is in
:func:`inventory`. Events are audited through ``RdpAccountant(orders=[alpha]).compose(event).rdp``, the
module's formulas also directly. Mappings (identities of the mechanisms):

* ``LaplaceDpEvent(b)`` and ``_laplace_rdp(eps, alpha)`` with ``eps = 1/b`` (Mironov 2017, Prop. 6);
* randomized response, ``REPLACE_ONE``: the true bucket with probability ``1 - noise + noise/k``, each
  other with ``noise/k``; with k = 2 and ``noise = 2(1 - p)`` that is ``randomized_response(p)``, and for
  k buckets ``noise = k/(e^epsilon + k - 1)`` is ``k_randomized_response(k, epsilon)``;
* ``ZCDpEvent(rho)`` with ``rho = 1/(2 sigma^2)`` (the Gaussian is exactly rho-zCDP, Bun & Steinke 2016,
  Prop. 1.6); ``SelfComposedDpEvent(GaussianDpEvent(sqrt(3) sigma), 3)`` and ``ComposedDpEvent`` of two
  Gaussians at ``sqrt(2) sigma``: one Gaussian at sigma (RDP adds up under composition, Mironov 2017, Prop. 1);
* ``PoissonSampledDpEvent(q, GaussianDpEvent(sigma))`` and ``_compute_rdp_poisson_subsampled_gaussian``:
  ``rdpsym.subsample(gaussian, q)`` (Mironov, Talwar & Zhang 2019: exact, "==");
* ``SampledWithoutReplacementDpEvent``: ``rdpsym.subsample(gaussian, q, scheme="without_replacement")``,
  an upper bound ("<=": Wang, Balle & Kasiviswanathan 2019, Thm. 27).
"""

from __future__ import annotations

import inspect

import sympy as sp

from .accountants import EventKind
from .core import AuditCase, Inventory, Uncovered, defined_in

__all__ = ["inventory"]

LIB = "dp_accounting"
M = "rdp_privacy_accountant"
#: see lib_autodp.SUBSAMPLED: rdpsym's subsampled curve is numeric and slow beyond a few hundred
SUBSAMPLED = (1, 256)
RR2 = {"noise": "2*(1-p)"}
RRK = {"noise": "k/(exp(epsilon)+k-1)"}


def _cases(dpa, ra) -> list[AuditCase]:
    NR = dpa.NeighboringRelation

    def acc(event, alpha, relation=None):
        kw = {} if relation is None else {"neighboring_relation": relation}
        a = ra.RdpAccountant(orders=[alpha], **kw)
        a.compose(event)
        return float(a.rdp[0])

    def named(name, fn):
        fn.__name__ = name
        return fn

    ev = {
        "GaussianDpEvent": named("GaussianDpEvent", lambda alpha, sigma: acc(dpa.GaussianDpEvent(sigma), alpha)),
        "LaplaceDpEvent": named("LaplaceDpEvent", lambda alpha, b: acc(dpa.LaplaceDpEvent(b), alpha)),
        "ZCDpEvent": named("ZCDpEvent", lambda alpha, rho: acc(dpa.ZCDpEvent(rho), alpha)),
        "SelfComposedDpEvent": named("SelfComposedDpEvent", lambda alpha, s: acc(
            dpa.SelfComposedDpEvent(dpa.GaussianDpEvent(s), 3), alpha)),
        "ComposedDpEvent": named("ComposedDpEvent", lambda alpha, s: acc(
            dpa.ComposedDpEvent([dpa.GaussianDpEvent(s), dpa.GaussianDpEvent(s)]), alpha)),
        "PoissonSampledDpEvent": named("PoissonSampledDpEvent", lambda alpha, q, sigma: acc(
            dpa.PoissonSampledDpEvent(q, dpa.GaussianDpEvent(sigma)), alpha)),
    }
    out = []

    def add(covers, function, mech, fn, orders=(None,), *, rng=(1, sp.oo), symbols=None, relation="==", sub=None,
            mapping=""):
        for order in orders:
            out.append(AuditCase(LIB, function, mech, fn, order, relation, rng, "keywords", None, symbols, None, sub,
                                 mapping, covers))

    add("dp_event.GaussianDpEvent", "RdpAccountant + GaussianDpEvent", "gaussian", ev["GaussianDpEvent"], (None, sp.oo))
    add("dp_event.LaplaceDpEvent", "RdpAccountant + LaplaceDpEvent", "laplace", ev["LaplaceDpEvent"])
    add("dp_event.ZCDpEvent", "RdpAccountant + ZCDpEvent", "gaussian", ev["ZCDpEvent"],
        symbols={"rho": "1/(2*sigma**2)"}, mapping="rho = 1/(2 sigma^2)")
    add("dp_event.SelfComposedDpEvent", "RdpAccountant + SelfComposedDpEvent(Gaussian, 3)", "gaussian",
        ev["SelfComposedDpEvent"], symbols={"s": "sqrt(3)*sigma"}, mapping="3 x Gaussian(sqrt(3) sigma)")
    add("dp_event.ComposedDpEvent", "RdpAccountant + ComposedDpEvent([Gaussian, Gaussian])", "gaussian",
        ev["ComposedDpEvent"], symbols={"s": "sqrt(2)*sigma"}, mapping="2 x Gaussian(sqrt(2) sigma)")
    add("dp_event.PoissonSampledDpEvent", "RdpAccountant + PoissonSampledDpEvent(q, Gaussian)", "gaussian",
        ev["PoissonSampledDpEvent"], rng=SUBSAMPLED, sub="poisson")

    def rr_event(k_fixed):
        def fn(alpha, noise, k=2):
            k = k_fixed or int(round(k))
            return acc(dpa.RandomizedResponseDpEvent(noise, k), alpha, NR.REPLACE_ONE)
        fn.__name__ = "RandomizedResponseDpEvent"
        if k_fixed:
            fn.__signature__ = inspect.signature(lambda alpha, noise: None)
        return fn

    add("dp_event.RandomizedResponseDpEvent", "RdpAccountant(REPLACE_ONE) + RandomizedResponseDpEvent(k=2)",
        "randomized_response", rr_event(2), (None, sp.oo), symbols=RR2, mapping="noise = 2(1-p), k = 2")
    add("dp_event.RandomizedResponseDpEvent", "RdpAccountant(REPLACE_ONE) + RandomizedResponseDpEvent(k)",
        "k_randomized_response", rr_event(0), (None, sp.oo), symbols=RRK, mapping="noise = k/(e^epsilon + k - 1)")

    def wor(alpha, q, sigma):
        n = 10**6  # the event takes sizes; q = m/n
        return acc(dpa.SampledWithoutReplacementDpEvent(n, max(1, round(q * n)), dpa.GaussianDpEvent(sigma)), alpha,
                   NR.REPLACE_ONE)

    add("dp_event.SampledWithoutReplacementDpEvent", "RdpAccountant(REPLACE_ONE) + SampledWithoutReplacementDpEvent",
        "gaussian", named("SampledWithoutReplacementDpEvent", wor), rng=SUBSAMPLED, relation="<=",
        sub="without_replacement", mapping="q = m/n, n = 10^6")

    # the module's formulas, called directly
    add(f"{M}._laplace_rdp", "_laplace_rdp(eps, alpha)", "laplace",
        named("_laplace_rdp", lambda alpha, eps: ra._laplace_rdp(eps, alpha)), (None, 1), symbols={"eps": "1/b"},
        mapping="eps = 1/b")
    add(f"{M}._compute_rdp_poisson_subsampled_gaussian", "_compute_rdp_poisson_subsampled_gaussian(q, sigma, [alpha])",
        "gaussian", named("_compute_rdp_poisson_subsampled_gaussian", lambda alpha, q, sigma: float(
            ra._compute_rdp_poisson_subsampled_gaussian(q, sigma, [alpha])[0])), rng=SUBSAMPLED, sub="poisson")
    add(f"{M}._compute_rdp_sample_wor_gaussian", "_compute_rdp_sample_wor_gaussian(q, sigma, [alpha])", "gaussian",
        named("_compute_rdp_sample_wor_gaussian", lambda alpha, q, sigma: float(
            ra._compute_rdp_sample_wor_gaussian(q, sigma, [alpha])[0])), rng=SUBSAMPLED, relation="<=",
        sub="without_replacement")
    add(f"{M}._randomized_response_rdp_replace_one", "_randomized_response_rdp_replace_one(noise, 2, alpha)",
        "randomized_response", named("_randomized_response_rdp_replace_one", lambda alpha, noise: float(
            ra._randomized_response_rdp_replace_one(noise, 2, alpha))), (None, sp.oo), symbols=RR2,
        mapping="noise = 2(1-p), k = 2")
    return out


_HELPERS = {
    "_log_add": "log(e^x + e^y)", "_log_sub_sign": "signed log(e^x - e^y)", "_log_comb": "log binomial",
    "_compute_log_a_int": "log A_alpha, integer orders (of _compute_rdp_poisson_subsampled_gaussian)",
    "_compute_log_a_frac": "log A_alpha, fractional orders (of _compute_rdp_poisson_subsampled_gaussian)",
    "_compute_log_a": "dispatch of log A_alpha (of _compute_rdp_poisson_subsampled_gaussian)",
    "_log_erfc": "log erfc", "_stable_inplace_diff_in_log": "forward differences in log space",
    "_get_forward_diffs": "forward differences (of _compute_rdp_sample_wor_gaussian)",
    "_compute_rdp_sample_wor_gaussian_scalar": "one order of _compute_rdp_sample_wor_gaussian",
    "_compute_rdp_sample_wor_gaussian_int": "integer orders of _compute_rdp_sample_wor_gaussian",
    "_effective_gaussian_noise_multiplier": "the noise of composed Gaussian events (audited through the events)",
    "_compute_randomized_response_rdp": "dispatch to the two randomized-response formulas (audited through the event)",
    "_expm1_over_x": "(e^x - 1)/x (of _compute_rdp_repeat_and_select)",
    "_logx_over_xm1": "log(x)/(x - 1) (of _compute_rdp_repeat_and_select)",
    "_truncated_negative_binomial_mean": "of _compute_rdp_repeat_and_select",
    "_gamma_truncated_negative_binomial": "of _compute_rdp_repeat_and_select",
}
_NOT_COVERED = {
    f"{M}.compute_delta": ("conversion", "RDP to delta at a given epsilon (Canonne et al. 2020), not an RDP function"),
    f"{M}.compute_epsilon": ("conversion", "RDP to epsilon at a given delta, not an RDP function"),
    f"{M}._compute_rdp_single_epoch_tree_aggregation": ("not covered", "tree aggregation (Kairouz et al. 2021): "
                                                                        "no rdpsym mechanism"),
    f"{M}._compute_rdp_repeat_and_select": ("not covered", "repeat-and-select (Papernot & Steinke 2022, Thm. 2): no "
                                                           "rdpsym combinator"),
    f"{M}._randomized_response_rdp_replace_special": ("not covered", "REPLACE_SPECIAL relation (the output against "
                                                                     "the uniform one): no rdpsym mechanism"),
    f"{M}.RdpAccountant": ("helper", "the accountant: every event below is audited through it"),
    "dp_event.DpEvent": ("helper", "the base class"),
    "dp_event.NoOpDpEvent": ("not covered", "releases nothing: RDP 0, no mechanism"),
    "dp_event.NonPrivateDpEvent": ("not covered", "no privacy: RDP oo, no mechanism"),
    "dp_event.UnsupportedDpEvent": ("not covered", "a placeholder the accountant rejects"),
    "dp_event.SingleEpochTreeAggregationDpEvent": ("not covered", "tree aggregation: no rdpsym mechanism"),
    "dp_event.RepeatAndSelectDpEvent": ("not covered", "repeat-and-select: no rdpsym combinator"),
    "dp_event.DiscreteLaplaceDpEvent": ("not covered", "not supported by RdpAccountant (PLD accountant only)"),
    "dp_event.MixtureOfGaussiansDpEvent": ("not covered", "not supported by RdpAccountant (PLD accountant only)"),
    "dp_event.SampledWithReplacementDpEvent": ("not covered", "not supported by RdpAccountant"),
    "dp_event.TruncatedSubsampledGaussianDpEvent": ("not covered", "not supported by RdpAccountant (PLD only)"),
}


def inventory() -> Inventory:
    """dp_accounting's inventory (``ImportError`` when dp_accounting is not installed)."""
    from importlib.metadata import version

    import dp_accounting as dpa
    from dp_accounting import dp_event
    from dp_accounting.rdp import rdp_privacy_accountant as ra

    defined = defined_in(ra, M, ("function", "class"))
    defined |= {f"dp_event.{n}" for n, c in vars(dp_event).items()
                if inspect.isclass(c) and issubclass(c, dp_event.DpEvent) and c.__module__ == dp_event.__name__}
    uncovered = [Uncovered(LIB, f"{M}.{n}", "helper", r) for n, r in _HELPERS.items()]
    uncovered += [Uncovered(LIB, n, k, r) for n, (k, r) in _NOT_COVERED.items()]
    # a name the module does not define (any more) is not listed: the inventory is of this version
    uncovered = [u for u in uncovered if u.covers in defined]
    return Inventory(LIB, version("dp-accounting"), (ra.__name__, dp_event.__name__), _cases(dpa, ra), uncovered,
                     frozenset(defined))


# -- the accountants (rdpsym.claims.audit.accountants) ---------------------------------------------------
DELTAS = (1e-3, 1e-6)
EPSILONS = (0.5, 2.0)


def _compositions():
    from .accountants import Composition, EventKind, self_compositions

    add = (self_compositions(EventKind.GAUSSIAN, sigma=2.0) + self_compositions(EventKind.LAPLACE, b=2.0)
           + self_compositions(EventKind.POISSON_GAUSSIAN, q=0.01, sigma=1.1)
           + [Composition(((EventKind.GAUSSIAN, (("sigma", 5.0),), 10), (EventKind.LAPLACE, (("b", 10.0),), 5),
                           ("poisson_gaussian", (("q", 0.01), ("sigma", 1.0)), 40)))])
    # replace-one: a GaussianDpEvent's noise multiplier is s / C for values of norm at most C, so replacing one
    # value moves the sum by up to 2C (rdpsym reads it so, as the contract says)
    rep = (self_compositions(EventKind.GAUSSIAN, "replace_one", sigma=2.0)
           + self_compositions(EventKind.RANDOMIZED_RESPONSE, "replace_one", noise=0.5)
           + self_compositions(EventKind.WOR_GAUSSIAN, "replace_one", n=1000, m=10, sigma=1.1)
           + [Composition(((EventKind.GAUSSIAN, (("sigma", 2.0),), 10), (EventKind.RANDOMIZED_RESPONSE, (("noise", 0.5),), 10)),
                          "replace_one")])
    return add + rep


def _event(dpa, comp):
    parts = []
    for kind, params, count in comp.events:
        p = dict(params)
        if kind is EventKind.GAUSSIAN:
            e = dpa.GaussianDpEvent(p["sigma"])
        elif kind is EventKind.LAPLACE:
            e = dpa.LaplaceDpEvent(p["b"])
        elif kind is EventKind.RANDOMIZED_RESPONSE:
            e = dpa.RandomizedResponseDpEvent(p["noise"], 2)
        elif kind is EventKind.POISSON_GAUSSIAN:
            e = dpa.PoissonSampledDpEvent(p["q"], dpa.GaussianDpEvent(p["sigma"]))
        else:
            e = dpa.SampledWithoutReplacementDpEvent(int(p["n"]), int(p["m"]), dpa.GaussianDpEvent(p["sigma"]))
        parts.append(e if count == 1 else dpa.SelfComposedDpEvent(e, count))
    return parts[0] if len(parts) == 1 else dpa.ComposedDpEvent(parts)


def accountant_cases() -> list:
    """dp_accounting's RdpAccountant and PLDAccountant (value_discretization_interval 1e-4, pessimistic) on
    self-compositions of 1, 2, 10 and 40 of the events each supports, and mixes, at delta 1e-3 and 1e-6 and
    epsilon 0.5 and 2 (``ImportError`` when dp_accounting is not installed)."""
    import dp_accounting as dpa
    from dp_accounting.pld import pld_privacy_accountant as pa
    from dp_accounting.rdp import rdp_privacy_accountant as ra

    from .accountants import AccountantCase

    NR = dpa.NeighboringRelation
    made: dict = {}

    def accountant(kind, comp):
        key = (kind, comp)
        if key not in made:
            rel = NR.ADD_OR_REMOVE_ONE if comp.relation == "add_remove" else NR.REPLACE_ONE
            acc = (ra.RdpAccountant(neighboring_relation=rel) if kind == "rdp" else
                   pa.PLDAccountant(rel, value_discretization_interval=1e-4))
            acc.compose(_event(dpa, comp))
            made[key] = acc
        return made[key]

    cases = []
    for kind, name in (("rdp", "RdpAccountant"), ("pld", "PLDAccountant")):
        tol_eps, note = ((0.0, "none stated: an RDP conversion claims an upper bound") if kind == "rdp" else
                         (1e-4, "value_discretization_interval, the grid step of its losses"))
        for comp in _compositions():
            if kind == "pld" and any(k == "wor_gaussian" for k, _, _ in comp.events):
                continue  # the PLD accountant does not support sampling without replacement
            for d in DELTAS:
                cases.append(AccountantCase(LIB, name, comp, "epsilon", d,
                                            (lambda kind=kind, comp=comp, d=d: accountant(kind, comp).get_epsilon(d)),
                                            tol_eps, note))
            for e in EPSILONS:
                cases.append(AccountantCase(LIB, name, comp, "delta", e,
                                            (lambda kind=kind, comp=comp, e=e: accountant(kind, comp).get_delta(e)),
                                            0.0, "none stated"))
    return cases
