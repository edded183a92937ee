"""Floor 2, theory: the objects of the paper, exactly.

- :mod:`dpfix.theory.scales`: eps-scales, ``psi``, single-peaked columns (Lemma 1);
- :mod:`dpfix.theory.polytopes`: U, F, R_F and R_U as exact H-representations, their
  vertices, extremality and symmetry (Theorems 2, 3, 10);
- :mod:`dpfix.theory.enumeration`: the exact vertex-enumeration backends (cddlib,
  Normaliz) behind the polytopes' methods;
- :mod:`dpfix.theory.algebraic_enumeration`: the same over ``Q(lam)`` for an algebraic
  ``lam`` (Normaliz's number-field input, U's structural count);
- :mod:`dpfix.theory.parametric`: the chambers and breakpoints of U, F and R_F as lam
  varies (``dpfix.parametric.chambers``);
- :mod:`dpfix.theory.representation`: Psi-affine simplification, movement spaces,
  decompositions (Theorem 4, Proposition 1, Corollaries 2 and 3);
- :mod:`dpfix.theory.delta`: the (eps, delta) polytopes, subset and lifted forms, and
  their extreme points;
- :mod:`dpfix.theory.mechanism`: the :class:`~dpfix.theory.mechanism.Mechanism` result
  object and the losses; :mod:`dpfix.theory.metrics`: errors and distances;
- :mod:`dpfix.theory.formats`: polytopes and vertex lists in cdd, Normaliz and
  polymake files.

May import: :mod:`dpfix.numbers`, :mod:`dpfix.sampling`.
"""
