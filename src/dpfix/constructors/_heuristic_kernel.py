"""Algorithm 1's single code path and its two number types (paper Section 5.2).

:func:`run` is the algorithm. Its passes never touch a number themselves but
ask an arithmetic object: :class:`ExactOps` (Fractions, a rational ``lam``) or
:class:`LogOps` (float64 natural logarithms, ``-inf`` for zero, given ``eps``),
as pycddlib runs one implementation over two number types. When numba is
installed, the float passes of a column run in a compiled loop
(:func:`_fill_column_loop`, compiled by :func:`_fill_column_jit` on first use, so
that importing dpfix never imports numba) that keeps the same state and is tested against the
vectorised path and the exact one.

Why the remaining row mass ``r`` is held in blocks: wherever ``r`` has become
tight at a position ``a`` (locked), every later scale keeps the ratio
``r[a+1]/r[a]`` exactly. So ``r`` is a list of blocks (maximal runs joined by
locked positions), each one amount (``r`` at the block's first position) times
a fixed profile ``lam^(heights)``; only the height ``span`` from the block's
first to its last position is needed. A lock merges two blocks. The locked
relations then hold by construction instead of being re-derived from floating
sums, which is what makes a naive float implementation drift (its rows stop
summing to 1 somewhere between n = 200 and 500). In floats every amount is a
logarithm, so entries such as ``e^-50000`` (n = 10,000, eps = 5) stay
representable.

Floats hold ``r`` to about 1e-15 absolutely (each row's spent mass is exact to
rounding), not relatively: where ``r`` falls to that level the exact ties can
no longer be followed. Two rules keep the float run valid there: the last
column takes ``c_j = z . r`` (the exact identity ``sum(c) = z . r``; the
tracked ``c_j`` cannot see rows of tiny ``z``), and a block of ``r`` that a
step spends is set to 0 and drops out of the constraints
(:meth:`_Vectorised._kill`) instead of ending the run. The exact path asserts
that neither rule ever changes anything there.
"""

from __future__ import annotations

import functools
import importlib.util
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import numpy as np

from dpfix.numbers.numeric import log_add_exp

__all__ = ["ExactOps", "LogOps", "Run", "run", "TIE_RTOL", "HAVE_NUMBA"]

#: numba (optional: compiles the float passes, about 10x faster) is installed; it is
#: imported only when a float mechanism is first built.
HAVE_NUMBA = importlib.util.find_spec("numba") is not None

#: Float path: step lengths closer than this (relative) count as a tie. A tie
#: missed by rounding costs one more pass of length about zero, which then
#: locks the position; a false tie moves ``r`` by about ``TIE_RTOL * lam^2`` of
#: a step, so the tolerance stays near the rounding level.
TIE_RTOL = 1e-13

# exp() of arguments below about -708 returns subnormal numbers, many times
# slower; terms that small cannot change a float64 sum anyway.
_EXP_FLOOR = -700.0


def _obj(values: list) -> np.ndarray:
    out = np.empty(len(values), dtype=object)
    out[:] = values
    return out


class ExactOps:
    """Exact arithmetic: every quantity is a Fraction (object arrays)."""

    exact = True

    def __init__(self, lam: Fraction, z: np.ndarray) -> None:
        self.lam, self.z = lam, z
        self.c2 = lam * lam - 1
        self.zero, self.one = Fraction(0), Fraction(1)

    def from_values(self, v: np.ndarray) -> np.ndarray:
        return _obj(list(v))

    def full(self, n: int, value: Fraction) -> np.ndarray:
        return _obj([value] * n)

    def positive(self, x: np.ndarray) -> np.ndarray:
        return np.array([v > 0 for v in x], dtype=bool)

    def times_lam_pow(self, a: np.ndarray, k: np.ndarray) -> np.ndarray:
        return _obj([v * self.lam ** int(e) for v, e in zip(a, k, strict=True)])

    def scale(self, h: np.ndarray) -> tuple[np.ndarray, Fraction]:
        """The scale with heights ``h``, and ``z . s``."""
        w = _obj([self.lam ** int(v) for v in h - h.min()])
        s = w / sum(w)
        return s, sum(self.z * s)

    def scale_at(self, s: np.ndarray, idx: np.ndarray) -> np.ndarray:
        return s[idx]

    def ratio(self, a: Fraction, b: Fraction) -> Fraction:
        return a / b

    def step_limits(self, amt, r_end, s_f, s_e, up):
        """Largest steps keeping each block of ``r - g s`` non-negative, and
        each unlocked neighbour inequality of ``r - g s`` (paper Section 5.2)."""
        g_zero = amt / s_f
        hi = np.where(up, amt[1:], r_end[:-1])  # the side that must stay >= lo / lam
        lo = np.where(up, r_end[:-1], amt[1:])
        rate = self.c2 * np.where(up, s_e[:-1], s_f[1:])  # (lam^2-1) min(s_a, s_a+1)
        return g_zero, (self.lam * hi - lo) / rate

    def minimum(self, x: np.ndarray) -> Fraction:
        return min(x)

    def tie(self, x: np.ndarray, m: Fraction) -> np.ndarray:
        return np.array([v == m for v in x], dtype=bool)

    def tie1(self, x: Fraction, m: Fraction) -> bool:
        return x == m

    def spend(self, amt, s_f, g, g_zero, zeroed):
        out = amt - g * s_f
        out[zeroed] = self.zero
        return out

    def spend1(self, c: Fraction, g: Fraction, zs: Fraction) -> Fraction:
        return c - g * zs

    def z_dot_r(self, starts, amt, offsets) -> Fraction:
        """``z . r`` with ``r[i] = amt[block(i)] * lam^offsets[i]``."""
        lengths = np.diff(np.append(starts, len(self.z)))
        r = np.repeat(amt, lengths) * self.lam_pows(offsets)
        return sum(self.z * r)

    def lam_pows(self, k: np.ndarray) -> np.ndarray:
        return _obj([self.lam ** int(e) for e in k])

    def last_column_mass(self, c: Fraction, zr: Fraction) -> Fraction:
        if c != zr:  # the invariant sum(c) = z . r of Algorithm 1, exactly
            raise AssertionError(f"heuristic: c_j = {c} but z . r = {zr}")
        return c

    def new_matrix(self, n: int) -> np.ndarray:
        A = np.empty((n, n), dtype=object)
        A[:] = Fraction(0)
        return A

    def add_to_column(self, A: np.ndarray, j: int, g: Fraction, s: np.ndarray, first: bool) -> None:
        A[:, j] += g * s


class LogOps:
    """Float64 arithmetic in natural logarithms (``-inf`` stands for 0).

    A scale is kept as ``(eps*h, shift)``: ``log s = eps*h - shift``.
    """

    exact = False

    def __init__(self, eps: float, z: np.ndarray) -> None:
        self.eps, self.z = float(eps), z
        # log(lam^2 - 1), stable for large eps (expm1(2 eps) overflows past eps ~ 355)
        self.log_c2 = 2 * self.eps + math.log1p(-math.exp(-2 * self.eps))
        self.zero, self.one = -np.inf, 0.0

    def from_values(self, v: np.ndarray) -> np.ndarray:
        with np.errstate(divide="ignore"):
            return np.log(np.asarray(v, dtype=float))

    def full(self, n: int, value: float) -> np.ndarray:
        return np.full(n, value, dtype=float)

    def positive(self, x: np.ndarray) -> np.ndarray:
        return x > -np.inf

    def times_lam_pow(self, a: np.ndarray, k: np.ndarray) -> np.ndarray:
        return a + self.eps * k

    def scale(self, h: np.ndarray) -> tuple[tuple[np.ndarray, float], float]:
        eh = self.eps * h
        top = eh.max()
        w = np.exp(np.maximum(eh - top, _EXP_FLOOR))
        total = w.sum()
        return (eh, top + math.log(total)), math.log(self.z @ w) - math.log(total)

    def scale_at(self, s: tuple, idx: np.ndarray) -> np.ndarray:
        return s[0][idx] - s[1]

    def ratio(self, a: float, b: float) -> float:
        return a - b

    def step_limits(self, amt, r_end, s_f, s_e, up):
        g_zero = amt - s_f
        a1, re = amt[1:], r_end[:-1]
        with np.errstate(invalid="ignore", divide="ignore"):  # dead blocks: -inf - -inf
            # log(lam*hi - lo) = log hi + eps + log1p(-e^t), t = log lo - log hi - eps <= 0
            t = np.where(up, re - a1, a1 - re) - self.eps
            base = np.where(up, a1 - s_e[:-1], re - s_f[1:]) + (self.eps - self.log_c2)
            g_u = np.where(t < 0, base + np.log1p(-np.exp(np.minimum(t, 0.0))), -np.inf)
        return g_zero, g_u

    def minimum(self, x: np.ndarray) -> float:
        return float(x.min())

    def tie(self, x: np.ndarray, m: float) -> np.ndarray:
        return x <= m + TIE_RTOL

    def tie1(self, x: float, m: float) -> bool:
        return bool(x <= m + TIE_RTOL)

    def spend(self, amt, s_f, g, g_zero, zeroed):
        # r - g s on each block: amt + log(1 - e^(g - g_zero)), g <= g_zero
        with np.errstate(invalid="ignore", divide="ignore"):
            out = amt + np.log1p(-np.exp(np.minimum(g - g_zero, 0.0)))
        out[zeroed | np.isnan(out)] = -np.inf
        return out

    def spend1(self, c: float, g: float, zs: float) -> float:
        d = g + zs - c
        return c + math.log1p(-math.exp(d)) if d < 0 else -math.inf

    def z_dot_r(self, starts, amt, offsets) -> float:
        lengths = np.diff(np.append(starts, len(self.z)))
        with np.errstate(divide="ignore"):
            v = np.log(self.z) + np.repeat(amt, lengths) + self.eps * offsets
        top = v.max()
        return top + math.log(np.exp(np.maximum(v - top, _EXP_FLOOR)).sum()) if top > -np.inf \
            else -math.inf

    def last_column_mass(self, c: float, zr: float) -> float:
        # c_j tracked by subtraction carries an absolute error near 1e-16 z_j,
        # which can exceed the z . r of rows where z is tiny (1e-40): the last
        # column takes the exact identity c_j = z . r instead, so r is spent
        return zr

    def new_matrix(self, n: int) -> np.ndarray:
        # row j holds column j of log T (contiguous writes) until run() ends;
        # written whole when column j is first chosen, the rest set to -inf
        return np.empty((n, n))

    def add_to_column(self, LT: np.ndarray, j: int, g: float, s: tuple, first: bool) -> None:
        eh, shift = s
        v = eh + (g - shift)
        if first:
            LT[j] = v
            return
        row = LT[j]
        top = np.maximum(row, v)
        with np.errstate(invalid="ignore"):
            gap = np.maximum(-np.abs(row - v), _EXP_FLOOR)
        gap[np.isnan(gap)] = _EXP_FLOOR  # both -inf
        row[:] = top + np.log1p(np.exp(gap))


@dataclass
class Run:
    """What one run of Algorithm 1 produced.

    ``matrix`` is the exact ``T`` (exact path) or ``log T`` (float path);
    ``steps[t] = (j, amount, locks)``: pass ``t`` added ``amount`` times the
    scale whose pattern is the single-peaked pattern at ``j`` overridden by the
    locks of the earlier passes; ``locks`` are the ``(a, direction)`` set by
    pass ``t`` itself. Float amounts are natural logarithms.
    """

    matrix: np.ndarray
    steps: list = field(default_factory=list)
    lock: np.ndarray | None = None
    order: list = field(default_factory=list)
    passes: int = 0
    max_passes: int = 0
    compiled: bool = False


class _Vectorised:
    """The passes of one column, vectorised over blocks, for either number type."""

    def __init__(self, ops: Any, n: int, c: np.ndarray, out: Run) -> None:
        self.ops, self.n, self.c, self.out = ops, n, c, out
        self.lock = np.zeros(max(n - 1, 0), dtype=np.int64)
        self.starts = np.arange(n)  # first position of each block of r
        self.span = np.zeros(n, dtype=np.int64)  # height from a block's first to last position
        self.amt = ops.full(n, ops.one)  # r at each block's first position
        self.below = np.arange(n - 1)

    def fill(self, j: int, last: bool) -> bool:
        """Fill column ``j`` (``last``: no other column remains); False if the
        float ``r`` ran out first (rounding)."""
        ops, n, out = self.ops, self.n, self.out
        lock = self.lock
        p = np.where(lock != 0, lock, np.where(self.below < j, 1, -1))
        first = True
        while True:
            if last:
                self.c[j] = ops.last_column_mass(self.c[j], self._z_dot_r())
            out.passes += 1
            if out.passes > out.max_passes:
                raise RuntimeError(
                    f"heuristic: more than |P| + n - 1 = {out.max_passes} passes; "
                    "the float arithmetic lost the invariants of Algorithm 1")
            s, zs = ops.scale(np.concatenate(([0], np.cumsum(p))))
            g = ops.ratio(self.c[j], zs)  # the step that fills column j
            starts, amt = self.starts, self.amt
            ends = np.append(starts[1:] - 1, n - 1)
            s_f, s_e = ops.scale_at(s, starts), ops.scale_at(s, ends)
            u = ends[:-1]  # block boundaries: the unlocked positions (and dead ones)
            g_zero, g_u = ops.step_limits(amt, ops.times_lam_pow(amt, self.span), s_f, s_e,
                                          p[u] > 0)
            # Dead blocks (floats only) constrain nothing; see _kill.
            live = ops.positive(amt)
            both = live[:-1] & live[1:]
            gstar = min([g, ops.minimum(g_zero[live])]
                        + ([ops.minimum(g_u[both])] if both.any() else []))
            if ops.exact and gstar <= 0:
                raise AssertionError("heuristic: a zero-length step in exact arithmetic")
            filled = ops.tie1(g, gstar)
            ops.add_to_column(out.matrix, j, gstar, s, first)
            first = False
            zeroed = live & ops.tie(g_zero, gstar)
            self.amt = ops.spend(amt, s_f, gstar, g_zero, zeroed)
            self.c[j] = ops.zero if filled else ops.spend1(self.c[j], gstar, zs)
            tied = both & ops.tie(g_u, gstar) if len(u) else np.zeros(0, dtype=bool)
            if zeroed.any():
                # Exactly, a block of r reaches 0 only when all of r does (r
                # stays eps-indistinguishable), in the pass filling the last column.
                if ops.exact and not (zeroed.all() and filled and tied.all()):
                    raise AssertionError("heuristic: a block of r reached 0 before the rest")
                if not ops.exact:
                    tied &= ~(zeroed[:-1] | zeroed[1:])
            tied = np.flatnonzero(tied)
            new = [(int(u[k]), -int(p[u[k]])) for k in tied]
            dead = self._kill(zeroed, u, p) if zeroed.any() and not ops.exact else []
            out.steps.append((j, gstar, tuple(sorted(new + dead))))
            if new:
                self._merge(tied, new)
                p[u[tied]] = lock[u[tied]]
            if not ops.positive(self.amt).any():
                return False  # r is spent (exactly: with the last column); c is rounding
            if filled:
                return True

    def _kill(self, zeroed: np.ndarray, u: np.ndarray, p: np.ndarray) -> list:
        """Floats: blocks whose r fell to rounding level (a step of length
        ``g_zero``) stay at 0 and drop out of the constraints.

        Exactly this cannot happen before the end; in floats it does where r is
        below the rounding of the row sums (about 1e-15, often far from the
        current column), and ending the run there would strand the r still
        held elsewhere. Their neighbours are then within ``lam`` of that level,
        so later scales overfill the dead rows by about ``lam^2`` times it at
        most. Each boundary of a dead block is marked locked (so every pass
        still locks a position or fills a column: the pass bound holds), in
        the direction that makes later scales lower on the dead side.
        """
        out = []
        for k, a in enumerate(u):
            if self.lock[a] == 0 and (zeroed[k] or zeroed[k + 1]):
                d = -int(p[a]) if zeroed[k] and zeroed[k + 1] else (1 if zeroed[k] else -1)
                self.lock[a] = p[a] = d
                out.append((int(a), d))
        return out

    def _z_dot_r(self) -> Any:
        height = np.concatenate(([0], np.cumsum(self.lock)))  # profile heights, per block
        lengths = np.diff(np.append(self.starts, self.n))
        return self.ops.z_dot_r(self.starts, self.amt,
                                height - np.repeat(height[self.starts], lengths))

    def _merge(self, tied: np.ndarray, new: list) -> None:
        """Join block ``k+1`` to block ``k`` for each tied boundary ``k`` (chains too)."""
        keep = np.ones(len(self.starts), dtype=bool)
        keep[tied + 1] = False
        group = np.cumsum(keep) - 1
        add = self.span.copy()
        for k, (a, d) in zip(tied, new, strict=True):
            self.lock[a] = d
            add[k + 1] += d  # the locked step joins the two profiles
        span = np.zeros(int(keep.sum()), dtype=np.int64)
        np.add.at(span, group, add)
        self.starts, self.amt, self.span = self.starts[keep], self.amt[keep], span

    def finish(self) -> Run:
        self.out.lock = self.lock
        return self.out


def run(ops: Any, n: int, choose: Callable[[np.ndarray, np.ndarray], int],
        compiled: bool | None = None) -> Run:
    """Algorithm 1 (paper Section 5.2) on either number type.

    ``choose(c, remaining)`` returns the next column (the caller validates it);
    ``c`` is in the ops' representation (Fractions, or logs). ``compiled``:
    use the numba loop for floats (default: when numba is installed).
    """
    c = ops.from_values(ops.z)
    remaining = ops.positive(c)
    out = Run(matrix=ops.new_matrix(n), max_passes=int(remaining.sum()) + n - 1)
    if compiled is None:
        compiled = HAVE_NUMBA
    if compiled and not ops.exact:
        if not HAVE_NUMBA:
            raise RuntimeError("heuristic: the compiled kernel needs numba")
        filler: Any = _Compiled(ops, n, c, out)
    else:
        filler = _Vectorised(ops, n, c, out)
    while remaining.any():
        j = choose(c, remaining)
        out.order.append(j)
        if not filler.fill(j, int(remaining.sum()) == 1):
            remaining[:] = False  # r is spent; what is left of c is rounding (checked later)
        remaining[j] = False
    if not ops.exact:
        unused = np.ones(n, dtype=bool)
        unused[out.order] = False
        out.matrix[unused] = -np.inf
        _transpose_in_place(out.matrix)
    return filler.finish()


def _transpose_in_place(A: np.ndarray, b: int = 256) -> None:
    """Square ``A`` becomes ``A.T``, C-ordered, block by block: no second copy
    of an 800 MB matrix, and the checks that follow read rows contiguously
    (about 3x faster than on the transposed view)."""
    n = A.shape[0]
    for i in range(0, n, b):
        d = A[i:i + b, i:i + b]
        d[...] = d.T.copy()
        for j in range(i + b, n, b):
            upper = A[i:i + b, j:j + b].T.copy()
            A[i:i + b, j:j + b] = A[j:j + b, i:i + b].T
            A[j:j + b, i:i + b] = upper


class _Compiled:
    """The float passes of one column in a numba loop, on fixed-size arrays."""

    def __init__(self, ops: LogOps, n: int, c: np.ndarray, out: Run) -> None:
        self.ops, self.n, self.c, self.out = ops, n, c, out
        out.compiled = True
        eps = ops.eps
        self.kcap = int(min(2 * n + 2, math.floor(-_EXP_FLOOR / eps)))
        self.table = np.exp(-eps * np.arange(self.kcap + 1))  # lam^-k, each exact to rounding
        m = max(n - 1, 1)
        self.lock, self.p = np.zeros(m, dtype=np.int64), np.zeros(m, dtype=np.int64)
        self.h, self.h1 = np.zeros(n, dtype=np.int64), np.zeros(n, dtype=np.int64)
        self.starts = np.arange(n, dtype=np.int64)
        self.span = np.zeros(n, dtype=np.int64)
        self.amt = np.zeros(n)
        self.changed = np.ones(n, dtype=np.bool_)
        self.dying = np.zeros(n, dtype=np.bool_)
        self.Lp, self.Lm, self.g_u = np.zeros(n), np.zeros(n), np.zeros(n)
        self.seg_start, self.seg_A = np.zeros(n, dtype=np.int64), np.zeros(n)
        self.nb = n
        self.amounts = np.zeros(out.max_passes)
        self.columns = np.zeros(out.max_passes, dtype=np.int64)
        self.lock_pos = np.zeros(n, dtype=np.int64)
        self.lock_pass = np.zeros(n, dtype=np.int64)
        self.counters = np.array([0, out.max_passes, 0], dtype=np.int64)  # passes, bound, locks

    def fill(self, j: int, last: bool) -> bool:
        self.nb, status = _fill_column_jit()(
            j, last, self.ops.z, self.ops.eps, self.ops.log_c2, self.table, self.kcap, TIE_RTOL,
            self.lock, self.p, self.h, self.h1, self.starts, self.amt, self.span, self.changed,
            self.dying, self.Lp, self.Lm, self.g_u, self.nb, self.seg_start, self.seg_A, self.c,
            self.out.matrix, self.amounts, self.columns, self.lock_pos, self.lock_pass,
            self.counters)
        self.out.passes = int(self.counters[0])
        if status == 1:
            raise RuntimeError(
                f"heuristic: more than |P| + n - 1 = {self.out.max_passes} passes; "
                "the float arithmetic lost the invariants of Algorithm 1")
        return status == 0

    def finish(self) -> Run:
        o, n = self.out, self.n
        events: list[list] = [[] for _ in range(o.passes)]
        for k in range(int(self.counters[2])):
            a = int(self.lock_pos[k])
            events[int(self.lock_pass[k])].append((a, int(self.lock[a])))
        o.steps = [(int(self.columns[t]), float(self.amounts[t]), tuple(events[t]))
                   for t in range(o.passes)]
        o.lock = self.lock[: max(n - 1, 0)]
        return o


_log_add = log_add_exp  # compiled below when numba is installed


def _log1m_exp(t: float) -> float:
    """``log(1 - e^t)`` for ``t < 0``; ``-inf`` otherwise (also for NaN)."""
    return math.log1p(-math.exp(t)) if t < 0 else -math.inf


def _log_z_dot_r(z, lock, starts, amt, nb, eps):
    """``log(z . r)`` from the blocks of ``r`` (streaming log-sum-exp)."""
    n = z.shape[0]
    top = -math.inf
    total = 0.0
    b = 0
    height = 0
    for i in range(n):
        if b + 1 < nb and starts[b + 1] == i:
            b += 1
        if i == starts[b]:
            height = 0
        elif i > 0:
            height += lock[i - 1]
        if z[i] <= 0.0 or amt[b] == -math.inf:
            continue
        v = math.log(z[i]) + amt[b] + eps * height
        if v > top:
            total = total * math.exp(max(top - v, -700.0)) + 1.0 if top > -math.inf else 1.0
            top = v
        else:
            total += math.exp(max(v - top, -700.0))
    return top + math.log(total) if top > -math.inf else -math.inf


def _fill_column_loop(j, last, z, eps, log_c2, table, kcap, tol, lock, p, h, h1, starts, amt, span,
                      changed, dying, Lp, Lm, g_u, nb, seg_start, seg_A, c, LT, amounts, columns,
                      lock_pos, lock_pass, counters):
    """:meth:`_Vectorised.fill` for floats as one loop (compiled by numba).

    Two savings keep a pass near ``O(n)`` cheap operations: ``log(1 - e^t)`` of
    each unlocked inequality depends only on the two neighbouring blocks of
    ``r`` and is recomputed only when one of them changed; and the passes of one
    column differ from its first pass by a step function (constant between
    positions locked meanwhile), so the column is ``log`` of the first pass plus
    a per-segment correction, written once. Returns ``(nb, status)``; status 0:
    column filled, 1: pass bound exceeded, 2: ``r`` spent first (rounding).
    """
    n = z.shape[0]
    ninf = -math.inf
    for a in range(n - 1):
        p[a] = lock[a] if lock[a] != 0 else (1 if a < j else -1)
    nseg = 1
    seg_start[0] = 0
    seg_A[0] = 0.0
    off1 = 0.0
    first = True
    status = -1
    while status < 0:
        if counters[0] >= counters[1]:
            status = 1
            break
        if last:  # see LogOps.last_column_mass
            c[j] = _log_z_dot_r(z, lock, starts, amt, nb, eps)
        h[0] = 0
        hmax = 0
        for i in range(1, n):
            h[i] = h[i - 1] + p[i - 1]
            if h[i] > hmax:
                hmax = h[i]
        total = 0.0
        ztotal = 0.0
        for i in range(n):
            k = hmax - h[i]
            if k <= kcap:
                total += table[k]
                ztotal += z[i] * table[k]
        shift = eps * hmax + math.log(total)  # log s = eps*h - shift
        zs = math.log(ztotal) - math.log(total)
        g = c[j] - zs
        gstar = g
        for b in range(nb):
            if amt[b] == ninf:
                continue  # a dead block (see _Vectorised._kill)
            gz = amt[b] - (eps * h[starts[b]] - shift)
            if gz < gstar:
                gstar = gz
        for b in range(nb - 1):
            e = starts[b + 1] - 1  # the unlocked position between blocks b and b+1
            if amt[b] == ninf or amt[b + 1] == ninf:
                g_u[b] = math.inf
                continue
            re = amt[b] + eps * span[b]
            if changed[b] or changed[b + 1]:
                Lp[b] = _log1m_exp(re - amt[b + 1] - eps)
                Lm[b] = _log1m_exp(amt[b + 1] - re - eps)
            if p[e] > 0:
                v = amt[b + 1] - (eps * h[e] - shift) + (eps - log_c2) + Lp[b]
            else:
                v = re - (eps * h[e + 1] - shift) + (eps - log_c2) + Lm[b]
            g_u[b] = v
            if v < gstar:
                gstar = v
        for b in range(nb):
            changed[b] = False
        filled = g <= gstar + tol
        off = gstar - shift
        if first:
            if gstar > ninf:  # a float pass of length zero adds nothing
                for i in range(n):
                    h1[i] = h[i]
                off1 = off
                first = False
        else:
            for q in range(nseg):
                i = seg_start[q]
                seg_A[q] = _log_add(seg_A[q], off - off1 + eps * (h[i] - h1[i]))
        amounts[counters[0]] = gstar
        columns[counters[0]] = j
        counters[0] += 1
        alive = False
        for b in range(nb):
            dying[b] = False
            if amt[b] == ninf:
                continue
            x = gstar + (eps * h[starts[b]] - shift) - amt[b]  # log(g s_f / r_f) <= 0
            if x >= -tol:
                dying[b] = True
                amt[b] = ninf
                changed[b] = True
            else:
                if x > -50.0:  # smaller changes are below float64 resolution
                    amt[b] += math.log1p(-math.exp(x))
                    changed[b] = True
                alive = True
        if filled:
            c[j] = ninf
        else:
            c[j] = c[j] + _log1m_exp(gstar + zs - c[j])
        w = 1
        for b in range(1, nb):
            e = starts[b] - 1
            if dying[b - 1] or dying[b]:
                if lock[e] == 0:  # see _Vectorised._kill
                    if dying[b - 1] and dying[b]:
                        lock[e] = -p[e]
                    else:
                        lock[e] = 1 if dying[b - 1] else -1
                    p[e] = lock[e]
                    lock_pos[counters[2]] = e
                    lock_pass[counters[2]] = counters[0] - 1
                    counters[2] += 1
                starts[w] = starts[b]
                amt[w] = amt[b]
                span[w] = span[b]
                changed[w] = True
                dying[w] = dying[b]
                Lp[w - 1] = Lp[b - 1]
                Lm[w - 1] = Lm[b - 1]
                w += 1
            elif g_u[b - 1] <= gstar + tol:
                lock[e] = -p[e]
                p[e] = lock[e]
                lock_pos[counters[2]] = e
                lock_pass[counters[2]] = counters[0] - 1
                counters[2] += 1
                span[w - 1] += lock[e] + span[b]
                changed[w - 1] = True
                q = nseg  # the column's correction now also steps at e + 1
                while seg_start[q - 1] > e + 1:
                    seg_start[q] = seg_start[q - 1]
                    seg_A[q] = seg_A[q - 1]
                    q -= 1
                seg_start[q] = e + 1
                seg_A[q] = seg_A[q - 1]
                nseg += 1
            else:
                starts[w] = starts[b]
                amt[w] = amt[b]
                span[w] = span[b]
                changed[w] = changed[b]
                dying[w] = dying[b]
                Lp[w - 1] = Lp[b - 1]
                Lm[w - 1] = Lm[b - 1]
                w += 1
        nb = w
        if not alive:
            status = 2
        elif filled:
            status = 0
    q = 0
    for i in range(n):
        while q + 1 < nseg and seg_start[q + 1] <= i:
            q += 1
        LT[j, i] = ninf if first else eps * h1[i] + off1 + seg_A[q]
    return nb, status


@functools.cache
def _fill_column_jit() -> Callable:
    """:func:`_fill_column_loop` compiled by numba (imported here, on first use); its
    helpers are compiled first and replace their Python versions in this module,
    where the compiled loop looks them up."""
    import numba

    g = globals()
    for name in ("_log_add", "_log1m_exp", "_log_z_dot_r"):
        g[name] = numba.njit(cache=True)(g[name])
    return numba.njit(cache=True)(_fill_column_loop)
