r"""Composition of privacy loss distributions: convolution by FFT with a stated error bound.

The privacy loss of a composition is the sum of the losses (Dwork and Rothblum 2016; Koskela, Jälkö and
Honkela 2020, Sect. 3), so its distribution is the convolution of the distributions; the masses at
+infinity combine as a product measure: inf_c = inf_a (|b| + inf_b) + |a| inf_b. A self-composition of
k steps is computed by repeated squaring (about 2 log2 k convolutions).

**Floating-point error (stated and tested).** A convolution c = a * b of length n (a power of 2) is
computed as F^{-1}(F a . F b) with numpy's pocketfft. For the radix-2 Cooley-Tukey FFT with accurate
twiddle factors, Higham 2002 ("Accuracy and Stability of Numerical Algorithms", 2nd ed., Thm. 24.2)
gives ||fl(F x) - F x||_2 <= eps_F ||F x||_2 with eps_F = log2(n) eta / (1 - log2(n) eta),
eta = u + gamma_4 (sqrt(2) + u). With ||F x||_2 = sqrt(n) ||x||_2, ||F x||_inf <= ||x||_1 and
F^{-1} = F^* / n, the three transforms and the pointwise product give

    ||c_hat - c||_2 <= (3 eps_F + sqrt(2) gamma_2) (||a||_1 ||b||_2 + ||a||_2 ||b||_1)   (first order),

and ||.||_1 <= sqrt(n) ||.||_2. We take eps_F with log2(n) doubled (pocketfft mixes radix-4 and
radix-2 passes) and a relative slack of 1e-3 for the second-order terms; ``tests/test_pld_composition.py``
checks the bound against exact rational convolutions. Errors of the inputs propagate by Young's
inequality: ||a_hat * b_hat - a * b||_1 <= err_a ||b_hat||_1 + (||a_hat||_1 + err_a) err_b. Short inputs
are convolved directly (numpy.convolve), with |error| <= gamma_m sum |a_i| |b_j| per entry.

**Truncation.** After each convolution the tails holding at most ``tail`` of the mass on each side are cut:
a pessimistic distribution moves the lower tail up to the first kept loss and the upper tail to +infinity
(both can only increase delta); an optimistic one drops both (can only decrease delta). The moved or
dropped mass is recorded in ``truncated``. Moving and dropping are l1 contractions, so the error bound
carries over.

**Memory.** A convolution longer than ``max_points`` raises :class:`~rdpsym.accounting.pld.pmf.PLDTooLarge`
before anything is allocated: never a wrong bound.
"""

from __future__ import annotations

import math

import numpy as np
import scipy.fft

from .pmf import DiscretePLD, PLDTooLarge, identity

__all__ = ["convolve", "self_compose", "truncate", "fft_error_bound", "TAIL", "MAX_POINTS"]

U = 2.0 ** -53
#: mass cut from each tail after every convolution
TAIL = 1e-15
#: the longest distribution composed (8 bytes a point, and about 6 times that during an FFT)
MAX_POINTS = 1 << 24
_DIRECT = 64


def _gamma(k: int) -> float:
    return k * U / (1 - k * U)


def fft_error_bound(n: int, a1: float, a2: float, b1: float, b2: float) -> float:
    """The l1 bound on the error of an FFT convolution of length n (module docstring)."""
    logn = 2 * max(1, math.ceil(math.log2(n)))
    eta = U + _gamma(4) * (math.sqrt(2) + U)
    eps_f = logn * eta / (1 - logn * eta)
    l2 = (3 * eps_f + math.sqrt(2) * _gamma(2)) * (a1 * b2 + a2 * b1) * (1 + 1e-3)
    return math.sqrt(n) * l2


def truncate(p: DiscretePLD, tail: float = TAIL) -> DiscretePLD:
    """Cut the tails of ``p`` holding at most ``tail`` of the mass each (module docstring)."""
    m = p.masses
    if len(m) <= 2 or tail <= 0:
        return p
    left = np.cumsum(m)
    i = int(np.searchsorted(left, tail, side="right"))
    right = np.cumsum(m[::-1])
    j = len(m) - int(np.searchsorted(right, tail, side="right"))
    if i >= j:
        return p
    low, high = float(left[i - 1]) if i > 0 else 0.0, float(right[len(m) - j - 1]) if j < len(m) else 0.0
    kept = m[i:j].copy()
    if p.upper:
        kept[0] += low
        inf = (p.inf + high) * (1 + 2 * U)
        moved = abs(low) + abs(high)
    else:
        inf = p.inf
        moved = abs(low) + abs(high)
    return DiscretePLD(p.h, p.offset + i, kept, inf, p.err, p.upper, p.truncated + moved)


def convolve(a: DiscretePLD, b: DiscretePLD, tail: float = TAIL, max_points: int = MAX_POINTS,
             what: str = "the composition") -> DiscretePLD:
    """The distribution of the sum of the losses, truncated (module docstring)."""
    if a.h != b.h or a.upper != b.upper:
        raise ValueError("convolve: the distributions must share the grid step and the side")
    la, lb = len(a.masses), len(b.masses)
    n_out = la + lb - 1
    if n_out > max_points:
        raise PLDTooLarge(f"{what}: the composed privacy loss distribution needs {n_out} grid points; at most "
                          f"{max_points} fit in memory (take a larger step, or fewer events)")
    a1, b1 = float(np.sum(np.abs(a.masses))), float(np.sum(np.abs(b.masses)))
    if min(la, lb) <= _DIRECT:
        c = np.convolve(a.masses, b.masses)
        err_op = _gamma(min(la, lb)) * a1 * b1
    else:
        n = 1 << (n_out - 1).bit_length()
        c = scipy.fft.irfft(scipy.fft.rfft(a.masses, n) * scipy.fft.rfft(b.masses, n), n)[:n_out]
        a2, b2 = float(np.linalg.norm(a.masses)), float(np.linalg.norm(b.masses))
        err_op = fft_error_bound(n, a1, a2, b1, b2)
    err = a.err * b1 + (a1 + a.err) * b.err + err_op
    sa, sb = float(np.sum(a.masses)), float(np.sum(b.masses))
    if a.upper:
        inf = (a.inf * (sb + b.err + b.inf) + (sa + a.err) * b.inf) * (1 + 4 * U)
    else:
        inf = max(0.0, (a.inf * (sb - b.err + b.inf) + (sa - a.err) * b.inf) * (1 - 4 * U))
    out = DiscretePLD(a.h, a.offset + b.offset, c, inf, err, a.upper, a.truncated + b.truncated)
    return truncate(out, tail)


def self_compose(p: DiscretePLD, count: int, tail: float = TAIL, max_points: int = MAX_POINTS,
                 what: str = "the composition") -> DiscretePLD:
    """``count`` independent copies of ``p`` composed, by repeated squaring."""
    result, base, k = None, p, int(count)
    if k == 0:
        return identity(p.h, p.upper)
    while True:
        if k & 1:
            result = base if result is None else convolve(result, base, tail, max_points, what)
        k >>= 1
        if not k:
            return result
        base = convolve(base, base, tail, max_points, what)
