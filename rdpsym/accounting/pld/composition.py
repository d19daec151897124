r"""Composition of privacy loss distributions: one FFT per event, powers in the frequency domain, one
inverse FFT, with a stated error bound.

The privacy loss of a composition is the sum of the losses (Dwork and Rothblum 2016; Koskela, Jälkö and
Honkela 2020, Sect. 3), so its distribution is the convolution of the distributions. For events e with
masses x_e on the grid (offset o_e) released k_e times, the composition is computed as the cyclic
convolution of length N (a power of 2):

    y = F^{-1}( prod_e (F x_e)^{k_e} ),

each power by repeated squaring in the frequency domain (Koskela et al. 2020, Sect. 4, compose the same
way). Index j of the composition sits at position (j - sum_e k_e o_e) mod N.

**Window.** Mass whose index falls outside the window [j_lo, j_hi] of length N wraps around. Chernoff
bounds on the composed (sub-)probability measure, P(S >= t) <= exp(sum_e k_e psi_e(lambda) - lambda t) with
psi_e(lambda) = log sum_j x_{e,j} e^{lambda j}, evaluated with certified exponentials (:mod:`.exps`) and Arb
logarithms, bound the mass above j_hi and below j_lo by ``tail`` each; the window is the whole support
when that fits. That mass (``truncated``) is counted twice in the error: once for where it wrapped to and
once for where it belongs.

**Floating-point error (stated and tested).** With eps_F the relative 2-norm error of a transform of
length N (Higham 2002, "Accuracy and Stability of Numerical Algorithms", 2nd ed., Thm. 24.2, with log2 N
doubled to cover pocketfft's real transforms and mixed radix passes), ||F x||_2 = sqrt(N) ||x||_2 and
|F x|_i <= ||x||_1 =: M:

* forward: ||X^_e - X_e||_2 <= eps_F sqrt(N) ||x_e||_2, so every |X^_e,i| <= S_e := M_e + eps_F sqrt(N) ||x_e||_2;
* powers and products: |prod A_e^{k_e} - prod B_e^{k_e}| <= (prod S_e^{k_e}) sum_e k_e |A_e - B_e| / S_e (a
  telescoping sum), and the complex multiplications (relative error theta = sqrt(2) gamma_2 each, Higham
  Lemma 3.5; a relative error doubles at each squaring) add at most rho = (1 + theta)^{2K + E} - 1 relative,
  K = sum_e k_e, E the number of events;
* inverse: eps_F ||Y^||_2 / sqrt(N).

The l1 error of the window is at most sqrt(N) times the l2 error of y (``err``);
``tests/test_pld.py`` checks the bound against exact convolutions. **Memory.** N > ``max_points``
raises :class:`~rdpsym.accounting.pld.pmf.PLDTooLarge` before anything is allocated: never a wrong bound.
"""

from __future__ import annotations

import math

import numpy as np
import scipy.fft

from .exps import exp_grid
from .pmf import DiscretePLD, PLDTooLarge, identity
from .taylor import PREC, f_up, gamma

__all__ = ["compose", "convolve", "self_compose", "fft_error_bound", "TAIL", "MAX_POINTS"]

U = 2.0 ** -53
#: mass allowed outside the window on each side
TAIL = 1e-18
#: the longest composition (8 bytes a point, about 5 arrays of that size during the FFTs)
MAX_POINTS = 1 << 25


def eps_fft(N: int) -> float:
    logn = 2 * max(1, math.ceil(math.log2(N)))
    eta = U + gamma(4) * (math.sqrt(2) + U)
    return logn * eta / (1 - logn * eta) * (1 + 1e-3)


def fft_error_bound(n: int, a1: float, a2: float, b1: float, b2: float) -> float:
    """The l1 bound on the error of one FFT convolution of length n of a and b (l1 norms a1, b1; l2 norms
    a2, b2): the case of two events released once each of the module's bound."""
    ef = eps_fft(n)
    sa, sb = a1 + ef * math.sqrt(n) * a2, b1 + ef * math.sqrt(n) * b2
    mtot = sa * sb
    theta = math.sqrt(2) * gamma(2)
    rho = (1 + theta) ** 4 - 1
    dY = mtot * ef * math.sqrt(n) * (a2 / sa + b2 / sb) + rho * mtot * math.sqrt(n)
    l2 = dY / math.sqrt(n) + ef * (mtot * (1 + rho) + dY / math.sqrt(n))
    return math.sqrt(n) * l2 * (1 + 1e-6)


def _fsum_ball(x: np.ndarray) -> tuple[float, float]:
    s = math.fsum(x.tolist()) if len(x) < 4096 else math.fsum(x)
    return s, abs(s) * U + 1e-300


def _log_mgf(x: np.ndarray, lam: float) -> float:
    """An upper bound on log sum_j x_j e^{lam (j - j_ref)}, j_ref the end that makes every exponent <= 0."""
    import flint

    n = len(x)
    # (np.sum of products, not np.dot: a multi-threaded BLAS spins on a loaded machine)
    if lam >= 0:
        _, e = exp_grid(-lam, 0, n)  # e^{-lam m}, m = 0..n-1: e[n-1-j] for index j
        s = float(np.sum(x[::-1] * e)) if n else 0.0
    else:
        _, e = exp_grid(lam, 0, n)  # e^{lam m} for index j = m
        s = float(np.sum(x * e)) if n else 0.0
    s = s * (1 + gamma(n + 1)) + n * 1e-300
    if s <= 0:
        return -math.inf
    with flint.ctx.workprec(PREC):
        return f_up(flint.arb(s).log())


def _window(parts, tail: float) -> tuple[int, int, float, float]:
    """(j_lo, j_hi, mass above j_hi, mass below j_lo) for the composed index (module docstring)."""
    J0 = sum(k * p.offset for p, k in parts)
    J1 = sum(k * (p.offset + len(p.masses) - 1) for p, k in parts)
    full = J1 - J0 + 1
    if full <= (1 << 16) or tail <= 0:
        return J0, J1, 0.0, 0.0
    # mean and variance of the composed index (floats: they only choose lambda)
    mean, var = 0.0, 0.0
    for p, k in parts:
        m = np.maximum(p.masses, 0)
        M = float(m.sum())
        if M <= 0:
            continue
        j = np.arange(len(m), dtype=float)
        mu = float(m @ j) / M
        mean += k * (p.offset + mu)
        var += k * float(m @ (j - mu) ** 2) / M
    sd = math.sqrt(max(var, 1.0))
    base = math.sqrt(2 * math.log(1 / tail)) / sd
    log_tail = math.log(tail)
    lams = base * 2.0 ** (np.arange(-16, 17) / 2.0)
    # choose lambda on float estimates (cheap), then bound rigorously at the choice
    est_hi, est_lo = np.zeros(len(lams)), np.zeros(len(lams))
    for p, k in parts:
        m = np.maximum(p.masses, 0)
        nz = m > 0
        if not nz.any():
            continue
        j = np.arange(len(m), dtype=float)[nz]
        lm = np.log(m[nz])
        top, bot = p.offset + len(m) - 1, p.offset
        step = max(1, (1 << 21) // len(lm))  # lambdas per block: about 2M terms at a time
        for i0 in range(0, len(lams), step):
            ls = lams[i0:i0 + step]
            a = lm[None, :] + ls[:, None] * (j[None, :] - (len(m) - 1))
            amax = a.max(axis=1)
            est_hi[i0:i0 + step] += k * (ls * top + np.log(np.sum(np.exp(a - amax[:, None]), axis=1)) + amax)
            b = lm[None, :] - ls[:, None] * j[None, :]
            bmax = b.max(axis=1)
            est_lo[i0:i0 + step] += k * (-ls * bot + np.log(np.sum(np.exp(b - bmax[:, None]), axis=1)) + bmax)
    lam_hi = float(lams[int(np.argmin((est_hi - log_tail) / lams))])
    lam_lo = float(lams[int(np.argmin((est_lo - log_tail) / lams))])
    best_hi, best_lo = J1, J0
    up = sum(k * (lam_hi * (p.offset + len(p.masses) - 1) + _log_mgf(np.maximum(p.masses, 0), lam_hi)) for p, k in parts)
    t_hi = (up - log_tail) / lam_hi
    lo = sum(k * (-lam_lo * p.offset + _log_mgf(np.maximum(p.masses, 0), -lam_lo)) for p, k in parts)
    t_lo = -(lo - log_tail) / lam_lo
    if math.isfinite(t_hi):
        best_hi = min(best_hi, int(math.ceil(t_hi)))
    if math.isfinite(t_lo):
        best_lo = max(best_lo, int(math.floor(t_lo)))
    best_hi = max(min(best_hi, J1), J0)
    best_lo = min(max(best_lo, J0), best_hi)
    return best_lo, best_hi, (tail if best_hi < J1 else 0.0), (tail if best_lo > J0 else 0.0)


def _fold(x: np.ndarray, N: int) -> np.ndarray:
    if len(x) <= N:
        return x
    pad = (-len(x)) % N
    return np.concatenate([x, np.zeros(pad)]).reshape(-1, N).sum(axis=0)


def _power(X: np.ndarray, k: int) -> np.ndarray:
    result, base = None, X
    while True:
        if k & 1:
            result = base.copy() if result is None else result * base
        k >>= 1
        if not k:
            return result
        base = base * base


def compose(parts, tail: float = TAIL, max_points: int = MAX_POINTS, what: str = "the composition") -> DiscretePLD:
    """The distribution of the sum of the losses of ``parts`` ((DiscretePLD, count) pairs, one grid step and
    one side), with its error bound (module docstring)."""
    import flint

    parts = [(p, int(k)) for p, k in parts if k]
    if not parts:
        raise ValueError("compose: nothing to compose")
    h, upper = parts[0][0].h, parts[0][0].upper
    if any(p.h != h or p.upper != upper for p, _ in parts):
        raise ValueError("compose: the distributions must share the grid step and the side")
    if len(parts) == 1 and parts[0][1] == 1:
        return parts[0][0]
    sparse = _compose_sparse(parts)
    if sparse is not None:
        return sparse
    j_lo, j_hi, t_hi, t_lo = _window(parts, tail)
    span = j_hi - j_lo + 1
    N = 1 << max(1, (span - 1).bit_length())
    if N > max_points:
        raise PLDTooLarge(f"{what}: the composed privacy loss distribution needs {N} grid points; at most "
                          f"{max_points} fit in memory (take a larger step, or fewer events)")
    J0 = sum(k * p.offset for p, k in parts)
    ef = eps_fft(N)
    sq = math.sqrt(N)
    Y = None
    K = 0
    rel_sum = 0.0
    log_S = 0.0
    masses_fin, infs = [], []
    for p, k in parts:
        x = np.maximum(p.masses, 0.0)
        M, _ = _fsum_ball(x)
        a2 = math.sqrt(float(np.sum(x * x))) * (1 + gamma(len(x) + 2)) + 1e-300
        S = (M * (1 + 2 * U) + ef * sq * a2) * (1 + 4 * U)
        rel_sum += k * ef * sq * a2 / S
        log_S += k * math.log(S)
        K += k
        X = scipy.fft.rfft(_fold(x, N), N)
        Xk = _power(X, k)
        Y = Xk if Y is None else Y * Xk
        masses_fin.append((M, k))
        infs.append(p.inf)
    y = scipy.fft.irfft(Y, N)
    del Y
    shift = (j_lo - J0) % N
    y = np.roll(y, -shift)[:span]
    np.maximum(y, 0.0, out=y)
    theta = math.sqrt(2) * gamma(2)
    E = len(parts)
    with flint.ctx.workprec(PREC):
        mtot = f_up(flint.arb(log_S).exp() * (1 + 1e-12))
        rho = f_up((flint.arb(1) + theta) ** (2 * K + E) - 1)
    dY = mtot * (rel_sum + rho * sq)
    l2 = dY / sq + ef * (mtot * (1 + rho) + dY / sq)
    err = sq * l2 * (1 + 1e-6) + 2 * (t_hi + t_lo)
    inf = _inf_mass(masses_fin, infs, upper)
    # the Hoeffding data of the optimistic side: sum of the mean remainders and the number of releases
    rem = sum(k * p.rem * p.releases for p, k in parts) if not upper else 0.0
    releases = sum(k * p.releases for p, k in parts)
    truncated = sum(k * p.truncated for p, k in parts) + t_hi + t_lo
    return DiscretePLD(h, j_lo, y, inf, err + sum(k * p.err for p, k in parts), upper, truncated,
                       rem / releases if releases else 0.0, releases)


#: the most distinct losses the exact (sparse) composition keeps before it leaves the work to the FFT
SPARSE_MAX = 1 << 13


class _Sparse:
    """Atoms (grid index -> mass) with an l1 error bound and a mass at +infinity."""

    def __init__(self, idx, m, inf, err):
        self.idx, self.m, self.inf, self.err = idx, m, inf, err


def _sparse_mul(a: _Sparse, b: _Sparse, upper: bool):
    """The exact convolution of two atom lists, summed in float: an entry that adds r products is within
    gamma_r of their exact sum (Higham 2002, Eq. 3.5), r <= min(len a, len b); errors of the inputs
    propagate by Young's inequality."""
    idx = (a.idx[:, None] + b.idx[None, :]).ravel()
    if len(np.unique(idx)) > SPARSE_MAX:
        return None
    vals = (a.m[:, None] * b.m[None, :]).ravel()
    u, inv = np.unique(idx, return_inverse=True)
    m = np.bincount(inv, vals, len(u))
    a1, b1 = float(np.sum(a.m)), float(np.sum(b.m))
    op = gamma(min(len(a.m), len(b.m)) + 1) * a1 * b1
    err = a.err * b1 + (a1 + a.err) * b.err + op
    if upper:
        inf = (a.inf * (b1 + b.err + b.inf) + (a1 + a.err) * b.inf) * (1 + 4 * U)
    else:
        inf = max(0.0, (a.inf * (b1 - b.err + b.inf) + (a1 - a.err) * b.inf) * (1 - 4 * U))
    return _Sparse(u, m, inf, err * (1 + 4 * U))


def _compose_sparse(parts):
    """The composition by exact convolutions of the atoms (repeated squaring) when every part has few atoms
    and the result stays small (randomized response, pure DP): None otherwise."""
    if any(np.count_nonzero(p.masses) > 64 for p, _ in parts):
        return None
    upper = parts[0][0].upper
    result = None
    for p, k in parts:
        nz = np.nonzero(p.masses)[0]
        base = _Sparse(p.offset + nz, np.asarray(p.masses[nz], float), p.inf, p.err)
        acc = None
        while True:
            if k & 1:
                acc = base if acc is None else _sparse_mul(acc, base, upper)
                if acc is None:
                    return None
            k >>= 1
            if not k:
                break
            base = _sparse_mul(base, base, upper)
            if base is None:
                return None
        result = acc if result is None else _sparse_mul(result, acc, upper)
        if result is None:
            return None
    lo = int(result.idx[0])
    dense = np.zeros(int(result.idx[-1]) - lo + 1)
    dense[result.idx - lo] = result.m
    releases = sum(k * p.releases for p, k in parts)
    rem = sum(k * p.rem * p.releases for p, k in parts) if not upper else 0.0
    return DiscretePLD(parts[0][0].h, lo, dense, result.inf, result.err, upper,
                       sum(k * p.truncated for p, k in parts), rem / releases if releases else 0.0, releases)


def _inf_mass(masses_fin, infs, upper: bool) -> float:
    """The mass at +infinity of the composition: prod (M_e + inf_e)^{k_e} - prod M_e^{k_e}, bounded in Arb
    from above (pessimistic) or below (optimistic)."""
    import flint

    if not any(infs):
        return 0.0
    with flint.ctx.workprec(PREC):
        tot, fin = flint.arb(1), flint.arb(1)
        for (M, k), inf in zip(masses_fin, infs):
            Mb = flint.arb(M, abs(M) * 2 * U + 1e-300)
            tot *= (Mb + inf) ** k
            fin *= Mb ** k
        d = tot - fin
        return max(0.0, f_up(d)) if upper else max(0.0, float(d.lower()) * (1 - 4 * U))


def convolve(a: DiscretePLD, b: DiscretePLD, tail: float = TAIL, max_points: int = MAX_POINTS,
             what: str = "the composition") -> DiscretePLD:
    """The composition of a and b (each released once)."""
    return compose([(a, 1), (b, 1)], tail, max_points, what)


def self_compose(p: DiscretePLD, count: int, tail: float = TAIL, max_points: int = MAX_POINTS,
                 what: str = "the composition") -> DiscretePLD:
    """``count`` independent copies of ``p`` composed."""
    if int(count) == 0:
        return identity(p.h, p.upper)
    return compose([(p, int(count))], tail, max_points, what)
