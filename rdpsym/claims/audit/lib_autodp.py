r"""autodp's RDP functions (``autodp.rdp_bank``) and mechanisms (``mechanism_zoo``, ``transformer_zoo``).

Every function of ``rdp_bank`` and every class of ``mechanism_zoo`` / ``transformer_zoo`` is in
:func:`inventory`: audited (``rdp_bank`` functions are called as ``fn(params_dict, alpha)``; mechanism
classes through their ``RenyiDP(alpha)``) or listed with the reason it is not. The mappings, each an
identity of the mechanism, not a formula:

* ``RDP_zCDP`` / ``RDP_truncatedCDP``: the Gaussian mechanism is exactly ``1/(2 sigma^2)``-zCDP
  (Bun & Steinke 2016, arXiv:1605.02065, Prop. 1.6), and ``(1/(2 sigma^2), oo)``-tCDP;
* ``RDP_pureDP`` (Bun & Steinke 2016, Lemma 1.4 / proof of Prop. 3.3 with the sinh form): the tight RDP
  of eps-DP, attained by randomized response with ``eps = log(p/(1-p))``; checked against
  ``randomized_response`` and against ``pure_dp(epsilon)``;
* ``RDP_inde_pate_gaussian``: GNMax's vote histogram changes in two counts, L2 sensitivity sqrt(2)
  (Papernot et al. 2018, arXiv:1802.08908, Sect. 4.1): the Gaussian at sensitivity sqrt(2);
* ``RDP_noisy_screen``: the divergence of two Bernoullis; with ``logp = log p``, ``logq = log(1-p)``
  that is randomized response;
* ``pRDP_diag_gaussian``: two 1-D Gaussians of variance ``sigma^2``, means 0 and 1;
* ``pRDP_expfamily``: the same pair as an exponential family, ``A(eta) = sigma^2 eta^2 / 2``,
  ``eta1 = 0``, ``eta2 = 1/sigma^2``, mean ``mu = 0`` (Gil 2011, Thm. 1.2.19);
* ``RDP_subsampled_pureDP``: an upper bound for every Poisson-subsampled eps-DP mechanism (Wang, Balle &
  Kasiviswanathan 2019 / Zhu & Wang 2019), so for subsampled randomized response with ``eps = log(p/(1-p))``.
"""

from __future__ import annotations

import functools
import math

import sympy as sp

from .core import AuditCase, Inventory, Uncovered, defined_in

__all__ = ["inventory"]

LIB = "autodp"
ALL = (0, sp.oo)
#: orders of the subsampled cases: rdpsym's subsampled curve is numeric, and beyond a few hundred a point
#: takes longer than its 15 s limit (such points would only make the verdict inconclusive)
SUBSAMPLED = (1, 256)
RR_EPS = {"eps": "log(p/(1-p))"}


def _bank_cases(rb) -> list[AuditCase]:
    out = []

    def add(fn, mech, args, orders, *, rng=(1, sp.oo), symbols=None, fixed=None, relation="==", sub=None,
            mapping="", name=None, covers=None, below=None):
        for order in orders:
            out.append(AuditCase(LIB, name or f"rdp_bank.{fn.__name__}", mech, fn, order, relation,
                                 rng if order is None else (1, sp.oo), "params_dict", args, symbols, fixed, sub,
                                 mapping, covers or f"rdp_bank.{fn.__name__}"))
        if below is not None:  # a separate case for alpha in (0, 1): the function states something else there
            out.append(AuditCase(LIB, (name or f"rdp_bank.{fn.__name__}") + " (alpha < 1)", mech, fn, None, below,
                                 (0, 1), "params_dict", args, symbols, fixed, sub, mapping,
                                 covers or f"rdp_bank.{fn.__name__}"))

    add(rb.RDP_gaussian, "gaussian", ("sigma",), (None, 1, sp.oo), rng=ALL)
    add(rb.RDP_laplace, "laplace", ("b",), (None, 1, sp.oo), rng=ALL)
    add(rb.RDP_randresponse, "randomized_response", ("p",), (None, 1, sp.oo), rng=ALL)
    add(rb.RDP_zCDP, "gaussian", ("rho",), (None, 1, sp.oo), rng=ALL, symbols={"rho": "1/(2*sigma**2)"},
        mapping="rho = 1/(2 sigma^2): the Gaussian is exactly rho-zCDP")
    tcdp = functools.wraps(rb.RDP_truncatedCDP)(lambda params, alpha: rb.RDP_truncatedCDP({**params, "w": math.inf},
                                                                                          alpha))
    add(tcdp, "gaussian", ("rho",), (None, 1), rng=ALL, symbols={"rho": "1/(2*sigma**2)"},
        mapping="rho = 1/(2 sigma^2), w = oo", covers="rdp_bank.RDP_truncatedCDP", name="rdp_bank.RDP_truncatedCDP")
    for mech, symbols in (("randomized_response", RR_EPS), ("pure_dp", {"eps": "epsilon"})):
        add(rb.RDP_pureDP, mech, ("eps",), (None, 1, sp.oo), symbols=symbols, below="<=",
            mapping="eps = " + symbols["eps"], name=f"rdp_bank.RDP_pureDP vs {mech}")
    # sensitivity sqrt(2) at noise s is sensitivity 1 at noise s/sqrt(2) (the RDP depends on sensitivity/sigma)
    add(rb.RDP_inde_pate_gaussian, "gaussian", ("sigma",), (None,), rng=ALL, symbols={"sigma": "sqrt(2)*sigma"},
        mapping="sigma_lib = sqrt(2) sigma: L2 sensitivity sqrt(2) (two vote counts change by 1)")
    add(rb.RDP_noisy_screen, "randomized_response", ("logp", "logq"), (None, 1, sp.oo), rng=ALL,
        symbols={"logp": "log(p)", "logq": "log(1-p)"}, mapping="logp = log(p), logq = log(1-p)")

    def diag_gaussian(alpha, sigma):
        import numpy as np

        v = np.array([sigma**2])
        return float(rb.pRDP_diag_gaussian({"mu1": np.array([0.0]), "mu2": np.array([1.0]), "sigma1": v,
                                            "sigma2": v}, alpha))

    out.append(AuditCase(LIB, "rdp_bank.pRDP_diag_gaussian", "gaussian", diag_gaussian, None, "==", ALL,
                         mapping="mu1 = 0, mu2 = 1, variances sigma^2"))

    def expfamily(alpha, sigma):
        s2 = sigma**2
        return float(rb.pRDP_expfamily({"eta1": 0.0, "eta2": 1 / s2, "A": lambda e: s2 * e * e / 2, "mu": 0.0}, alpha))

    for order in (None, 1):
        out.append(AuditCase(LIB, "rdp_bank.pRDP_expfamily", "gaussian", expfamily, order,
                             mapping="A(eta) = sigma^2 eta^2/2, eta1 = 0, eta2 = 1/sigma^2, mu = 0"))
    sub_pure = functools.wraps(rb.RDP_subsampled_pureDP)(lambda params, alpha: rb.RDP_subsampled_pureDP(params, alpha))
    add(sub_pure, "randomized_response", ("eps", "prob"), (None,), rng=SUBSAMPLED, symbols={**RR_EPS, "prob": "q"},
        relation="<=",
        sub="poisson", below="<=", mapping="eps = log(p/(1-p)), prob = q", covers="rdp_bank.RDP_subsampled_pureDP",
        name="rdp_bank.RDP_subsampled_pureDP")
    return out


_BANK_UNCOVERED = {
    "stable_log_diff_exp": ("helper", "numerical helper (log(1 - exp(x)))"),
    "RDP_independent_noisy_screen": ("not covered", "Private-kNN noisy screening, data-independent worst case over "
                                                    "vote counts: no rdpsym mechanism"),
    "RDP_depend_pate_gaussian": ("not covered", "PATE GNMax data-dependent bound (needs the vote histogram's "
                                                "log q): no rdpsym mechanism"),
    "RDP_expfamily": ("not covered", "bound for an exponential family from user-supplied smoothness and Lipschitz "
                                     "functions L, B: no mechanism to derive"),
    "RDP_svt_laplace": ("not covered", "sparse vector technique (Laplace): no rdpsym mechanism"),
    "RDP_gaussian_svt_cgreater1": ("not covered", "sparse vector technique (Gaussian, c > 1): no rdpsym mechanism"),
    "RDP_gaussian_svt_c1": ("not covered", "sparse vector technique (Gaussian, c = 1): no rdpsym mechanism"),
    "pRDP_asymp_subsampled_gaussian": ("not covered", "asymptotic approximation for one data set (Wang et al. 2018, "
                                                      "Example 19): neither the RDP nor a bound"),
    "pRDP_asymp_subsampled_gaussian_best_case": ("not covered", "approximation for a best-case data set (Example 20):"
                                                                " neither the RDP nor a bound"),
}


@functools.lru_cache(maxsize=4096)
def _zoo(cls_name: str, *args):
    from autodp import mechanism_zoo as mz

    if cls_name == "SubsampleGaussianMechanism":
        return mz.SubsampleGaussianMechanism({"prob": args[0], "sigma": args[1], "coeff": 1})
    if cls_name == "ComposedGaussianMechanism":
        return mz.ComposedGaussianMechanism({"sigma": args[0], "coeff": 4})
    if cls_name == "NoisySGD_Mechanism":
        return mz.NoisySGD_Mechanism(args[0], args[1], 1)
    if cls_name == "NoisyGD_Mechanism":
        import numpy as np

        return mz.NoisyGD_Mechanism(np.array([args[0] * math.sqrt(2)] * 2))
    if cls_name == "NoisyScreenMechanism":
        return mz.NoisyScreenMechanism({"logp": args[0], "logq": args[1]})
    return getattr(mz, cls_name)(*args)


@functools.lru_cache(maxsize=4096)
def _sampled(prob: float, sigma: float, poisson: bool):
    from autodp import mechanism_zoo as mz, transformer_zoo as tz

    base = mz.GaussianMechanism(sigma)
    if not poisson:
        base.neighboring = "replace_one"  # autodp asserts the relation that goes with the scheme
    return tz.AmplificationBySampling(PoissonSampling=poisson)(base, prob, improved_bound_flag=True)


def _zoo_cases() -> list[AuditCase]:
    def renyi(cls_name, *names):
        def fn(alpha, *values):  # called positionally, in the order of ``names``
            return float(_zoo(cls_name, *(float(v) for v in values)).RenyiDP(alpha))
        fn.__name__ = f"{cls_name}.RenyiDP"
        return fn

    out = []

    def add(cls_name, mech, names, *, symbols=None, relation="==", sub=None, mapping="", orders=(None,), rng=(1, sp.oo)):
        for order in orders:
            out.append(AuditCase(LIB, f"mechanism_zoo.{cls_name}(...).RenyiDP", mech, renyi(cls_name, *names), order,
                                 relation, rng, "positional", names, symbols, None, sub, mapping,
                                 f"mechanism_zoo.{cls_name}"))

    add("GaussianMechanism", "gaussian", ("sigma",))
    add("ExactGaussianMechanism", "gaussian", ("sigma",))
    add("LaplaceMechanism", "laplace", ("b",))
    add("RandresponseMechanism", "randomized_response", ("p",))
    add("zCDP_Mechanism", "gaussian", ("rho",), symbols={"rho": "1/(2*sigma**2)"}, mapping="rho = 1/(2 sigma^2)")
    add("PureDP_Mechanism", "randomized_response", ("eps",), symbols=RR_EPS, relation="<=",
        mapping="eps = log(p/(1-p)): an upper bound for every eps-DP mechanism")
    add("ExponentialMechanism", "exponential_mechanism", ("eps",), symbols={"eps": "epsilon"}, relation="<=",
        mapping="eps = epsilon: the bounded-range zCDP bound eps^2/8 (Cesar & Rogers 2021)")
    add("DiscreteGaussianMechanism", "discrete_gaussian", ("sigma",), relation="<=",
        mapping="the discrete Gaussian is 1/(2 sigma^2)-zCDP (Canonne, Kamath & Steinke 2020, Thm. 4)")
    add("SubsampleGaussianMechanism", "gaussian", ("prob", "sigma"), symbols={"prob": "q"}, relation="<=",
        sub="poisson", mapping="prob = q, coeff = 1 (autodp's bound: Zhu & Wang 2019)", rng=SUBSAMPLED)
    add("NoisySGD_Mechanism", "gaussian", ("prob", "sigma"), symbols={"prob": "q"}, relation="<=", sub="poisson",
        mapping="prob = q, niter = 1", rng=SUBSAMPLED)
    add("ComposedGaussianMechanism", "gaussian", ("s",), symbols={"s": "2*sigma"},
        mapping="4 compositions at noise 2 sigma = one Gaussian at sigma")
    add("NoisyGD_Mechanism", "gaussian", ("sigma",), mapping="two steps at noise sqrt(2) sigma = one at sigma")
    add("NoisyScreenMechanism", "randomized_response", ("logp", "logq"), symbols={"logp": "log(p)",
        "logq": "log(1-p)"}, mapping="logp = log(p), logq = log(1-p)", orders=(None, sp.oo))

    def sampled(poisson):
        def fn(alpha, prob, sigma):
            return float(_sampled(float(prob), float(sigma), poisson).RenyiDP(alpha))
        fn.__name__ = "AmplificationBySampling(PoissonSampling=%s)(GaussianMechanism).RenyiDP" % poisson
        return fn

    for poisson, scheme in ((True, "poisson"), (False, "without_replacement")):
        out.append(AuditCase(LIB, sampled(poisson).__name__, "gaussian", sampled(poisson), None, "<=", SUBSAMPLED,
                             symbols={"prob": "q"}, subsample=scheme, mapping="prob = q, improved_bound_flag=True",
                             covers="transformer_zoo.AmplificationBySampling"))
    return out


_ZOO_UNCOVERED = {
    "mechanism_zoo.GaussianSVT_Mechanism": ("not covered", "sparse vector technique: no rdpsym mechanism"),
    "mechanism_zoo.LaplaceSVT_Mechanism": ("not covered", "sparse vector technique: no rdpsym mechanism"),
    "mechanism_zoo.StageWiseMechanism": ("not covered", "approximate-DP only (no RDP function)"),
    "transformer_zoo.AmplificationBySampling_pld": ("not covered", "phi-function (PLD) amplification: no RDP function"),
    "transformer_zoo.Composition": ("not covered", "composition of RDP curves (adds them); exercised by "
                                                   "ComposedGaussianMechanism and NoisyGD_Mechanism"),
    "transformer_zoo.ComposeAFA": ("not covered", "composition of phi functions (PLD): no RDP function"),
    "transformer_zoo.ComposeGaussian": ("not covered", "composition of Gaussians into one: exercised by "
                                                       "ComposedGaussianMechanism"),
}


def inventory() -> Inventory:
    """autodp's inventory (``ImportError`` when autodp is not installed)."""
    import autodp
    from autodp import mechanism_zoo, rdp_bank, transformer_zoo

    uncovered = [Uncovered(LIB, f"rdp_bank.{n}", k, r) for n, (k, r) in _BANK_UNCOVERED.items()]
    uncovered += [Uncovered(LIB, n, k, r) for n, (k, r) in _ZOO_UNCOVERED.items()]
    defined = (defined_in(rdp_bank, "rdp_bank") | defined_in(mechanism_zoo, "mechanism_zoo", ("class",))
               | defined_in(transformer_zoo, "transformer_zoo", ("class",)))
    from importlib.metadata import version

    return Inventory(LIB, getattr(autodp, "__version__", None) or version("autodp"),
                     ("autodp.rdp_bank", "autodp.mechanism_zoo", "autodp.transformer_zoo"),
                     _bank_cases(rdp_bank) + _zoo_cases(), uncovered, frozenset(defined))


# -- the accountants (rdpsym.claims.audit.accountants) ---------------------------------------------------
DELTAS = (1e-3, 1e-6)
EPSILONS = (0.5, 2.0)


def accountant_cases() -> list:
    """autodp's accountant (``transformer_zoo.Composition`` of ``mechanism_zoo`` mechanisms, RDP-based
    ``get_approxDP`` and ``get_approx_delta``; Poisson subsampling by ``AmplificationBySampling``) on
    self-compositions of 1, 2, 10 and 40 and a mix, and ``ExactGaussianMechanism`` (one release), at delta
    1e-3 and 1e-6 and epsilon 0.5 and 2."""
    from autodp import mechanism_zoo as mz
    from autodp import transformer_zoo as tz

    from .accountants import AccountantCase, Composition, EventKind, self_compositions

    comps = (self_compositions(EventKind.GAUSSIAN, sigma=2.0) + self_compositions(EventKind.LAPLACE, b=2.0)
             + self_compositions(EventKind.RANDOMIZED_RESPONSE, "replace_one", noise=0.5)
             + self_compositions(EventKind.POISSON_GAUSSIAN, q=0.01, sigma=1.1)
             + [Composition(((EventKind.GAUSSIAN, (("sigma", 5.0),), 10), (EventKind.LAPLACE, (("b", 10.0),), 5),
                             ("poisson_gaussian", (("q", 0.01), ("sigma", 1.0)), 40)))])
    made: dict = {}

    def mechanism(comp):
        if comp not in made:
            mechs, counts = [], []
            for kind, params, count in comp.events:
                p = dict(params)
                if kind is EventKind.GAUSSIAN:
                    m = mz.GaussianMechanism(sigma=p["sigma"])
                elif kind is EventKind.LAPLACE:
                    m = mz.LaplaceMechanism(b=p["b"])
                elif kind is EventKind.RANDOMIZED_RESPONSE:
                    m = mz.RandresponseMechanism(p=1 - p["noise"] / 2)
                else:
                    m = tz.AmplificationBySampling(PoissonSampling=True)(mz.GaussianMechanism(sigma=p["sigma"]),
                                                                         p["q"], improved_bound_flag=True)
                mechs.append(m)
                counts.append(count)
            made[comp] = tz.Composition()(mechs, counts)
        return made[comp]

    note = "none stated: an RDP conversion claims an upper bound"
    cases = []
    for comp in comps:
        for d in DELTAS:
            cases.append(AccountantCase(LIB, "Composition (RDP)", comp, "epsilon", d,
                                        lambda comp=comp, d=d: mechanism(comp).get_approxDP(d), 0.0, note))
        for e in EPSILONS:
            cases.append(AccountantCase(LIB, "Composition (RDP)", comp, "delta", e,
                                        lambda comp=comp, e=e: mechanism(comp).get_approx_delta(e), 0.0, note))
    one = self_compositions(EventKind.GAUSSIAN, counts=(1,), sigma=2.0)[0]
    for d in DELTAS:
        cases.append(AccountantCase(LIB, "ExactGaussianMechanism", one, "epsilon", d,
                                    lambda d=d: mz.ExactGaussianMechanism(sigma=2.0).get_approxDP(d), 0.0,
                                    "none stated: the analytical Gaussian mechanism (Balle and Wang 2018)"))
    return cases
