"""The run-time helpers of the generated float code, as a real module.

The code :func:`rdpsym.compile.generate_source` writes must stay self-contained (users save it to a
file and need only numpy), so the functions below are copied into every generated module by
:func:`source` (their text, read with :mod:`inspect`): the module that is linted and unit-tested here
and the text that is generated cannot diverge.

* log-sum-exp with signs, scaled by the largest term (:func:`_scaled_sum`, :func:`_lse_abs`,
  :func:`_lse_sign`): ``exp((alpha-1)/b)`` never overflows (Mironov 2017, Prop. 6 at b = 1e-4);
* double-double arithmetic (Dekker 1971) for the singular factors of the closed form;
* the Horner sum of a Taylor series with an estimate of its truncation error (:func:`_series`);
* Taylor-mode arithmetic (truncated series in tau, coefficients along axis 0) for the series around
  alpha = 1 and around the parameter-dependent orders;
* block-wise evaluation of large grids (:func:`_blockwise`).

Every name starts with ``_``: parameter names in the generated code never do (see
:func:`rdpsym.compile.identifier`), so none is captured.
"""

import inspect
import re

import numpy

#: elements per block in :func:`_blockwise`
_BLOCK = 1 << 16


def _z(like):
    """Zeros of the shape of ``like``: broadcasts constants (0 * alpha would be NaN at alpha = inf)."""
    return numpy.zeros(numpy.shape(like))


def _all(x):
    """numpy.all(x) for the generated checks without numpy.all's Python-level wrapper (microseconds a
    call, on inputs of a few elements)."""
    return bool(numpy.asarray(x).all())


def _size(shape):
    """The number of elements of an array of ``shape`` (no array made: numpy.prod makes one)."""
    n = 1
    for k in shape:
        n *= k
    return n


def _whole(fn, args, out):
    """fn(*args), broadcast into ``out``, in one call."""
    out[...] = fn(*args)
    return out


def _blockwise(fn, args, out):
    """fn(*args), broadcast into ``out``, evaluated in blocks of about _BLOCK elements along the first
    axis. Every temporary then stays in cache instead of being allocated (and page-faulted) at full
    size; this halves the time on a 1000 x 1000 grid. Inputs keep their own shapes within a block."""
    shape = out.shape
    if len(shape) == 0 or shape[0] == 1 or out.size <= 2 * _BLOCK:
        out[...] = fn(*args)
        return out
    args = [numpy.reshape(a, (1,) * (len(shape) - numpy.ndim(a)) + numpy.shape(a)) for a in args]
    step = max(1, (_BLOCK * shape[0]) // out.size)
    # what does not depend on the block (Taylor coefficients in the parameters alone, when the
    # parameters are a row shared by every block) is computed once per call, not once per block
    memo = {"_full": args, "_length": shape[0]}
    for i in range(0, shape[0], step):
        memo["_rows"] = slice(i, i + step)
        out[i:i + step] = fn(*(a[i:i + step] if a.shape[0] > 1 else a for a in args), _memo=memo)
    return out


def _block_coef(memo, coef, args):
    """coef(*args) for a block of _blockwise: computed once on the whole inputs (an order-only column
    of coefficients costs the same array operations for 1000 orders as for 65) and sliced to the
    block's rows; computed on the block itself outside _blockwise."""
    if memo is None or "_rows" not in memo:
        return coef(*args)
    full = _memo_get(memo, coef, memo["_full"])
    rows, length = memo["_rows"], memo["_length"]
    cs, v = full

    def cut(x):
        if numpy.ndim(x) == 0:
            return x
        x = numpy.asarray(x)
        x = x.reshape((1,) * (len(memo["_full"][0].shape) - x.ndim) + x.shape)
        return x[rows] if x.shape[0] == length and length > 1 else x
    return [cut(c) for c in cs], cut(v)


def _block_pre(memo, pre, coef, args):
    """The screen ``pre`` of a boundary series for a block of _blockwise: evaluated once on the whole
    inputs (a comparison of an order-only column with a parameter-only row) and sliced to the block's
    rows, so a block pays for none of the logarithms of its coefficients; on the block itself outside
    _blockwise."""
    if memo is None or "_rows" not in memo:
        return pre(*args, _cv=coef(*args) if coef is not None else None)
    key = ("_pre", id(pre))
    full = memo.get(key)
    if full is None:
        cv = _memo_get(memo, coef, memo["_full"]) if coef is not None else None
        full = numpy.asarray(pre(*memo["_full"], _cv=cv))
        full = full.reshape((1,) * (len(memo["_full"][0].shape) - full.ndim) + full.shape)
        memo[key] = full
    return full[memo["_rows"]] if full.shape[0] == memo["_length"] and memo["_length"] > 1 else full


def _block_outer(memo, coef, args):
    """:func:`_outer_prep` of a boundary series' coefficients for a block of _blockwise: the matrix of
    coefficients and the powers of the variable built once on the whole inputs, then the block's rows
    taken; None where the series is not a product of a column by a row."""
    if memo is None or "_rows" not in memo:
        return _outer_prep(*coef(*args))
    key = ("_outer", id(coef))
    if key not in memo:
        memo[key] = _outer_prep(*_memo_get(memo, coef, memo["_full"]))
    prep = memo[key]
    return None if prep is None else _outer_rows(prep, memo["_rows"], memo["_length"])


def _memo_get(memo, fn, args):
    """fn(*args) from ``memo`` when it was called on these very arrays in this call (identity, not
    equality: the arrays are alive in the caller, so their ids are not reused meanwhile)."""
    if memo is None:
        return fn(*args)
    hit = memo.get(id(fn))
    if hit is not None and len(hit[0]) == len(args) and all(a is b for a, b in zip(hit[0], args)):
        return hit[1]
    value = fn(*args)
    memo[id(fn)] = (tuple(args), value)
    return value


def _scaled_sum(logs, signs):
    """(m, t) with sum_i s_i exp(l_i) = t exp(m) and m the largest l_i: nothing overflows. Inputs keep
    their own shapes; each term costs one exp and one in-place add on the broadcast shape."""
    if len(logs) > 2:
        # Terms at small shapes (order-only, parameter-only, constants) are summed first at their own
        # broadcast shape, as one term t exp(m): on a grid the full shape then pays for fewer exps.
        size = max(numpy.size(l) for l in logs)
        small = [i for i, l in enumerate(logs) if 4 * numpy.size(l) <= size]
        if 2 <= len(small) < len(logs) and 4 * numpy.size(numpy.broadcast(*[logs[i] for i in small])) <= size:
            gm, gt = _scaled_sum([logs[i] for i in small], [signs[i] for i in small])
            logs = [gm] + [l for i, l in enumerate(logs) if i not in small]
            # gt is a multiplier, not a sign: as an array (a numpy.float64 is a float, read below as +-1)
            signs = [numpy.asarray(gt, dtype=float)] + [s for i, s in enumerate(signs) if i not in small]
    m = numpy.asarray(logs[0], dtype=float)
    for l in logs[1:]:
        m = numpy.maximum(m, l)
    finite = numpy.isfinite(m)
    if not finite.all():
        m = numpy.where(finite, m, 0.0)
    # Each step writes into the fresh array of the step before: allocating (and page-faulting) a new
    # temporary per operation costs more than the exp itself.
    total = None
    for l, s in zip(logs, signs):
        t = numpy.subtract(l, m)  # a fresh array (or a numpy scalar for 0-d inputs)
        owned = isinstance(t, numpy.ndarray) and t.ndim > 0
        t = numpy.exp(t, out=t) if owned else numpy.exp(t)
        if not isinstance(s, float):
            if owned and t.shape == numpy.broadcast_shapes(t.shape, numpy.shape(s)):
                numpy.multiply(t, s, out=t)
            else:
                t = s * t
        elif s < 0:
            t = numpy.negative(t, out=t) if owned else -t
        if total is None:
            total = t
        elif isinstance(total, numpy.ndarray) and total.shape == numpy.broadcast_shapes(total.shape, numpy.shape(t)):
            numpy.add(total, t, out=total)
        else:
            total = total + t
    return m, total


def _lse2(logs, signs):
    """(log|s1 e^l1 + s2 e^l2|, sign) as max(l1, l2) + log1p(s1 s2 exp(-|l1 - l2|)): one exp and one
    log1p, and log1p keeps the digits of a sum next to 1 (Laplace next to alpha = 1); None where a log is
    not finite (the general path handles that)."""
    l1, l2 = logs
    m = numpy.maximum(l1, l2)
    if not numpy.isfinite(m).all():
        return None
    d = numpy.subtract(l1, l2)
    x = numpy.abs(d)
    owned = isinstance(x, numpy.ndarray) and x.ndim > 0
    x = numpy.exp(numpy.negative(x, out=x) if owned else -x, out=x if owned else None)
    s = signs[0] * signs[1]
    if not isinstance(s, float):
        x = numpy.multiply(x, s, out=x) if owned and x.shape == numpy.broadcast_shapes(x.shape, numpy.shape(s)) else x * s
    elif s < 0:
        x = numpy.negative(x, out=x) if owned else -x
    x = numpy.log1p(x, out=x) if owned else numpy.log1p(x)
    return (numpy.add(x, m, out=x) if owned and x.shape == numpy.broadcast_shapes(x.shape, numpy.shape(m)) else x + m), d


def _lse_ratio(l1, d, s, general, fresh=False):
    """log|t1 + t2| from l1 = log|t1|, d = log|t1/t2| and s = sign(t1/t2), d from the ratio's own
    simplified form ((2 alpha - 1) log(p/(1-p)) for randomized response), never as l1 - l2 of two large
    logs. One form per regime, chosen by the sign of d: l1 + log1p(s exp(-d)) where t1 dominates, and
    l1 - d + log1p(s exp(d)) where t2 does; one exp and one log1p per point. ``fresh``: d is an array
    made for this call, which it may overwrite (the emitter says so only for an expression it wrote
    there, never for an input or a named value read elsewhere). Where d or l1 is not finite
    ``general()``, the two-term log-sum-exp, is returned instead (a sum of l1 is finite exactly where
    every l1 is, short of overflow, which only sends more points to ``general``)."""
    lo, hi = numpy.min(d), numpy.max(d)
    if not (numpy.isfinite(lo) and numpy.isfinite(hi) and numpy.isfinite(numpy.sum(l1))):
        return general()
    owned = fresh and isinstance(d, numpy.ndarray) and d.ndim > 0 and d.dtype == float
    if lo >= 0:  # t1 dominates everywhere (Laplace at alpha > 1): no mask at all
        x, base = (numpy.negative(d, out=d) if owned else numpy.negative(d)), l1
    elif hi <= 0:
        base = numpy.subtract(l1, d)
        x = d if owned else numpy.array(d, dtype=float)
    else:
        base = numpy.where(d >= 0, l1, numpy.subtract(l1, d))
        x = numpy.abs(d, out=d) if owned else numpy.abs(d)
        x = numpy.negative(x, out=x)
    owned = isinstance(x, numpy.ndarray) and x.ndim > 0  # x is a fresh array: reuse it
    x = numpy.exp(x, out=x) if owned else numpy.exp(x)
    if not isinstance(s, float):
        if not numpy.all(numpy.asarray(s) == 1.0):  # s at its own (small) shape
            x = numpy.multiply(x, s, out=x) if owned and x.shape == numpy.broadcast_shapes(x.shape, numpy.shape(s)) else x * s
    elif s < 0:
        x = numpy.negative(x, out=x) if owned else -x
    x = numpy.log1p(x, out=x) if owned else numpy.log1p(x)
    return numpy.add(x, base, out=x) if owned and x.shape == numpy.broadcast_shapes(x.shape, numpy.shape(base)) else x + base


def _lse_abs(logs, signs):
    """log|sum_i s_i exp(l_i)|, scaled by the largest l_i (no overflow)."""
    if len(logs) == 2:
        two = _lse2(logs, signs)
        if two is not None:
            return two[0]
    m, total = _scaled_sum(logs, signs)
    if isinstance(total, numpy.ndarray) and total.ndim > 0:  # total is a fresh array: reuse it
        numpy.abs(total, out=total)
        numpy.log(total, out=total)
        if total.shape == numpy.broadcast_shapes(total.shape, numpy.shape(m)):
            return numpy.add(total, m, out=total)
        return total + m
    return m + numpy.log(numpy.abs(total))


def _lse_sign(logs, signs):
    """The sign of sum_i s_i exp(l_i)."""
    if len(logs) == 2:
        two = _lse2(logs, signs)
        if two is not None:
            value, d = two
            # the larger term's sign; 0 where the two cancel exactly (log = -inf)
            return numpy.where(d >= 0, signs[0], signs[1]) * (value > -numpy.inf)
    return numpy.sign(_scaled_sum(logs, signs)[1])


# -- double-double arithmetic (pairs hi + lo, Dekker 1971): a singular factor's exact float value ------
def _dd(a):
    return (a, 0.0 * a)


def _dd_split(a):
    c = 134217729.0 * a
    hi = c - (c - a)
    return hi, a - hi


def _dd_two_sum(a, b):
    s = a + b
    bb = s - a
    return s, (a - (s - bb)) + (b - bb)


def _dd_mul(x, y):
    p = x[0] * y[0]
    ah, al = _dd_split(x[0])
    bh, bl = _dd_split(y[0])
    e = ((ah * bh - p) + ah * bl + al * bh) + al * bl
    return _dd_two_sum(p, e + (x[0] * y[1] + x[1] * y[0]))


def _dd_add(x, y):
    s, e = _dd_two_sum(x[0], y[0])
    return _dd_two_sum(s, e + (x[1] + y[1]))


def _dd_value(x):
    """hi + lo rounded; where the splitting overflowed (|a| > 1e300) the plain sum hi."""
    v = x[0] + x[1]
    return numpy.where(numpy.isfinite(v), v, x[0]) if numpy.ndim(v) else (v if numpy.isfinite(v) else x[0])


def _rows(args, shape, mask):
    """(the inputs restricted to the rows, along the first axis, that hold the points of ``mask``; that
    slice), or None when the block would hold more than three times the points. A function evaluated on
    the block keeps the inputs' own shapes (terms in alpha alone stay a column), where on gathered
    points every term costs one operation per point."""
    if len(shape) < 2 or shape[0] < 2:
        return None
    rows = numpy.flatnonzero(mask.any(axis=tuple(range(1, len(shape)))))
    if rows.size == 0:
        return None
    rows = slice(int(rows[0]), int(rows[-1]) + 1)
    if (rows.stop - rows.start) * (mask.size // shape[0]) > 3 * numpy.count_nonzero(mask):
        return None
    args = [numpy.reshape(a, (1,) * (len(shape) - numpy.ndim(a)) + numpy.shape(a)) for a in args]
    return [a[rows] if a.shape[0] > 1 else a for a in args], rows


def _take(a, shape, at):
    """``a`` broadcast to ``shape``, at the flat indices ``at``, without forming the broadcast array:
    a column of a 2-D grid is indexed by the row of each point, a row by its column."""
    a = numpy.asarray(a, dtype=float)
    if a.size == 1:
        return numpy.full(at.size, a.reshape(())[()])
    a = a.reshape((1,) * (len(shape) - a.ndim) + a.shape)
    if a.shape == tuple(shape):
        return a.ravel().take(at)
    if len(shape) == 2 and a.shape[1] == 1:
        return a.ravel().take(at // shape[1])
    if len(shape) == 2 and a.shape[0] == 1:
        return a.ravel().take(at % shape[1])
    return numpy.broadcast_to(a, shape).ravel().take(at)


def _gather(values, shape, mask):
    """Each of ``values`` (broadcastable to ``shape``) at the points where ``mask`` is true, in the
    order of numpy.flatnonzero(mask). Indexed along each axis of its own: boolean indexing of a
    broadcast view walks the whole mask once per value (five times slower for an order-only
    column); a column is repeated by the count of points in each row (no index at all), a row is
    taken at the column indices; constants and size-1 arrays stay scalars."""
    cache = {}

    def flat():
        if "flat" not in cache:
            cache["flat"] = numpy.flatnonzero(mask)
        return cache["flat"]

    out = []
    for c in values:
        if numpy.ndim(c) == 0 or numpy.size(c) == 1:
            out.append(numpy.asarray(c, dtype=float).reshape(())[()])
            continue
        c = numpy.asarray(c, dtype=float)
        c = c.reshape((1,) * (len(shape) - c.ndim) + c.shape)
        axes = [k for k in range(len(shape)) if c.shape[k] > 1]
        if axes == [0]:
            if "counts" not in cache:
                cache["counts"] = numpy.reshape(mask, (shape[0], -1)).sum(axis=1)
            out.append(numpy.repeat(c.ravel(), cache["counts"]))
        elif axes == [len(shape) - 1]:
            out.append(numpy.take(c.ravel(), flat() % shape[-1]))
        else:
            if "ix" not in cache:
                cache["ix"] = numpy.unravel_index(flat(), shape)
            out.append(c[tuple(cache["ix"][k] if c.shape[k] > 1 else 0 for k in range(len(shape)))])
    return out


def _settle(out, todo, at, shape, args, err, exact, trust, scale):
    """The points ``at`` (flat indices) of ``out`` where the closed form may have lost digits and no
    series served them. Its value stays where its estimated error ``err`` is within ``trust`` of it;
    elsewhere ``exact`` (the closed form in double-double arithmetic, compile.doubled) gives the value
    where the same estimate (or ``exact.err``, the estimate of its own form: singular factors written
    out) times ``scale`` (the double-double unit over the float one) is within ``trust`` of that value. The points so settled leave ``todo``. Returns (the number of points
    neither settles, the largest estimated relative error among them)."""
    if at.size == 0:
        return 0, 0.0
    sub = [_take(a, shape, at) for a in args]
    v = out.ravel().take(at)
    e = numpy.broadcast_to(err(*sub), v.shape) if err is not None else numpy.full(v.shape, numpy.inf)
    bad = ~(e <= trust * numpy.abs(v))  # NaN fails too
    if bad.any() and exact is not None:
        inputs = [s[bad] for s in sub]
        w = numpy.broadcast_to(exact(*inputs), (int(bad.sum()),))
        # the estimate of the double-double code's own form where it has one (singular factors written out)
        own = getattr(exact, "err", None)
        ee = e[bad] if own is None else numpy.broadcast_to(own(*inputs), w.shape)
        ok = numpy.isfinite(w) & (ee * scale <= trust * numpy.abs(w))
        numpy.put(out, at[bad][ok], w[ok])
        bad[numpy.flatnonzero(bad)[ok]] = False
    numpy.put(todo, at[~bad], False)
    if not bad.any():
        return 0, 0.0
    with numpy.errstate(all="ignore"):
        rel = e[bad] / numpy.abs(v[bad])
    return int(bad.sum()), float(numpy.max(numpy.where(numpy.isnan(rel), numpy.inf, rel)))


def _series(coeffs, v):
    """Horner sum of the Taylor series and an estimate of its truncation error. Coefficients are
    arrays of v's shape or constants (a constant 0 costs nothing); every step works in place."""
    v = numpy.asarray(v, dtype=float)
    n = len(coeffs)
    value = numpy.array(numpy.broadcast_to(coeffs[-1], numpy.broadcast_shapes(v.shape, *(numpy.shape(c) for c in coeffs))),
                        dtype=float)  # a fresh array
    for c in reversed(coeffs[:-1]):
        numpy.multiply(value, v, out=value)
        if not (numpy.ndim(c) == 0 and c == 0):
            numpy.add(value, c, out=value)
    # the next terms extrapolated geometrically from the last two pairs of terms (pairs, because
    # odd or even coefficients may vanish); a series that is not decreasing is never used.
    # |c_k v^k| as |c_k| |v|^k, the powers by successive products (one pow instead of four)
    av = numpy.abs(v)
    p = av ** (n - 4)
    prev = numpy.abs(coeffs[-4]) * p
    p = p * av
    prev = prev + numpy.abs(coeffs[-3]) * p
    p = p * av
    last = numpy.abs(coeffs[-2]) * p
    p = p * av
    last = last + numpy.abs(coeffs[-1]) * p
    ratio = numpy.where(prev > 0, last / numpy.where(prev > 0, prev, 1.0), 0.0)
    tail = numpy.where((last <= prev) | (last == 0), last * ratio / numpy.maximum(1.0 - ratio, 1e-300), numpy.inf)
    return value, tail


def _outer_prep(coeffs, v):
    """The pieces of :func:`_series_outer` that depend on the coefficients and the variable alone, or
    None: (rows, the coefficients as a matrix, the powers of v, the absolute values of the last two
    pairs of both). ``rows``: the coefficients run down the rows (a column each) and v along a row;
    otherwise the coefficients run along the columns and v down a column."""
    if len(coeffs) < 4:
        return None
    v = numpy.asarray(v, dtype=float)
    cs = [numpy.asarray(c, dtype=float) for c in coeffs]
    if v.ndim > 2 or any(c.ndim > 2 for c in cs):
        return None
    v = v.reshape((1,) * (2 - v.ndim) + v.shape)
    cs = [c.reshape((1,) * (2 - c.ndim) + c.shape) for c in cs]
    if v.shape[0] == 1 and all(c.shape[1] == 1 for c in cs):
        rows, vt = True, v[0]        # coefficients down the rows, v along a row
        length = max(c.shape[0] for c in cs)
    elif v.shape[1] == 1 and all(c.shape[0] == 1 for c in cs):
        rows, vt = False, v[:, 0]    # coefficients along the columns, v down a column
        length = max(c.shape[1] for c in cs)
    else:
        return None
    n = len(cs)
    powers = numpy.empty((n, vt.size))  # v^k by successive products
    powers[0] = 1.0
    for k in range(1, n):
        numpy.multiply(powers[k - 1], vt, out=powers[k])
    coef = numpy.empty((length, n))
    for k, c in enumerate(cs):
        coef[:, k] = c.ravel() if c.size > 1 else c.reshape(())
    head, end = slice(n - 4, n - 2), slice(n - 2, n)
    return (rows, coef, powers, numpy.abs(coef[:, head]), numpy.abs(powers[head]), numpy.abs(coef[:, end]),
            numpy.abs(powers[end]))


def _outer_rows(prep, rows, length):
    """``prep`` restricted to the grid rows ``rows`` (a block of _blockwise over ``length`` rows): the
    coefficients' rows where they run down the rows, the powers' columns where v runs down a column."""
    down, coef, powers, c_head, p_head, c_end, p_end = prep
    if down:
        if coef.shape[0] == length and length > 1:
            coef, c_head, c_end = coef[rows], c_head[rows], c_end[rows]
    elif powers.shape[1] == length and length > 1:
        powers, p_head, p_end = powers[:, rows], p_head[:, rows], p_end[:, rows]
    return down, coef, powers, c_head, p_head, c_end, p_end


def _series_outer(coeffs, v, shape, at, tolerance, memo=None, prep=None):
    """(value, converged) of the Taylor series sum_k c_k v^k at the flat indices ``at`` of ``shape``,
    or None. On a 2-D grid where every coefficient is a column and v a row (a boundary series:
    coefficients in alpha, v = 1/b), or every coefficient a row and v a column (a series in alpha - c
    with coefficients in the parameters), the sum over the grid is one matrix product (the grid's K
    coefficients by K powers of v), with no coefficient gathered per point; only the rows and columns
    that hold points are multiplied. ``converged`` is :func:`_series`'s truncation test,
    tail <= tolerance * |value|, with the tail extrapolated from the last two pairs of terms, prev and
    last: tail = last^2 / (prev - last) where last < prev, 0 where last = 0, and infinite otherwise,
    i.e. last^2 <= tolerance |value| (prev - last). ``prep``: :func:`_outer_prep` of (coeffs, v),
    computed by the caller."""
    if len(shape) != 2:
        return None
    if prep is None:
        prep = _outer_prep(coeffs, v)
        if prep is None:
            return None
    pairs = _outer_pairs(prep, shape)
    if pairs is None:
        return None
    height, width = pairs[0][0].shape[0], pairs[0][1].shape[1]
    # only the range of rows and of columns that holds the points is multiplied (views, no copies): a
    # boundary series is wanted in a band of the scales, a series in alpha - c in a window of orders
    i, j = numpy.divmod(at, shape[1])
    if height > 1 and at.size:
        top, bottom = int(i[0]), int(i[-1]) + 1  # ``at`` is sorted: so is i
        pairs = [(x[top:bottom], y) for x, y in pairs]
        i = i - top if top else i
        h = bottom - top
    else:
        i, h = (numpy.zeros(at.size, dtype=numpy.intp), 1) if height == 1 else (i, height)
    if width > 1 and at.size:
        left, right = int(j.min()), int(j.max()) + 1
        pairs = [(x, y[:, left:right]) for x, y in pairs]
        j = j - left if left else j
        w = right - left
    else:
        j, w = (numpy.zeros(at.size, dtype=numpy.intp), 1) if width == 1 else (j, width)
    flat = i * w + j
    value, prev, last = (m.ravel().take(flat) for m in _outer_products(pairs, memo, "_series_outer", height * width))
    return value, _truncated(value, prev, last, tolerance)


def _outer_pairs(prep, shape):
    """The three products of :func:`_series_outer` as (left, right) factor pairs oriented for a grid of
    ``shape`` (value, and the last two pairs of terms), or None where they do not fit it."""
    down, coef, powers, c_head, p_head, c_end, p_end = prep
    pairs = [(coef, powers), (c_head, p_head), (c_end, p_end)]
    if not down:
        pairs = [(y.T, x.T) for x, y in pairs]
    height, width = pairs[0][0].shape[0], pairs[0][1].shape[1]
    if height not in (1, shape[0]) or width not in (1, shape[1]):
        return None
    return pairs


def _outer_products(pairs, memo, key, size=0):
    """The matrix products of ``pairs``, into buffers kept for the whole call under ``key`` of ``memo``
    (see _blockwise): a fresh grid-sized array per block costs more in page faults than the product.
    The products view the buffers: they are read before the next block's products are made. ``size``:
    the largest product the call will make (the buffers are made that large once)."""
    h, w = pairs[0][0].shape[0], pairs[0][1].shape[1]
    buffers = memo.get(key) if memo is not None else None
    if buffers is None or buffers[0].size < h * w:
        buffers = [numpy.empty(max(h * w, size)) for _ in pairs]
        if memo is not None:
            memo[key] = buffers
    return [numpy.matmul(x, y, out=buf[:h * w].reshape(h, w)) for (x, y), buf in zip(pairs, buffers)]


def _truncated(value, prev, last, tolerance):
    """:func:`_series`'s truncation test from the last two pairs of terms, prev and last (overwritten):
    last^2 <= tolerance |value| (prev - last)."""
    numpy.subtract(prev, last, out=prev)
    numpy.multiply(prev, tolerance, out=prev)
    numpy.multiply(prev, numpy.abs(value), out=prev)
    numpy.multiply(last, last, out=last)
    return last <= prev


def _series_rect(prep, near, tolerance, memo=None):
    """(rows, cols, value, ok) of a boundary series on a 2-D block: the series (``prep``, see
    :func:`_outer_prep`) summed by matrix products over the rectangle of rows and columns (slices) that
    holds the points of ``near``, and ``ok`` = near & the truncation test of :func:`_series_outer` there,
    all at the rectangle's shape: no flat indices, no gathers, no scatters (the caller writes with
    copyto). None where ``near`` is not 2-D or the series' shapes do not fit it."""
    if near.ndim != 2:
        return None
    pairs = _outer_pairs(prep, near.shape)
    if pairs is None:
        return None
    height, width = pairs[0][0].shape[0], pairs[0][1].shape[1]
    r = numpy.flatnonzero(near.any(axis=1))
    c = numpy.flatnonzero(near.any(axis=0))
    if r.size == 0:
        return None
    rows, cols = slice(int(r[0]), int(r[-1]) + 1), slice(int(c[0]), int(c[-1]) + 1)
    if height > 1:
        pairs = [(x[rows], y) for x, y in pairs]
    if width > 1:
        pairs = [(x, y[:, cols]) for x, y in pairs]
    value, prev, last = _outer_products(pairs, memo, "_series_rect", height * width)
    ok = near[rows, cols] & _truncated(value, prev, last, tolerance) & numpy.isfinite(value)
    return rows, cols, (value if value.shape == ok.shape else numpy.broadcast_to(value, ok.shape)), ok


# -- truncated Taylor series in tau, coefficients along axis 0 (orders 0..N-1) ---------------------
def _t_const(c, like):
    out = numpy.zeros_like(like)
    out[0] = c
    return out


# The recurrences below are vectorised over the coefficient axis: one numpy operation per order k
# (a dot product over j) instead of one per (j, k) pair, which is what made series slow.
def _t_dot(x, y):
    """sum_j x[j] * y[j] over the leading (coefficient) axis."""
    return (x * y).sum(axis=0)


def _t_degree(a):
    """The index of a series' last nonzero coefficient (0 for a constant, and for zero): the series of
    a closed form are built from constants and 1 + tau, and a product or exponential of those needs
    only that many terms of the recurrences."""
    a = numpy.asarray(a)
    nz = numpy.flatnonzero(a.reshape(a.shape[0], -1).any(axis=1))
    return int(nz[-1]) if nz.size else 0


def _t_mul(a, b):
    n = a.shape[0]
    out = numpy.zeros_like(a * b)
    da, db = _t_degree(a), _t_degree(b)
    if db < da:  # the loop runs over the coefficients of the factor of lower degree
        a, b, da = b, a, db
    for j in range(da + 1):
        out[j:] += a[j] * b[:n - j]
    return out


def _t_div(a, b):
    out = numpy.zeros_like(a * b)
    out[0] = a[0] / b[0]
    for k in range(1, out.shape[0]):
        out[k] = (a[k] - _t_dot(b[1:k + 1], out[k - 1::-1])) / b[0]
    return out


def _t_weights(a):
    """j * a[j] along the coefficient axis."""
    return numpy.arange(a.shape[0]).reshape((-1,) + (1,) * (a.ndim - 1)) * a


def _t_exp(a):
    out = numpy.zeros_like(a)
    out[0] = numpy.exp(a[0])
    d = _t_degree(a)
    ja = _t_weights(a[:d + 1])
    for k in range(1, a.shape[0]):
        # sum_{j=1}^{min(k, d)} j a[j] out[k-j]: a[j] = 0 past the degree d
        top = min(k, d)
        out[k] = _t_dot(ja[1:top + 1], out[k - 1:k - top - 1 if k - top - 1 >= 0 else None:-1]) / k if top else 0.0
    return out


def _t_log(a):
    """log|a| as a series (a[0] != 0)."""
    out = numpy.zeros_like(a)
    out[0] = numpy.log(numpy.abs(a[0]))
    jout = numpy.zeros_like(a)  # j out[j], filled as the orders are found
    d = _t_degree(a)
    for k in range(1, a.shape[0]):
        # sum_{j=1}^{k-1} j out[j] a[k-j], where a[k-j] = 0 for k - j > d: j from max(1, k - d)
        low = max(1, k - d)
        inner = _t_dot(jout[low:k], a[k - low:0:-1]) if k > low else 0.0
        out[k] = (a[k] - inner / k) / a[0]
        jout[k] = k * out[k]
    return out


def _t_pow(a, c):
    """a**c for a constant exponent c (a[0] > 0)."""
    out = numpy.zeros_like(a)
    out[0] = a[0] ** c
    ja = _t_weights(a)
    for k in range(1, a.shape[0]):
        # sum_{j=1}^{k} ((c + 1) j - k) a[j] out[k-j]
        rev = out[k - 1::-1]
        out[k] = ((c + 1) * _t_dot(ja[1:k + 1], rev) - k * _t_dot(a[1:k + 1], rev)) / (k * a[0])
    return out


def _t_lse(logs, plain):
    """log|sum_i exp(L_i) + sum_j P_j| for series L_i (in log space) and P_j (plain, zero at tau = 0).

    Scaled by the largest constant term, so exp((alpha-1)/b) never overflows."""
    m = logs[0][0]
    for l in logs[1:]:
        m = numpy.maximum(m, l[0])
    total = sum(_t_exp(l - _t_const(m, l)) for l in logs)
    for p in plain:
        total = total + p * numpy.exp(-m)
    out = _t_log(total)
    out[0] = out[0] + m
    return out


# -- logarithms of hyperbolic functions, without forming the function -------------------------------
def _log1mexp(a):
    """log(1 - e^(-a)) for a >= 0: log(-expm1(-a)) up to a = log 2, log1p(-e^(-a)) beyond (Maechler
    2012, "Accurately computing log(1 - exp(-|a|))", CRAN Rmpfr vignette): each keeps its relative
    accuracy where the other loses it (1 - e^(-a) next to 1, or e^(-a) next to 1)."""
    a = numpy.asarray(a, dtype=float)
    small = a <= 0.6931471805599453
    return numpy.where(small, numpy.log(-numpy.expm1(-numpy.where(small, a, 1.0))),
                       numpy.log1p(-numpy.exp(-numpy.where(small, 1.0, a))))


def _log_tanh(x):
    """log|tanh x| = log(1 - e^(-2|x|)) - log1p(e^(-2|x|)): two terms of one sign, each to a few ulps
    (log(numpy.tanh(x)) loses every digit of -2 e^(-2x) as x grows)."""
    a = 2.0 * numpy.abs(x)
    return _log1mexp(a) - numpy.log1p(numpy.exp(-a))


def _log_sinh(x):
    """log|sinh x| = |x| + log(1 - e^(-2|x|)) - log 2, with no overflow at large |x|."""
    a = numpy.abs(x)
    return a + _log1mexp(2.0 * a) - 0.6931471805599453


def _log_cosh(x):
    """log cosh x: log1p(expm1(|x|)^2 / (2 e^|x|)) up to |x| = 1 (cosh x - 1 without cancellation: the
    value ~x^2/2 keeps its digits as x -> 0), |x| + log1p(e^(-2|x|)) - log 2 beyond (no overflow)."""
    a = numpy.abs(numpy.asarray(x, dtype=float))
    small = a <= 1.0
    s = numpy.where(small, a, 0.0)
    m = numpy.expm1(s)
    return numpy.where(small, numpy.log1p(m * m / (2.0 * numpy.exp(s))),
                       a + numpy.log1p(numpy.exp(-2.0 * a)) - 0.6931471805599453)


# -- the closed form in double-double arithmetic (compile.doubled): values (hi, lo), hi + lo to ~2^-104 --
# Every operation below is within about 2^-100 of its exact value relative to the size the float
# error estimate (compile.errors) charges it with, so that estimate times 2^-48 bounds the error of the
# same algorithm run on these pairs (Dekker 1971; Hida, Li and Bailey 2001, "Algorithms for quad-double
# precision floating point arithmetic", ARITH-15, for the sum, product and quotient; exp and log by
# argument reduction, a Taylor polynomial and one Newton step).
def _dd_ln2():
    """log 2 as a double-double."""
    return (0.6931471805599453, 2.3190468138462996e-17)


def _dd_quick(a, b):
    """(a + b, its rounding error) for |a| >= |b| (Dekker's fast two-sum)."""
    s = a + b
    return s, b - (s - a)


def _dd_sum(x, y):
    """x + y to 2^-104 of |x + y| plus 2^-104 of |x| + |y| (the accurate two-sum of both parts)."""
    s, e = _dd_two_sum(x[0], y[0])
    t, f = _dd_two_sum(x[1], y[1])
    s, e = _dd_quick(s, e + t)
    return _dd_quick(s, e + f)


def _dd_neg(x):
    return (-x[0], -x[1])


def _dd_div(x, y):
    """x / y: three quotient digits, each from the remainder of the ones before."""
    q1 = x[0] / y[0]
    r = _dd_sum(x, _dd_neg(_dd_mul((q1, 0.0 * q1), y)))
    q2 = r[0] / y[0]
    r = _dd_sum(r, _dd_neg(_dd_mul((q2, 0.0 * q2), y)))
    q3 = r[0] / y[0]
    return _dd_sum(_dd_quick(q1, q2), (q3, 0.0 * q3))


def _dd_scale(x, k):
    """x * 2^k, exactly (k an integer array or scalar)."""
    return numpy.ldexp(x[0], k), numpy.ldexp(x[1], k)


def _dd_taylor_expm1(r):
    """e^r - 1 for |r| <= 0.04: 15 terms in Horner form, r (1 + r/2 (1 + r/3 (... (1 + r/15))))."""
    one = (1.0, 0.0)
    t = one
    for j in range(15, 1, -1):
        t = _dd_sum(one, _dd_mul(_dd_div(r, (float(j), 0.0)), t))
    return _dd_mul(r, t)


def _dd_double(e, times):
    """e^(2^times r) - 1 from e = e^r - 1, by e (2 + e) each time (no cancellation)."""
    for _ in range(times):
        e = _dd_mul(e, _dd_sum((2.0, 0.0), e))
    return e


def _dd_exp(x):
    """e^x: x - k log 2 reduced to |r| <= 0.35, then r / 16, Taylor, four doublings, times 2^k; 0 below
    e^-745 and inf above e^709.78 (as the float exp)."""
    hi = numpy.asarray(x[0], dtype=float)
    k = numpy.round(numpy.clip(numpy.where(numpy.isfinite(hi), hi, 0.0), -1100.0, 1100.0) / _dd_ln2()[0])
    r = _dd_sum(x, _dd_neg(_dd_mul((k, 0.0 * k), _dd_ln2())))
    e = _dd_double(_dd_taylor_expm1(_dd_scale(r, -4)), 4)
    out = _dd_scale(_dd_sum((1.0, 0.0), e), k.astype(int))
    big, tiny = ~(hi <= 709.78), hi < -745.2  # NaN counts as big: its exp stays NaN below
    return (numpy.where(big, numpy.exp(hi), numpy.where(tiny, 0.0, out[0])), numpy.where(big | tiny, 0.0, out[1]))


def _dd_expm1(x):
    """e^x - 1: x / 2^5 by Taylor and five doublings where |x| <= 1 (no cancellation next to 0), the
    exponential minus 1 beyond."""
    hi = numpy.asarray(x[0], dtype=float)
    small = numpy.abs(hi) <= 1.0
    near = _dd_double(_dd_taylor_expm1(_dd_scale((numpy.where(small, hi, 0.0), numpy.where(small, x[1], 0.0)), -5)), 5)
    far = _dd_sum(_dd_exp((numpy.where(small, 0.0, hi), numpy.where(small, 0.0, x[1]))), (-1.0, 0.0))
    return numpy.where(small, near[0], far[0]), numpy.where(small, near[1], far[1])


def _dd_log(x):
    """log x (x > 0): the float log, then one Newton step y + x e^-y - 1 (quadratic: 2^-106)."""
    y = numpy.log(numpy.asarray(x[0], dtype=float))
    fin = numpy.isfinite(y)
    y0 = numpy.where(fin, y, 0.0)
    step = _dd_sum(_dd_mul(x, _dd_exp((-y0, 0.0 * y0))), (-1.0, 0.0))
    out = _dd_sum((y0, 0.0 * y0), step)
    return numpy.where(fin, out[0], y), numpy.where(fin, out[1], 0.0)


def _dd_log1p(x):
    """log(1 + x): for |x| <= 1/2 the float log1p y, then y + (1 + x) expm1(-y) + x (a Newton step that
    keeps the digits of small x; written (E + x) + x E with E = expm1(-y), since 1 + x in
    double-double drops the low part of a tiny x); the log of 1 + x beyond."""
    y = numpy.log1p(numpy.asarray(x[0], dtype=float) + numpy.asarray(x[1], dtype=float))
    small = numpy.isfinite(y) & (numpy.abs(x[0]) <= 0.5)
    y0 = numpy.where(small, y, 0.0)
    e = _dd_expm1((-y0, 0.0 * y0))
    step = _dd_sum(_dd_sum(e, x), _dd_mul(x, e))
    near = _dd_sum((y0, 0.0 * y0), step)
    far = _dd_log(_dd_sum((1.0, 0.0), _dd_where(small, (0.0, 0.0), x)))
    return numpy.where(small, near[0], far[0]), numpy.where(small, near[1], far[1])


def _dd_sqrt(x):
    y = numpy.sqrt(numpy.asarray(x[0], dtype=float))
    fin = numpy.isfinite(y) & (y > 0)
    y0 = numpy.where(fin, y, 1.0)
    out = _dd_sum((y0, 0.0 * y0), _dd_div(_dd_sum(x, _dd_neg(_dd_mul((y0, 0.0 * y0), (y0, 0.0 * y0)))), (2.0 * y0, 0.0 * y0)))
    return numpy.where(fin, out[0], y), numpy.where(fin, out[1], 0.0)


def _dd_lt(x, y):
    return (x[0] < y[0]) | ((x[0] == y[0]) & (x[1] < y[1]))


def _dd_le(x, y):
    return (x[0] < y[0]) | ((x[0] == y[0]) & (x[1] <= y[1]))


def _dd_gt(x, y):
    return _dd_lt(y, x)


def _dd_ge(x, y):
    return _dd_le(y, x)


def _dd_eq(x, y):
    return (x[0] == y[0]) & (x[1] == y[1])


def _dd_ne(x, y):
    return ~_dd_eq(x, y)


def _dd_where(c, x, y):
    return numpy.where(c, x[0], y[0]), numpy.where(c, x[1], y[1])


def _dd_abs(x):
    return _dd_where(x[0] < 0, _dd_neg(x), x)


def _dd_sign(x):
    s = numpy.sign(x[0])
    return s, 0.0 * s


def _dd_max(x, y):
    return _dd_where(_dd_lt(x, y) | numpy.isnan(y[0]), y, x)


def _dd_min(x, y):
    return _dd_where(_dd_lt(y, x) | numpy.isnan(y[0]), y, x)


def _dd_select(conds, values, default):
    return (numpy.select(conds, [v[0] for v in values], default[0]),
            numpy.select(conds, [v[1] for v in values], default[1]))


def _dd_powi(x, n):
    """x^n for an integer n, by squaring."""
    out, base, m = (1.0, 0.0), x, abs(int(n))
    while m:
        if m & 1:
            out = _dd_mul(out, base)
        m >>= 1
        if m:
            base = _dd_mul(base, base)
    return _dd_div((1.0, 0.0), out) if n < 0 else out


def _dd_pow(x, c):
    """x^c for x > 0 and a constant c: e^(c log x)."""
    return _dd_exp(_dd_mul(c, _dd_log(x)))


def _dd_logaddexp(x, y):
    m = _dd_max(x, y)
    d = _dd_neg(_dd_abs(_dd_sum(x, _dd_neg(y))))
    fin = numpy.isfinite(d[0])
    out = _dd_sum(m, _dd_log1p(_dd_exp((numpy.where(fin, d[0], -numpy.inf), numpy.where(fin, d[1], 0.0)))))
    return numpy.where(fin, out[0], m[0]), numpy.where(fin, out[1], m[1])


def _dd_scaled_sum(logs, signs):
    """(m, t): sum_i s_i e^(l_i) = t e^m with m the largest l_i (a float; 0 where none is finite)."""
    m = logs[0][0]
    for l in logs[1:]:
        m = numpy.maximum(m, l[0])
    m = numpy.where(numpy.isfinite(m), m, 0.0)
    total = (0.0 * m, 0.0 * m)
    for l, s in zip(logs, signs):
        total = _dd_sum(total, _dd_mul(s, _dd_exp(_dd_sum(l, (-m, 0.0 * m)))))
    return m, total


def _dd_lse_abs(logs, signs):
    m, total = _dd_scaled_sum(logs, signs)
    return _dd_sum(_dd_log(_dd_abs(total)), (m, 0.0 * m))


def _dd_lse_sign(logs, signs):
    return _dd_sign(_dd_scaled_sum(logs, signs)[1])


def _dd_lse_ratio(l1, d, s, general):
    """runtime._lse_ratio in double-double: l1 + log1p(s e^-d) where d >= 0, l1 - d + log1p(s e^d)
    elsewhere; ``general()`` where d or l1 is not finite."""
    if not (numpy.all(numpy.isfinite(d[0])) and numpy.all(numpy.isfinite(l1[0]))):
        return general()
    up = d[0] >= 0
    base = _dd_where(up, l1, _dd_sum(l1, _dd_neg(d)))
    x = _dd_neg(_dd_abs(d))
    return _dd_sum(base, _dd_log1p(_dd_mul(s, _dd_exp(x))))


def _dd_log1mexp(a):
    """log(1 - e^-a), a >= 0 (runtime._log1mexp's two forms)."""
    small = a[0] <= 0.6931471805599453
    near = _dd_log(_dd_neg(_dd_expm1(_dd_neg(_dd_where(small, a, (1.0, 0.0))))))
    far = _dd_log1p(_dd_neg(_dd_exp(_dd_neg(_dd_where(small, (1.0, 0.0), a)))))
    return _dd_where(small, near, far)


def _dd_tanh(x):
    """tanh x: expm1(2x) / (expm1(2x) + 2) up to |x| = 1, sign(x) (1 - 2 / (e^(2|x|) + 1)) beyond."""
    small = numpy.abs(x[0]) <= 1.0
    t = _dd_expm1(_dd_scale(_dd_where(small, x, (0.0, 0.0)), 1))
    near = _dd_div(t, _dd_sum(t, (2.0, 0.0)))
    a = _dd_scale(_dd_abs(_dd_where(small, (1.0, 0.0), x)), 1)
    far = _dd_mul(_dd_sign(x), _dd_sum((1.0, 0.0), _dd_neg(_dd_div((2.0, 0.0), _dd_sum(_dd_exp(a), (1.0, 0.0))))))
    return _dd_where(small, near, far)


def _dd_sinh(x):
    """sinh x = (expm1(x) - expm1(-x)) / 2: two terms of one sign."""
    return _dd_scale(_dd_sum(_dd_expm1(x), _dd_neg(_dd_expm1(_dd_neg(x)))), -1)


def _dd_cosh(x):
    return _dd_scale(_dd_sum(_dd_exp(x), _dd_exp(_dd_neg(x))), -1)


def _dd_log_tanh(x):
    a = _dd_scale(_dd_abs(x), 1)
    return _dd_sum(_dd_log1mexp(a), _dd_neg(_dd_log1p(_dd_exp(_dd_neg(a)))))


def _dd_log_sinh(x):
    a = _dd_abs(x)
    return _dd_sum(_dd_sum(a, _dd_log1mexp(_dd_scale(a, 1))), _dd_neg(_dd_ln2()))


def _dd_log_cosh(x):
    """runtime._log_cosh's two forms in double-double."""
    a = _dd_abs(x)
    small = a[0] <= 1.0
    s = _dd_where(small, a, (0.0, 0.0))
    m = _dd_expm1(s)
    near = _dd_log1p(_dd_div(_dd_mul(m, m), _dd_scale(_dd_exp(s), 1)))
    far = _dd_sum(_dd_sum(a, _dd_log1p(_dd_exp(_dd_neg(_dd_scale(a, 1))))), _dd_neg(_dd_ln2()))
    return _dd_where(small, near, far)


def _dd_round(x):
    """hi + lo, NaN where either part is not finite (the double-double value is then unknown)."""
    v = x[0] + x[1]
    return numpy.where(numpy.isfinite(x[0]) & numpy.isfinite(x[1]), v, numpy.nan)


#: the functions copied into every generated module, in this order
_EMITTED = (_z, _all, _size, _whole, _blockwise, _block_coef, _block_pre, _block_outer, _memo_get, _scaled_sum, _lse2, _lse_ratio, _lse_abs, _lse_sign,
            _dd, _dd_split, _dd_two_sum, _dd_mul, _dd_add, _dd_value, _rows, _take, _gather, _settle, _series, _outer_prep, _outer_rows, _series_outer, _outer_pairs, _outer_products, _truncated, _series_rect,
            _t_const, _t_dot, _t_degree, _t_mul, _t_div, _t_weights, _t_exp, _t_log, _t_pow, _t_lse)


#: helpers copied only into a module that calls them (directly or through another copied helper), so
#: the modules of closed forms without these functions stay as they were
_OPTIONAL = (_log1mexp, _log_tanh, _log_sinh, _log_cosh,
             _dd_ln2, _dd_quick, _dd_sum, _dd_neg, _dd_div, _dd_scale, _dd_taylor_expm1, _dd_double, _dd_exp, _dd_expm1, _dd_log,
             _dd_log1p, _dd_sqrt, _dd_lt, _dd_le, _dd_gt, _dd_ge, _dd_eq, _dd_ne, _dd_where, _dd_abs, _dd_sign, _dd_max,
             _dd_min, _dd_select, _dd_powi, _dd_pow, _dd_logaddexp, _dd_scaled_sum, _dd_lse_abs, _dd_lse_sign,
             _dd_lse_ratio, _dd_log1mexp, _dd_tanh, _dd_sinh, _dd_cosh, _dd_log_tanh, _dd_log_sinh, _dd_log_cosh, _dd_round)


def source(module_text: str = "") -> str:
    """The text of the run-time helpers for a generated module: ``_BLOCK``, every function of
    ``_EMITTED`` with the comments above it, and each function of ``_OPTIONAL`` that ``module_text``
    (the rest of the module) or a helper copied for it calls, read from this module (the generated
    module then needs only numpy)."""
    def text(fn) -> str:
        return (inspect.getcomments(fn) or "") + inspect.getsource(fn).rstrip("\n")

    def calls(name: str, code: str) -> bool:
        return re.search(rf"\b{re.escape(name)}\(", code) is not None

    parts = [f"_BLOCK = {_BLOCK!r}"]
    for fn in _EMITTED:
        parts.append(text(fn))
    needed: list = []
    pending = [module_text]
    while pending:
        code = pending.pop()
        for fn in _OPTIONAL:
            if fn not in needed and calls(fn.__name__, code):
                needed.append(fn)
                pending.append(text(fn))
    parts += [text(fn) for fn in _OPTIONAL if fn in needed]  # in the order of _OPTIONAL (callees first)
    return "\n\n\n".join(parts) + "\n"
