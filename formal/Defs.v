(** * The setting of Theorem A (docs/optimum_of_F.md, section 1).

    Everything is over an ordered field [R] (any [realFieldType]: the
    rationals, the real algebraic numbers, the reals of a model, ...).
    Counts are [0 .. n-1]; a vector is a function [nat -> R] and a matrix a
    function [nat -> nat -> R], read on the indices below [n] only (entries
    outside are never used), so an [n x n] matrix is any such function. *)

From mathcomp Require Import all_ssreflect ssralg ssrnum.

Set Implicit Arguments.
Unset Strict Implicit.
Unset Printing Implicit Defensive.

Import Order.TTheory GRing.Theory Num.Theory.
Local Open Scope ring_scope.

Section Definitions.

Variable R : realFieldType.

(** The size [n] and the privacy ratio [lam = e^eps]. *)
Variables (n : nat) (lam : R).

(** [z] is in the simplex: a probability vector on [0 .. n-1], zeros allowed. *)
Definition simplex (z : nat -> R) :=
  (forall i, (i < n)%N -> 0 <= z i) /\ \sum_(i < n) z i = 1.

(** [T] is row-stochastic: non-negative, every row summing to 1. *)
Definition row_stochastic (T : nat -> nat -> R) :=
  (forall i j, (i < n)%N -> (j < n)%N -> 0 <= T i j) /\
  (forall i, (i < n)%N -> \sum_(j < n) T i j = 1).

(** [T] is eps-DP on the path [0 - 1 - ... - (n-1)]: neighbouring inputs
    change the probability of every output by a factor at most [lam]. *)
Definition eps_dp (T : nat -> nat -> R) :=
  forall i j, (i.+1 < n)%N -> (j < n)%N ->
    T i.+1 j <= lam * T i j /\ T i j <= lam * T i.+1 j.

(** [z] is a fixed point of [T]: [z T = z]. *)
Definition fixed_point (z : nat -> R) (T : nat -> nat -> R) :=
  forall j, (j < n)%N -> \sum_(i < n) z i * T i j = z j.

(** U: the eps-DP count mechanisms; F: those with fixed point [z]. *)
Definition in_U (T : nat -> nat -> R) := row_stochastic T /\ eps_dp T.

Definition in_F (z : nat -> R) (T : nat -> nat -> R) := in_U T /\ fixed_point z T.

(** The cumulative column [C_l = T[:, 0] + ... + T[:, l]] and the joint CDF
    [H_T(k, l) = P(X <= k, Y <= l) = sum_(i <= k) z_i C_l(i)]. *)
Definition cumcol (T : nat -> nat -> R) (l i : nat) := \sum_(j < l.+1) T i j.

Definition jointcdf (z : nat -> R) (T : nat -> nat -> R) (k l : nat) :=
  \sum_(i < k.+1) z i * cumcol T l i.

(** The mixed second difference of a cost and the Monge property. *)
Definition Dc (c : nat -> nat -> R) (k l : nat) :=
  c k.+1 l.+1 - c k.+1 l - c k l.+1 + c k l.

Definition monge (c : nat -> nat -> R) :=
  forall k l, (k.+1 < n)%N -> (l.+1 < n)%N -> Dc c k l <= 0.

Definition strictly_monge (c : nat -> nat -> R) :=
  forall k l, (k.+1 < n)%N -> (l.+1 < n)%N -> Dc c k l < 0.

(** The count error [E c(X, Y) = sum_(i, j) z_i c(i, j) T_ij]. *)
Definition count_error (z : nat -> R) (c : nat -> nat -> R) (T : nat -> nat -> R) :=
  \sum_(i < n) \sum_(j < n) z i * c i j * T i j.

End Definitions.
