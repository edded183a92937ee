"""``dpfix certify``: an exact certificate that a constructor's mechanism is optimal.

``dpfix certify --n 51 --lam 3/2`` builds the northwest corner of the uniform
target exactly and certifies it optimal over F for the absolute deviation
(:func:`dpfix.certify.certify_optimal`, docs/optimum_of_F.md); other
constructors (Algorithm 1 with a selector, the exact LP, Algorithm 2 over U)
and losses (squared, zero-one, capped, hinge, sqrt) the same way. Prints
"optimal", or the exact gap bound, and the times; the certificate is re-checked
from scratch (:meth:`dpfix.certify.Certificate.check`) before it is reported.

Sizes are guarded (:data:`MAX_N`; everything is exact, so time and memory grow fast
with ``n``: the northwest corner at ``n = 200`` takes 6 s, the exact LP at ``n = 20``
ran 9 minutes inside cdd, where no signal stops it): a larger ``--n`` is bad input,
exit code 2, as is a loss that is not one (``capped:C`` with ``C <= 0``).
"""

from __future__ import annotations

import argparse
import sys
import time
from typing import Any

from dpfix.cli._arguments import add_renamed, plain_int
from dpfix.constructors import SELECTORS
from dpfix.numbers.exact import exact_array, exact_lam

__all__ = ["add_parser", "run", "CONSTRUCTORS", "NAMED_Z", "MAX_N", "check_loss"]

#: The constructors ``--constructor`` accepts.
CONSTRUCTORS = ("northwest", "heuristic", "lp", "unfixed")
#: Named targets ``--z`` accepts besides a list of rationals (dpfix.explore.cases.standard_z).
NAMED_Z = ("uniform", "geometric", "asymmetric", "zero")
#: The largest ``n`` certified, by what is asked: the constructors (the northwest corner
#: at n = 200: 6 s, its fractions' denominators of 6,700 digits), ``--universal`` (2n - 1
#: certificates: n = 60 takes 10 s) and the exact LP (``--constructor lp`` or ``--dual
#: lp``: n = 12 takes 1.3 s, n = 20 over 8 minutes).
MAX_N = {"constructor": 300, "universal": 100, "lp": 12}


def add_parser(sub: Any) -> argparse.ArgumentParser:
    """Register ``dpfix certify``."""
    p = sub.add_parser(
        "certify", help="exact certificate of optimality (or the exact gap) of a mechanism",
        description="Build a mechanism exactly (rational lam and z) and certify it by LP "
                    "duality: 'optimal' when a dual point, re-verified in exact arithmetic "
                    "over every eps-scale (Lemma 1), matches its count error; otherwise a "
                    "proved lower bound on the optimum and the gap. Over F the dual is the "
                    "northwest corner's (optimal for every convex loss), over U Algorithm "
                    "2's (Theorem 8); for n <= 10 an exact dual LP closes any gap.",
        epilog="examples: dpfix certify --n 51 --lam 3/2; dpfix certify --z 1/4 1/8 1/8 1/2 "
               "--constructor heuristic --selector min; dpfix certify --n 4 --lam 3 "
               "--loss zero-one; dpfix certify --n 30 --constructor unfixed --loss "
               "squared")
    p.add_argument("--n", type=plain_int,
                   help="number of counts (default: the length of --z, else 10)")
    p.add_argument("--z", nargs="+", metavar="Z",
                   help=f"target: n rationals summing to 1, or one of {', '.join(NAMED_Z)} "
                        "(default uniform)")
    p.add_argument("--lam", default="2", help="lam = e^eps, a rational above 1 (default 2)")
    p.add_argument("--loss", default="abs",
                   help="loss f(i - j): abs (default), squared, zero-one, capped:C, hinge:A, "
                        "sqrt (rounded to 12 decimals); the count error is sum z_i f(i-j) T_ij")
    add_renamed(p, "--weights", "--loss")
    p.add_argument("--constructor", choices=CONSTRUCTORS, default="northwest",
                   help="northwest (default), heuristic (Algorithm 1, see --selector), lp "
                        "(the exact LP optimum; small n), unfixed (Algorithm 2, over U)")
    p.add_argument("--selector", default="max", choices=SELECTORS,
                   help="Algorithm 1's selector (default max)")
    p.add_argument("--over", choices=("F", "U"),
                   help="certify over F (fixed point z) or U (default: U for unfixed, else F)")
    p.add_argument("--dual", choices=("auto", "explicit", "lp"), default="auto",
                   help="auto (default): the explicit dual, then the exact dual LP if a gap "
                        "remains and n <= 10; explicit: never the LP; lp: always")
    p.add_argument("--exact", action="store_true",
                   help="print every exact number in full (default: in full up to 40 "
                        "characters, else as a decimal and the size of its denominator)")
    p.add_argument("--universal", action="store_true",
                   help="northwest only: certify every hinge (d - a)^+, i.e. every convex loss")
    return p


def check_loss(name: str) -> None:
    """Refuse a loss name that is unknown or is not a loss (:func:`dpfix.theory.mechanism.loss`:
    ``capped:C`` needs ``C > 0``, as ``min(|d|, C)`` with ``C <= 0`` counts no error, or a
    negative one); the message names ``--loss``.

    Examples
    --------
    >>> check_loss("capped:2")
    >>> check_loss("capped:-1")
    Traceback (most recent call last):
    ...
    ValueError: --loss capped:-1: the cap C of capped:C must be > 0 (min(|d|, C) with C <= 0 \
counts no error, or a negative one)
    """
    from dpfix.theory.mechanism import loss

    try:
        loss(name)  # an unknown name, a missing or unreadable parameter, a cap <= 0
    except ValueError as exc:
        own = f"loss: {name}: "  # the library's refusal of this name, named for the CLI
        if str(exc).startswith(own):
            raise ValueError(f"--loss {name}: {str(exc)[len(own):]}") from None
        raise


def _check_size(n: int, args: argparse.Namespace) -> None:
    """Refuse ``n`` beyond :data:`MAX_N` for what is asked."""
    if args.constructor == "lp" or args.dual == "lp":
        what, why = "lp", ("--constructor lp" if args.constructor == "lp" else "--dual lp") + \
            " solves the exact LP in cdd (n = 20 ran over 8 minutes)"
    elif args.universal:
        what, why = "universal", "--universal certifies 2n - 1 hinges"
    else:
        what, why = "constructor", "every number is exact: the time grows like n^4"
    if n > MAX_N[what]:
        raise ValueError(f"--n {n}: certified for n <= {MAX_N[what]} ({why})")


def _target(n: int | None, z_text: list[str] | None) -> list:
    from dpfix.explore.cases import standard_z

    if n is not None and n > MAX_N["constructor"]:
        raise ValueError(f"--n {n}: certified for n <= {MAX_N['constructor']} (every number "
                         "is exact: the time grows like n^4)")
    if z_text and len(z_text) == 1 and z_text[0] in NAMED_Z:
        return list(standard_z(n if n is not None else 10)[z_text[0]])
    if z_text:
        z = exact_array(z_text, "--z", ndim=1)
        if n is not None and n != len(z):
            raise ValueError(f"--n {n} disagrees with the {len(z)} entries of --z")
        return list(z)
    n = 10 if n is None else n
    if n < 2:
        raise ValueError(f"--n: must be >= 2, got {n}")
    return list(standard_z(n)["uniform"])


def _build(args: argparse.Namespace, z: list, lam: Any, over: str) -> Any:
    from dpfix import constructors as c

    name = args.constructor
    if name == "northwest":
        return c.northwest_corner(z, lam=lam)
    if name == "heuristic":
        return c.heuristic(z, lam=lam, selector=args.selector)
    from dpfix.theory.mechanism import weight_matrix

    W = weight_matrix(args.loss, z, exact=True)
    if name == "lp":
        return c.lp_optimum(z, lam=lam, loss=W, solver="exact", fixed=over == "F")
    return c.unfixed_optimum(z, lam=lam, loss=W)


def _num(x: Any, full: bool) -> str:
    """An exact number: in full when short (or asked), else a decimal and its size."""
    bits = max(abs(x.numerator).bit_length(), x.denominator.bit_length())
    if full or bits <= 120:
        if full and hasattr(sys, "set_int_max_str_digits"):
            sys.set_int_max_str_digits(0)  # --exact: print fractions of any length
        text = str(x)
        return f"{text} (~{float(x):.12g})" if "/" in text else text
    digits = int(x.denominator.bit_length() * 0.30103) + 1
    return f"~{float(x):.12g} (exact: a fraction with a denominator of about {digits} digits)"


def run(args: argparse.Namespace) -> int:
    """Run ``dpfix certify``: print the verdict and the times; 0 once the certificate checks."""
    from dpfix.certify import certify_optimal, certify_universal

    lam = exact_lam(args.lam)
    if not args.universal:
        check_loss(args.loss)
    z = _target(args.n, args.z)
    n = len(z)
    _check_size(n, args)
    over = args.over or ("U" if args.constructor == "unfixed" else "F")
    if args.constructor == "unfixed" and over == "F":
        raise ValueError("--constructor unfixed has no fixed point: certify it with --over U")
    if args.universal and args.constructor != "northwest":
        raise ValueError("--universal certifies the northwest corner only")
    label = args.constructor + (f" ({args.selector})" if args.constructor == "heuristic" else "")
    print(f"{label}: n = {n}, lam = {lam}, over {over}"
          + ("" if args.universal else f", loss {args.loss}"), flush=True)
    start = time.perf_counter()
    M = _build(args, z, lam, over)
    built = time.perf_counter() - start
    if args.universal:
        uc = certify_universal(z, lam, M.matrix, dual=args.dual)
        certified = time.perf_counter() - start - built
        uc.check()
        checked = time.perf_counter() - start - built - certified
        bad = [a for a, cert in uc.hinges if not cert.optimal]
        verdict = ("OPTIMAL for every convex loss (all hinges (d - a)^+, a = "
                   f"{-(n - 1)}..{n - 1})" if not bad else f"NOT optimal for hinges {bad}")
        print(verdict)
    else:
        cert = certify_optimal(M, z, lam, args.loss, kind=over, dual=args.dual)
        certified = time.perf_counter() - start - built
        cert.check()
        checked = time.perf_counter() - start - built - certified
        full = args.exact
        if cert.optimal:
            print(f"OPTIMAL over {over}: count error {_num(cert.value, full)}, certified by "
                  f"the {cert.dual} dual")
        else:
            exact = " (the exact optimum)" if cert.dual == "lp" else ""
            rel = float(cert.gap / cert.value) if cert.value else float("inf")
            print(f"NOT proved optimal over {over}: count error {_num(cert.value, full)}\n"
                  f"  >= lower bound{exact} {_num(cert.lower_bound, full)}\n"
                  f"  gap <= {_num(cert.gap, full)} ({rel:.3g} relative), {cert.dual} dual")
    print(f"time: built {built:.3f} s, certified {certified:.3f} s, re-checked {checked:.3f} s")
    return 0
