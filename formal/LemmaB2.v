(** * Lemma B2: the northwest corner has the largest joint CDF in F. *)

From mathcomp Require Import all_ssreflect ssralg ssrnum.
From DpfixFormal Require Import Defs Geometric Northwest LemmaB1.

Set Implicit Arguments.
Unset Strict Implicit.
Unset Printing Implicit Defensive.

Import Order.TTheory GRing.Theory Num.Theory.
Local Open Scope ring_scope.

Section Boundary.

Variable R : realFieldType.
Variables (n : nat) (z : nat -> R).

(** The fixed point gives [sum_i z_i C_l(i) = Z_l]: the boundary identity
    [H_T(n-1, l) = Z_l]. *)
Lemma sum_z_cumcol (T : nat -> nat -> R) l : fixed_point n z T -> (l < n)%N ->
  \sum_(i < n) z i * cumcol T l i = Zbefore z l.+1.
Proof.
move=> fp ln; under eq_bigr do rewrite /cumcol mulr_sumr.
rewrite exchange_big /=; apply: eq_bigr => j _; apply: fp.
exact: leq_ltn_trans (ltn_ord j : (j <= l)%N) ln.
Qed.

End Boundary.

Section LemmaB2.

Variable R : realFieldType.
Variables (n : nat) (lam : R) (z : nat -> R).
Hypothesis lam_gt1 : 1 < lam.
Hypothesis z_simplex : simplex n z.

Local Notation nw := (northwest n lam z).

Section Column.

Variables (T : nat -> nat -> R) (l : nat).
Hypothesis T_in_F : in_F n lam z T.
Hypothesis ln : (l < n)%N.

Let d i := cumcol T l i - cumcol nw l i.

(** A single crossing: once [C_l >= C_l^nw], it stays so. *)
Lemma crossing_step i : (i.+1 < n)%N -> 0 <= d i -> 0 <= d i.+1.
Proof.
move=> lt_in; rewrite !subr_ge0 => le_i.
rewrite (lemma_B1_2 lam_gt1 z_simplex ln lt_in).
apply: le_trans (lemma_B1_1 lam_gt1 T_in_F.1 ln lt_in).
exact: phi_mono.
Qed.

Lemma crossing i j : (i <= j)%N -> (j < n)%N -> 0 <= d i -> 0 <= d j.
Proof.
move=> ij; elim: j ij => [|j IH]; first by rewrite leqn0 => /eqP ->.
rewrite leq_eqVlt ltnS => /orP[/eqP -> //| ij] lt_jn d0.
exact: crossing_step lt_jn (IH ij (ltnW lt_jn) d0).
Qed.

Lemma sum_zd : \sum_(i < n) z i * d i = 0.
Proof.
rewrite (eq_bigr (fun i : 'I_n => z i * cumcol T l i - z i * cumcol nw l i)); last first.
  by move=> i _; rewrite mulrBr.
rewrite sumrB !sum_z_cumcol ?subrr //; last exact: T_in_F.2.
exact: (northwest_in_F lam_gt1 z_simplex).2.
Qed.

Lemma delta_le0 k : (k < n)%N -> \sum_(i < k.+1) z i * d i <= 0.
Proof.
move=> kn; have zge0 := z_ge0 z_simplex.
case: (leP 0 (d k)) => [dk|dk].
  move: sum_zd; rewrite (bigID (fun i : 'I_n => (i < k.+1)%N)) /=.
  rewrite -(big_ord_widen n (fun i => z i * d i) kn) => /eqP; rewrite addr_eq0 => /eqP ->.
  rewrite oppr_le0; apply: sumr_ge0 => i; rewrite -leqNgt => ki.
  by rewrite mulr_ge0 ?zge0 // (crossing (ltnW ki)).
rewrite -oppr_ge0 -sumrN; apply: sumr_ge0 => i _; rewrite oppr_ge0 mulr_ge0_le0 ?zge0 //.
  exact: leq_ltn_trans (ltn_ord i : (i <= k)%N) kn.
rewrite leNgt; apply/negP => di; move: dk; rewrite ltNge.
by rewrite (@crossing i k (ltn_ord i : (i <= k)%N) kn) ?ltW.
Qed.

End Column.

(** Lemma B2: for every [T] in F and all [k, l], [H_T(k, l) <= H_nw(k, l)]. *)
Theorem lemma_B2 (T : nat -> nat -> R) k l : in_F n lam z T ->
  (k < n)%N -> (l < n)%N -> jointcdf z T k l <= jointcdf z nw k l.
Proof.
move=> TF kn ln; rewrite -subr_le0 /jointcdf -sumrB.
rewrite (eq_bigr (fun i : 'I_k.+1 => z i * (cumcol T l i - cumcol nw l i))).
  exact: delta_le0.
by move=> i _; rewrite mulrBr.
Qed.

End LemmaB2.
