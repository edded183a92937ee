"""Certificates of optimality over F and U, checked exactly (Theorem A, docs/optimum_of_F.md).

Weak duality: a dual point ``(u, v)`` that passes the cone test
(:mod:`dpfix.certify.cone`) proves ``sum_i u_i + sum_j z_j v_j <= <W, T'>`` for
every ``T'`` in F; equality with ``<W, T>`` proves ``T`` optimal. Over U drop ``v``
(Theorem 8's setting). :func:`certify_optimal` builds such a certificate for a
given mechanism from the dual points of :mod:`dpfix.certify.duals`,
:func:`exact_optimum` solves the dual exactly for small ``n``, and
:func:`certify_universal` certifies the ``2n - 1`` hinge losses (every convex
loss) on one instance. :meth:`Certificate.check` re-verifies everything from
the stored exact numbers and ties them to ``(z, lam)`` and the named loss.

Arithmetic is exact throughout: python-flint's ``fmpq`` inside, Fractions at
the interface; floats are refused with :class:`dpfix.numbers.exact.ExactnessError`.
With an algebraic ``lam`` (:func:`dpfix.algebraic`) the same code computes in ``Q(lam)``
(:class:`dpfix.numbers.algebraic.Algebraic` elements mix exactly with ``fmpq``): the
explicit dual points, the cone test and :meth:`Certificate.check`.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import numpy as np
from flint import fmpq

from dpfix.certify.cone import CertificateError, _infeasible_columns
from dpfix.certify.duals import _highs_dual, _northwest_dual_q, _repair, _scale_lp, _unfixed_dual_q
from dpfix.numbers.algebraic import exact_field_array, is_algebraic
from dpfix.numbers.deprecation import no_other, renamed, renamed_attribute
from dpfix.numbers.exact import (
    ExactnessError,
    exact_dot,
    exact_lam,
    from_fmpq,
    from_fmpq_array,
    probability_vector,
    to_fmpq,
)
from dpfix.theory.mechanism import Mechanism, exact_weights, loss, weight_matrix

__all__ = ["Certificate", "UniversalCertificate", "certify_optimal", "certify_universal",
           "exact_optimum", "loss_label", "CUSTOM"]


#: How a certificate's ``loss`` label starts when its ``W`` is not a named loss
#: (a matrix or a callable ``f``): :meth:`Certificate.check` cannot rebuild it from ``z``.
CUSTOM = "custom"


def loss_label(loss: Any) -> str:
    """The ``loss`` label of a certificate: the loss name, or ``"custom ..."`` for a matrix
    or a callable (:data:`CUSTOM`).

    Examples
    --------
    >>> loss_label("hinge:1"), loss_label([[0, 1], [1, 0]]), loss_label(abs)
    ('hinge:1', 'custom matrix', 'custom f abs')
    """
    if isinstance(loss, str):
        return loss
    if callable(loss):
        return f"{CUSTOM} f {getattr(loss, '__name__', 'callable')}"
    return f"{CUSTOM} matrix"


#: Largest ``n`` at which :func:`certify_optimal` (``dual="auto"``) falls back on
#: the exact dual LP when the explicit dual point leaves a gap.
LP_MAX_N = 10


# ---------------------------------------------------------------- certificates
@dataclass
class Certificate:
    """An exact certificate of (sub)optimality of a count mechanism over F or U.

    Parameters
    ----------
    optimal : True iff ``gap == 0`` and the dual point is feasible (then ``T``
        minimises ``<W, T>`` over F, resp. U); a ``bool``.
    value : ``<W, T>``, exact.
    lower_bound : ``sum_i u_i + sum_j z_j v_j`` (over U: ``sum_i u_i``), a lower
        bound on the optimum proved by the dual point (weak duality).
    gap : ``value - lower_bound >= 0``; ``T`` is within ``gap`` of the optimum.
    u, v : the dual point (``v`` all zero over U).
    T, W, z, lam, kind : what is certified (exact arrays, Fractions); ``n = len(z)``.
    dual : how the dual point was found (``"northwest"``, ``"unfixed"``,
        ``"repaired"``, ``"lp"``, ``"highs"``).
    loss : the loss: a name of :data:`dpfix.theory.mechanism.LOSSES` (then ``W`` is
        ``z_i f(i - j)`` for that loss, and :meth:`check` rebuilds it from ``z``),
        or a label starting with ``"custom"`` (``"custom matrix"``, ``"custom f
        NAME"``) for a loss given as a matrix or a callable: the certificate
        is then about the stored ``W`` alone, and says so. ``weights`` is its
        deprecated name (a property that warns).
    seconds : time to build the certificate; details : what the construction
        reports (not certified).

    Examples
    --------
    >>> cert = certify_optimal([["2/3", "1/3"], ["1/3", "2/3"]], ["1/2", "1/2"], 2)
    >>> cert.optimal, cert.value, cert.gap
    (True, Fraction(1, 3), Fraction(0, 1))
    >>> cert.check().optimal
    True
    >>> print(cert)  # doctest: +ELLIPSIS
    optimal over F (n = 2, lam = 2, loss = abs): value 1/3, lower bound 1/3 [northwest dual, ...]
    >>> print(certify_optimal(cert.T, cert.z, 2, [[0, 1], [1, 0]]))  # doctest: +ELLIPSIS
    optimal over F (n = 2, lam = 2, loss = custom matrix, the stored W): value 2/3, ...
    """

    optimal: bool
    value: Fraction
    lower_bound: Fraction
    gap: Fraction
    u: np.ndarray
    v: np.ndarray
    T: np.ndarray
    W: np.ndarray
    z: np.ndarray
    lam: Fraction
    kind: str = "F"
    dual: str = ""
    loss: str = ""
    seconds: float = 0.0
    details: dict = field(default_factory=dict)

    @property
    def custom_loss(self) -> bool:
        """True when ``W`` is not a named loss (a matrix or callable was given)."""
        return isinstance(self.loss, str) and self.loss.startswith(CUSTOM)

    weights = renamed_attribute("weights", "loss")
    over = renamed_attribute("over", "kind")
    custom_weights = renamed_attribute("custom_weights", "custom_loss")

    def check(self) -> Certificate:
        """Re-verify everything from the stored numbers alone, in exact arithmetic.

        Checks, independently of the code that built the dual point: ``optimal``
        is a bool and ``kind`` is ``"F"`` or ``"U"``; ``lam > 1`` and every
        number is exact; ``z`` is a probability vector, ``n = len(z)`` and ``T``,
        ``W``, ``u``, ``v`` have the shapes ``n x n``, ``n x n``, ``n``, ``n``;
        ``W`` is the named loss's ``z_i f(i - j)`` (unless ``loss`` says
        ``"custom ..."``); ``T`` is in F (resp. U) exactly; over U, ``v = 0``;
        ``value == <W, T>``; every ``g_j = W[:, j] - u - v_j z`` is non-negative
        on the cone of eps-DP columns (Lemma 1: the minimum over lattice walks,
        by its own recursion); ``lower_bound == sum u + z . v``; ``gap == value -
        lower_bound``; ``optimal == (gap == 0)``.

        Returns
        -------
        Certificate
            ``self``, when every check passes.

        Raises
        ------
        CertificateError
            Naming the first check that fails.

        Examples
        --------
        >>> from dataclasses import replace
        >>> cert = certify_optimal([["2/3", "1/3"], ["1/3", "2/3"]], ["1/2", "1/2"], 2)
        >>> replace(cert, W=2 * cert.W, value=2 * cert.value, u=2 * cert.u, v=2 * cert.v,
        ...         lower_bound=2 * cert.lower_bound).check()
        Traceback (most recent call last):
        CertificateError: certificate (F, abs): W is not the loss abs on z ...
        """
        def fail(msg: str) -> None:
            raise CertificateError(f"certificate ({self.kind}, {self.loss}): {msg}")

        def exact(xs: Any, name: str, ndim: int) -> Any:
            arr = np.asarray(xs, dtype=object)
            if arr.ndim != ndim:
                fail(f"{name} must have {ndim} dimension(s), not {arr.ndim}")
            try:
                if ndim == 0:
                    return to_fmpq(arr.item(), name)
                if ndim == 1:
                    return [to_fmpq(x, name) for x in arr]
                return [[to_fmpq(x, name) for x in row] for row in arr]
            except (TypeError, ValueError) as e:  # ExactnessError is a TypeError
                fail(f"{name} is not exact: {e}")

        if not isinstance(self.optimal, bool):
            fail(f"optimal must be a bool, not {self.optimal!r}")
        if self.kind not in ("F", "U"):
            fail(f"kind must be 'F' or 'U', not {self.kind!r}")
        if not isinstance(self.loss, str):
            fail(f"loss must be a label (str), not {self.loss!r}")
        lam = exact(self.lam, "lam", 0)
        if lam <= 1:
            fail("lam must be > 1")
        z = exact(self.z, "z", 1)
        T = exact(self.T, "T", 2)
        W = exact(self.W, "W", 2)
        u = exact(self.u, "u", 1)
        v = exact(self.v, "v", 1)
        n = len(z)
        if not (n >= 1 and len(T) == len(W) == len(u) == len(v) == n
                and all(len(r) == n for r in T) and all(len(r) == n for r in W)):
            fail("shapes of T, W, u, v and z do not agree")
        if any(x < 0 for x in z) or sum(z, fmpq(0)) != 1:
            fail("z is not a probability vector")
        self._check_loss(z, W, fail)
        self._check_polytope(z, T, lam, fail)
        if self.kind == "U" and any(x != 0 for x in v):
            fail("over U the dual point has no v: v must be 0")
        value = fmpq(0)
        for i in range(n):
            for j in range(n):
                value += W[i][j] * T[i][j]
        if value != exact(self.value, "value", 0):
            fail(f"value {self.value} != <W, T> = {from_fmpq(value)}")
        bad = _infeasible_columns(self.W, self.u, self.v, self.z, from_fmpq(lam))  # exact: checked
        if bad:
            fail(f"the dual point is infeasible: column {bad[0]} of W - u - z v is negative "
                 f"on an eps-scale")
        bound = sum(u, fmpq(0)) + exact_dot(z, v)
        if bound != exact(self.lower_bound, "lower_bound", 0):
            fail(f"lower_bound {self.lower_bound} != sum u + z.v = {from_fmpq(bound)}")
        if exact(self.gap, "gap", 0) != value - bound:
            fail(f"gap {self.gap} != value - lower_bound = {from_fmpq(value - bound)}")
        if self.optimal != (value == bound):
            fail(f"optimal = {self.optimal} but the gap is {from_fmpq(value - bound)}")
        return self

    def _check_loss(self, z: list, W: list, fail: Any) -> None:
        """``W`` is the named loss on ``z``; a custom ``W`` is taken as stored."""
        if self.custom_loss:
            return
        try:
            loss(self.loss)
        except ValueError:
            fail(f"loss {self.loss!r} is neither a loss name nor '{CUSTOM} ...'")
        want = weight_matrix(self.loss, from_fmpq_array(z), exact=True)
        n = len(z)
        for i in range(n):
            for j in range(n):
                if W[i][j] != to_fmpq(want[i, j]):
                    fail(f"W is not the loss {self.loss} on z: W[{i}, {j}] = {from_fmpq(W[i][j])}, "
                         f"z_i f(i - j) = {want[i, j]}")

    def _check_polytope(self, z: list, T: list, lam: fmpq, fail: Any) -> None:
        """``T`` in U (rows: probability vectors, columns eps-DP), and over F ``z T = z``."""
        n = len(z)
        for i in range(n):
            if any(x < 0 for x in T[i]):
                fail(f"T has a negative entry in row {i}")
            if sum(T[i], fmpq(0)) != 1:
                fail(f"row {i} of T does not sum to 1")
        for i in range(n - 1):
            for j in range(n):
                if T[i][j] > lam * T[i + 1][j] or T[i + 1][j] > lam * T[i][j]:
                    fail(f"T is not eps-DP: column {j}, rows {i} and {i + 1}")
        if self.kind == "F":
            for j in range(n):
                if sum((z[i] * T[i][j] for i in range(n)), fmpq(0)) != z[j]:
                    fail(f"z T != z in column {j}")

    def __str__(self) -> str:
        def num(x: Any) -> str:
            if not isinstance(x, Fraction):  # an element of Q(lam)
                return f"~{float(x):.12g}"
            if max(abs(x.numerator).bit_length(), x.denominator.bit_length()) <= 120:
                return str(x)
            return f"~{float(x):.12g}"
        head = "optimal" if self.optimal else f"not proved optimal: gap <= {num(self.gap)}"
        label = self.loss + (", the stored W" if self.custom_loss else "")
        return (f"{head} over {self.kind} (n = {len(self.z)}, lam = {self.lam}, "
                f"loss = {label}): value {num(self.value)}, lower bound "
                f"{num(self.lower_bound)} [{self.dual} dual, {self.seconds:.3g} s]")

    def to_latex(self) -> str:
        """``T``, the dual point ``(u, v)``, the value, the lower bound and the gap as an
        exact LaTeX ``aligned`` block (matrices by :func:`dpfix.numbers.display.to_latex`).

        Examples
        --------
        >>> cert = certify_optimal([["2/3", "1/3"], ["1/3", "2/3"]], ["1/2", "1/2"], 2)
        >>> print(cert.to_latex().splitlines()[-2])
        \\text{gap} &= 0
        """
        from dpfix.numbers import display

        def q(x: Any) -> str:
            return display.to_latex([x]).splitlines()[1]  # the one entry of a 1 x 1 matrix

        lines = [f"T &= {display.to_latex(self.T)}", f"u &= {display.to_latex(self.u)}",
                 f"v &= {display.to_latex(self.v)}",
                 f"\\langle W, T \\rangle &= {q(self.value)}",
                 f"\\textstyle\\sum_i u_i + z \\cdot v &= {q(self.lower_bound)}",
                 f"\\text{{gap}} &= {q(self.gap)}"]
        return "\\begin{aligned}\n" + " \\\\\n".join(lines) + "\n\\end{aligned}"

    def to_sympy(self) -> dict[str, Any]:
        """The certificate's numbers as sympy objects: ``T``, ``W`` (Matrices), ``u``,
        ``v``, ``z`` (``1 x n`` Matrices), ``lam``, ``value``, ``lower_bound``, ``gap``
        (Rationals); see :func:`dpfix.numbers.display.to_sympy`.

        Examples
        --------
        >>> cert = certify_optimal([["2/3", "1/3"], ["1/3", "2/3"]], ["1/2", "1/2"], 2)
        >>> s = cert.to_sympy()
        >>> s["value"], (s["T"] * s["W"].T).trace() == s["value"]
        (1/3, True)
        """
        from dpfix.numbers import display

        out = {k: display.to_sympy(getattr(self, k)) for k in ("T", "W", "u", "v", "z")}
        for k in ("lam", "value", "lower_bound", "gap"):
            out[k] = display.to_sympy([getattr(self, k)])[0, 0]
        return out


def _inputs(T: Any, z: Any, lam: Any, loss: Any, kind: str
            ) -> tuple[np.ndarray, np.ndarray, Fraction, np.ndarray]:
    if kind not in ("F", "U"):
        raise ValueError(f"kind: 'F' or 'U', got {kind!r}")
    if isinstance(T, Mechanism):
        if not T.exact:
            raise ExactnessError("T: a float mechanism; certificates need an exact one "
                                 "(build it with a rational lam)")
        z = T.fixed_point if z is None else z
        lam = T.lam if lam is None else lam
        T = T.matrix
    if z is None or lam is None:
        raise ValueError("give z and lam (or an exact Mechanism that holds them)")
    Tm = exact_field_array(T, "T", ndim=2)
    zv = probability_vector(z, exact=True, n=Tm.shape[0])
    lam_x = exact_lam(lam, algebraic=True)
    if Tm.shape != (zv.shape[0],) * 2:
        raise ValueError(f"T: expected shape {(zv.shape[0],) * 2}, got {Tm.shape}")
    return Tm, zv, lam_x, exact_weights(loss, zv)


def _build(Tm: np.ndarray, zv: np.ndarray, lam_x: Fraction, W: np.ndarray, kind: str,
           dual: str, lp_max_n: int, label: str, start: float) -> Certificate:
    n = zv.shape[0]
    lq = to_fmpq(lam_x)
    zq = [to_fmpq(x) for x in zv]
    Wc = [[to_fmpq(W[i, j]) for i in range(n)] for j in range(n)]
    Tq = [[to_fmpq(x) for x in row] for row in Tm]
    value = fmpq(0)
    for i in range(n):
        for j in range(n):
            value += Wc[j][i] * Tq[i][j]
    rho = 1 / lq
    for i in range(n):  # refuse a T outside the polytope: its value bounds nothing
        if any(x < 0 for x in Tq[i]) or sum(Tq[i], fmpq(0)) != 1:
            raise ValueError(f"T: row {i} is not a probability vector")
        if i < n - 1 and any(a > lq * b or b > lq * a for a, b in zip(Tq[i], Tq[i + 1],
                                                                      strict=True)):
            raise ValueError(f"T: not eps-DP between rows {i} and {i + 1} (lam = {lam_x})")
    if kind == "F" and any(exact_dot(zq, [Tq[i][j] for i in range(n)]) != zq[j]
                           for j in range(n)):
        raise ValueError("T: z T != z (not in F); use kind='U' for mechanisms without "
                         "the fixed point")
    details: dict[str, Any] = {}

    def repaired_dual(u: list, v: list | None) -> tuple[list, list | None, list, Any]:
        """A dual point made feasible (:func:`_repair` of its infeasible columns), the
        columns repaired, and its bound ``sum u + z . v``."""
        bad = _infeasible_columns(W, from_fmpq_array(u), from_fmpq_array(v or [fmpq(0)] * n),
                                  zv, lam_x, first_only=False)
        u, v, repaired = _repair(zq if kind == "F" else None, lq, Wc, u, v, bad)
        return u, v, repaired, sum(u, fmpq(0)) + (exact_dot(zq, v) if v is not None else 0)

    field = is_algebraic(lam_x)  # over Q(lam): the explicit dual points, repaired; no LP
    if dual == "lp" and field:
        raise ValueError(f"dual='lp': the exact dual LP runs over Q (cdd.gmp), not over "
                         f"Q(lam) with lam = {lam_x}; use dual='explicit'")
    if dual == "lp":
        u, v, Topt, rounds = _scale_lp(zq if kind == "F" else None, lq, Wc)
        how = "lp"
        details.update(lp_rounds=rounds, optimum_T=Topt)
    else:
        if kind == "F":
            u, v = _northwest_dual_q(zq, lq, Wc)
        else:
            u, v = _unfixed_dual_q(lq, Wc), None
        u, v, repaired, bound = repaired_dual(u, v)
        how = ("northwest" if kind == "F" else "unfixed") if not repaired else "repaired"
        details["repaired_columns"] = repaired
        if dual == "auto" and bound != value and field:
            details["explicit_bound"] = from_fmpq(bound)  # a proved bound; no LP over Q(lam)
        elif dual == "auto" and bound != value and n <= lp_max_n:
            details["explicit_bound"] = from_fmpq(bound)
            u, v, Topt, rounds = _scale_lp(zq if kind == "F" else None, lq, Wc)
            how = "lp"
            details.update(lp_rounds=rounds, optimum_T=Topt)
        elif dual == "auto" and bound != value:
            details["explicit_bound"] = from_fmpq(bound)
            guess = _highs_dual(zv if kind == "F" else None, lam_x, W)
            if guess is not None:
                gu, gv, grep, gbound = repaired_dual(*guess)
                if gbound > bound:
                    u, v, how = gu, gv, "highs"
                    details["repaired_columns"] = grep
    if v is None:
        v = [fmpq(0)] * n
    bound = sum(u, fmpq(0)) + exact_dot(zq, v)
    gap = value - bound
    if gap < 0:  # impossible for a feasible dual point and T in the polytope
        raise RuntimeError(f"certify: negative gap {from_fmpq(gap)}: a bug, please report")
    del rho
    return Certificate(optimal=gap == 0, value=from_fmpq(value), lower_bound=from_fmpq(bound),
                       gap=from_fmpq(gap), u=from_fmpq_array(u), v=from_fmpq_array(v), T=Tm,
                       W=W, z=zv, lam=lam_x, kind=kind, dual=how, loss=label,
                       seconds=time.perf_counter() - start, details=details)


def certify_optimal(T: Any, z: Any = None, lam: Any = None, loss: Any = "abs",
                    kind: str = "F", *, dual: str = "auto", lp_max_n: int = LP_MAX_N,
                    **deprecated: Any) -> Certificate:
    """An exact certificate that ``T`` minimises ``<W, T>`` over F (or U), or of how far
    it can be from the minimum.

    Over F the dual point is the northwest corner's (Theorem A of
    docs/optimum_of_F.md: feasible and tight for every Monge cost, so the
    northwest corner gets ``optimal=True`` for every convex ``f``); over U it is
    Algorithm 2's (Theorem 8). Dual feasibility is decided by the walk
    recursion over eps-scales (Lemma 1). When the explicit point leaves a gap
    (a suboptimal ``T``, or a loss outside the theorem) it is repaired to
    feasibility, so ``lower_bound`` is always a proved bound, and for
    ``n <= lp_max_n`` replaced by the exact optimum of the dual LP: then
    ``lower_bound`` is the optimum itself and ``gap`` the exact distance.

    Parameters
    ----------
    T : an exact :class:`~dpfix.theory.mechanism.Mechanism` or an ``n x n`` matrix of
        exact numbers, in F (resp. U).
    z : the target (defaults to the mechanism's fixed point); also weighs the
        rows of the count error.
    lam : exact ``lam = e^eps > 1`` (defaults to the mechanism's): rational, or a real
        algebraic number (:func:`dpfix.algebraic`): then every number lies in ``Q(lam)``
        and the dual point is the explicit one, repaired if need be (the exact dual LP
        runs over Q only: ``dual="lp"`` is refused, ``"auto"`` does without it).
    loss : ``"abs"``, ``"squared"``, another name of
        :data:`dpfix.theory.mechanism.LOSSES`, a callable
        ``f`` (``W[i, j] = z_i f(i - j)``, exact values) or an ``n x n`` matrix.
    kind : ``"F"`` (with the fixed point ``z``) or ``"U"`` (without); ``over=`` is its
        deprecated name.
    dual : ``"auto"`` (explicit point, then the exact LP if a gap remains and
        ``n <= lp_max_n``), ``"explicit"`` (never the LP) or ``"lp"`` (always).
    lp_max_n : the largest ``n`` at which ``"auto"`` runs the exact LP.
    **deprecated : ``weights=`` (now ``loss=``), with a ``DeprecationWarning``.

    Returns
    -------
    Certificate
        Check it with :meth:`Certificate.check`.

    Raises
    ------
    ExactnessError
        A float ``T``, ``z``, ``lam`` or loss value.
    ValueError
        ``T`` is not in F (resp. U), or bad arguments.
    TypeError
        ``loss=`` and ``weights=`` given at once, or an unknown keyword.

    Examples
    --------
    >>> from dpfix.constructors import northwest_corner
    >>> z = ["1/4", "1/8", "1/8", "1/2"]
    >>> cert = certify_optimal(northwest_corner(z, lam=2), z, 2, loss="squared")
    >>> cert.optimal, cert.dual, cert.gap
    (True, 'northwest', Fraction(0, 1))
    >>> from dpfix.constructors import heuristic
    >>> bad = certify_optimal(heuristic(z, lam=2, selector="min"), z, 2)
    >>> bad.optimal, bad.gap > 0, bad.check() is bad
    (False, True, True)
    """
    start = time.perf_counter()
    loss = renamed("weights", "loss", deprecated, loss, "abs", where="certify_optimal")
    kind = renamed("over", "kind", deprecated, kind, "F", where="certify_optimal")
    no_other(deprecated, "certify_optimal")
    if dual not in ("auto", "explicit", "lp"):
        raise ValueError(f"dual: 'auto', 'explicit' or 'lp', got {dual!r}")
    Tm, zv, lam_x, W = _inputs(T, z, lam, loss, kind)
    return _build(Tm, zv, lam_x, W, kind, dual, lp_max_n, loss_label(loss), start)


def exact_optimum(z: Any, lam: Any, loss: Any = "abs", kind: str = "F",
                  **deprecated: Any) -> Certificate:
    """The exact optimum of ``<W, T>`` over F (or U) and its certificate, for any loss.

    Parameters
    ----------
    z : exact target; lam : rational ``lam > 1``.
    loss : as in :func:`dpfix.theory.mechanism.weight_matrix` (any loss, convex or not).
    kind : ``"F"`` or ``"U"`` (``over=``: its deprecated name).
    **deprecated : ``weights=`` (now ``loss=``), with a ``DeprecationWarning``.

    Column generation on the dual LP (``2n`` variables), with the walk
    recursion of :func:`cone_minimum` as the separation oracle (Lemma 1) and
    cdd.gmp for the exact restricted LPs; the optimal ``T`` is read off their
    multipliers. Far smaller LPs than the ``n^2``-variable primal of
    :func:`dpfix.constructors.lp_optimum`; meant for ``n`` up to about 10.

    Returns
    -------
    Certificate
        Of the optimal ``T`` (``optimal=True``, ``dual="lp"``);
        ``details["lp_rounds"]`` counts the LPs solved.

    Examples
    --------
    >>> opt = exact_optimum(["1/3", "1/3", "1/3"], 2, loss="zero-one")
    >>> opt.optimal, opt.value
    (True, Fraction(10, 21))
    """
    start = time.perf_counter()
    loss = renamed("weights", "loss", deprecated, loss, "abs", where="exact_optimum")
    kind = renamed("over", "kind", deprecated, kind, "F", where="exact_optimum")
    no_other(deprecated, "exact_optimum")
    zv = probability_vector(z, exact=True)
    lam_x = exact_lam(lam)
    W = exact_weights(loss, zv)
    n = zv.shape[0]
    lq = to_fmpq(lam_x)
    zq = [to_fmpq(x) for x in zv]
    Wc = [[to_fmpq(W[i, j]) for i in range(n)] for j in range(n)]
    _, _, Topt, _ = _scale_lp(zq if kind == "F" else None, lq, Wc)
    cert = _build(Topt, zv, lam_x, W, kind, "lp", n, loss_label(loss), start)
    cert.details.pop("optimum_T", None)
    return cert


# ---------------------------------------------------------------- universal
@dataclass
class UniversalCertificate:
    """Certificates of the northwest corner for every hinge ``(d - a)^+``.

    A convex ``f`` on ``-(n-1) .. n-1`` is an affine function plus a non-negative
    combination of these hinges; the affine part is constant on F, so when every
    hinge certificate is optimal the northwest corner is optimal for every
    convex loss on this instance (docs/optimum_of_F.md).
    """

    optimal: bool
    T: np.ndarray
    z: np.ndarray
    lam: Fraction
    hinges: list[tuple[int, Certificate]]
    seconds: float = 0.0

    def check(self) -> UniversalCertificate:
        """Re-verify every hinge certificate (:meth:`Certificate.check`), that all certify
        this ``T``, ``z``, ``lam`` with the hinge weights, and the ``optimal`` flag."""
        if not isinstance(self.optimal, bool):
            raise CertificateError(f"universal: optimal must be a bool, not {self.optimal!r}")
        n = len(self.z)
        have = sorted(a for a, _ in self.hinges)
        if have != list(range(-(n - 1), n)):
            raise CertificateError(f"universal: hinges {have} != -(n-1) .. n-1")
        for a, cert in self.hinges:
            cert.check()
            W = exact_weights(f"hinge:{a}", self.z)
            if not ((cert.T == self.T).all() and (cert.W == W).all()
                    and (cert.z == self.z).all() and cert.lam == self.lam and cert.kind == "F"):
                raise CertificateError(f"universal: hinge {a} certifies another instance")
        if self.optimal != all(c.optimal for _, c in self.hinges):
            raise CertificateError("universal: optimal flag disagrees with the hinges")
        return self

    def to_latex(self) -> str:
        """``T`` and, for each hinge ``a``, its value and lower bound, as an exact LaTeX
        ``aligned`` block (:meth:`Certificate.to_latex` gives one hinge in full).

        Examples
        --------
        >>> u = certify_universal(["1/2", "1/2"], 2)
        >>> print("\\n".join(u.to_latex().splitlines()[-4:-1]))
        (d + 1)^+ &: 1 = 1 \\\\
        d^+ &: \\frac{1}{6} = \\frac{1}{6} \\\\
        (d - 1)^+ &: 0 = 0
        """
        from dpfix.numbers import display

        def q(x: Any) -> str:
            return display.to_latex([x]).splitlines()[1]

        def hinge(a: int) -> str:
            return "d^+" if a == 0 else f"(d {'-' if a > 0 else '+'} {abs(a)})^+"

        lines = [f"T &= {display.to_latex(self.T)}"]
        lines += [f"{hinge(a)} &: {q(c.value)} {'=' if c.optimal else '>'} {q(c.lower_bound)}"
                  for a, c in self.hinges]
        return "\\begin{aligned}\n" + " \\\\\n".join(lines) + "\n\\end{aligned}"

    def to_sympy(self) -> dict[str, Any]:
        """``T``, ``z`` (sympy Matrices), ``lam`` (a Rational) and ``hinges``: hinge ``a``
        -> that hinge's :meth:`Certificate.to_sympy`.

        Examples
        --------
        >>> u = certify_universal(["1/2", "1/2"], 2).to_sympy()
        >>> sorted(u["hinges"]), u["T"] == u["hinges"][0]["T"]
        ([-1, 0, 1], True)
        """
        from dpfix.numbers import display

        return {"T": display.to_sympy(self.T), "z": display.to_sympy(self.z),
                "lam": display.to_sympy([self.lam])[0, 0],
                "hinges": {a: c.to_sympy() for a, c in self.hinges}}


def certify_universal(z: Any, lam: Any, T: Any = None, *, dual: str = "explicit"
                      ) -> UniversalCertificate:
    """Certify the northwest corner of ``z`` for all ``2n - 1`` hinge losses at once.

    ``optimal=True`` proves, on this instance, that the northwest corner
    minimises ``sum_ij z_i f(i - j) T_ij`` over F for **every** convex ``f``
    (the fixed-point analogue of Ghosh et al.'s universal optimality; Theorem A
    of docs/optimum_of_F.md proves it for every instance).

    Parameters
    ----------
    z, lam : exact target and exact ``lam > 1`` (rational, or algebraic: over ``Q(lam)``).
    T : the mechanism to certify (default: ``northwest_corner(z, lam=lam)``).
    dual : passed to :func:`certify_optimal`.

    Examples
    --------
    >>> uc = certify_universal(["1/2", "0", "1/4", "1/4"], "3/2")
    >>> uc.optimal, len(uc.hinges), uc.check() is uc
    (True, 7, True)
    """
    from dpfix.constructors import northwest_corner

    start = time.perf_counter()
    zv = probability_vector(z, exact=True)
    lam_x = exact_lam(lam, algebraic=True)
    n = zv.shape[0]
    Tm = northwest_corner(zv, lam=lam_x).matrix if T is None else T
    hinges = [(a, certify_optimal(Tm, zv, lam_x, f"hinge:{a}", dual=dual))
              for a in range(-(n - 1), n)]
    Tx = hinges[0][1].T
    return UniversalCertificate(optimal=all(c.optimal for _, c in hinges), T=Tx, z=zv,
                                lam=lam_x, hinges=hinges, seconds=time.perf_counter() - start)


