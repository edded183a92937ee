(** * Lemma B1: the steepest cumulative column (docs/optimum_of_F.md, section 2). *)

From mathcomp Require Import all_ssreflect ssralg ssrnum.
From DpfixFormal Require Import Defs Geometric Northwest.

Set Implicit Arguments.
Unset Strict Implicit.
Unset Printing Implicit Defensive.

Import Order.TTheory GRing.Theory Num.Theory.
Local Open Scope ring_scope.

Section Cumulative.

Variable R : realFieldType.
Variables (n : nat) (lam : R).

(** [phi(x) = max(x / lam, 1 - lam (1 - x))]. *)
Definition phi (x : R) := Num.max (x / lam) (1 - lam * (1 - x)).

Hypothesis lam_gt1 : 1 < lam.

Lemma phi_mono x y : x <= y -> phi x <= phi y.
Proof.
have lam0 := lam_gt0 lam_gt1.
move=> xy; rewrite /phi le_maxl !le_maxr.
rewrite ler_pmul2r ?invr_gt0 // xy /= ler_add2l ler_opp2 ler_pmul2l //.
by rewrite ler_add2l ler_opp2 xy orbT.
Qed.

Lemma cumcolE (T : nat -> nat -> R) l i : (l < n)%N ->
  cumcol T l i = \sum_(j < n | (j <= l)%N) T i j.
Proof. by move=> ln; rewrite /cumcol (big_ord_widen n (T i) ln). Qed.

Lemma cumcol_compl (T : nat -> nat -> R) l i : row_stochastic n T ->
  (i < n)%N -> (l < n)%N ->
  1 - cumcol T l i = \sum_(j < n | ~~ (j <= l)%N) T i j.
Proof.
move=> [_ rows] lt_in ln; rewrite -(rows i lt_in) (bigID (fun j : 'I_n => (j <= l)%N)) /=.
by rewrite cumcolE // addrAC subrr add0r.
Qed.

Lemma sum_dp (T : nat -> nat -> R) (P : pred 'I_n) i : eps_dp n lam T ->
  (i.+1 < n)%N ->
  \sum_(j < n | P j) T i.+1 j <= lam * (\sum_(j < n | P j) T i j) /\
  \sum_(j < n | P j) T i j <= lam * (\sum_(j < n | P j) T i.+1 j).
Proof.
move=> dp lt_in; rewrite !mulr_sumr; split; apply: ler_sum => j _.
  exact: (dp i j lt_in (ltn_ord j)).1.
exact: (dp i j lt_in (ltn_ord j)).2.
Qed.

(** Lemma B1 (1): for every [T] in U, [C_l(i+1) >= phi(C_l(i))]. *)
Lemma lemma_B1_1 (T : nat -> nat -> R) l i : in_U n lam T ->
  (l < n)%N -> (i.+1 < n)%N -> phi (cumcol T l i) <= cumcol T l i.+1.
Proof.
have lam0 := lam_gt0 lam_gt1.
move=> [rs dp] ln lt_in; rewrite /phi le_maxl; apply/andP; split.
  rewrite ler_pdivr_mulr // mulrC !cumcolE //.
  exact: (sum_dp (fun j : 'I_n => (j <= l)%N) dp lt_in).2.
rewrite ler_subl_addr addrC -ler_subl_addr.
rewrite !cumcol_compl // ?(ltnW lt_in) //.
exact: (sum_dp (fun j : 'I_n => ~~ (j <= l)%N) dp lt_in).1.
Qed.

End Cumulative.

Section NorthwestCumulative.

Variable R : realFieldType.
Variables (n : nat) (lam : R) (z : nat -> R).
Hypothesis lam_gt1 : 1 < lam.
Hypothesis z_simplex : simplex n z.

Local Notation Sbefore := (Sbefore n lam z).
Local Notation Zbefore := (Zbefore z).
Local Notation supply := (supply n lam z).
Local Notation geo := (geo n lam).

(** The crossing scale [m*_l]: the least [m] with [S_m >= Z_l]. *)
Definition mstar (l : nat) := find (fun m => Zbefore l.+1 <= Sbefore m.+1) (iota 0 n).

(** Its share [r_l = (Z_l - S_(m*_l - 1)) / a_(m*_l)]. *)
Definition share (l : nat) := (Zbefore l.+1 - Sbefore (mstar l)) / supply (mstar l).

(** The part of supply [m] that the plan sends to the columns [0 .. l]. *)
Definition part (l m : nat) :=
  (clamp (Sbefore m) (Sbefore m.+1) (Zbefore l.+1) - Sbefore m) / supply m.

Lemma mstar_lt l : (l < n)%N -> (mstar l < n)%N.
Proof.
move=> ln; have n0 := n_gt0 z_simplex.
suff: has (fun m => Zbefore l.+1 <= Sbefore m.+1) (iota 0 n).
  by rewrite has_find size_iota.
apply/hasP; exists n.-1; rewrite ?mem_iota ?add0n ?prednK ?leqnn //.
by rewrite Sbefore_n //; exact (Zbefore_le1 z_simplex ln).
Qed.

Lemma before_mstar l m : (m < mstar l)%N -> Sbefore m.+1 < Zbefore l.+1.
Proof.
move=> lt_m; have := before_find 0%N lt_m; have /leq_trans/(_ (find_size _ _)) := lt_m.
by rewrite size_iota => mn; rewrite nth_iota // add0n => /negbT; rewrite -ltNge.
Qed.

Lemma at_mstar l : (l < n)%N -> Zbefore l.+1 <= Sbefore (mstar l).+1.
Proof.
move=> ln; have lt_m := mstar_lt ln.
have := nth_find 0%N (_ : has (fun m => Zbefore l.+1 <= Sbefore m.+1) (iota 0 n)).
rewrite nth_iota // add0n; apply.
by rewrite has_find size_iota.
Qed.

Lemma Sbefore_mstar_le l : (l < n)%N -> Sbefore (mstar l) <= Zbefore l.+1.
Proof.
move=> ln; case E: (mstar l) => [|m]; first by rewrite Sbefore0 (Zbefore_ge0 z_simplex ln).
by rewrite ltW // before_mstar // E.
Qed.

Lemma part_before l m : (m < mstar l)%N -> part l m = 1.
Proof.
move=> lt_m; rewrite /part clamp_above ?Sbefore_le ?ltW ?before_mstar //.
by rewrite SbeforeS addrAC subrr add0r divff // gt_eqF ?supply_gt0.
Qed.

Lemma part_after l m : (l < n)%N -> (mstar l < m)%N -> part l m = 0.
Proof.
move=> ln lt_m; rewrite /part clamp_below ?Sbefore_le // ?subrr ?mul0r //.
exact: le_trans (at_mstar ln) (Sbefore_le lam_gt1 z_simplex lt_m).
Qed.

Lemma part_at l : (l < n)%N -> part l (mstar l) = share l.
Proof.
move=> ln; rewrite /part clamp_id ?Sbefore_mstar_le ?at_mstar //.
Qed.

(** The cumulative columns of the northwest corner: [C_l^nw = sum_m part_l(m) G[:, m]]. *)
Lemma cumcol_northwest l i : (l < n)%N ->
  cumcol (northwest n lam z) l i = \sum_(m < n) geo i m * part l m.
Proof.
move=> ln; rewrite /cumcol; under eq_bigr do rewrite northwest_GR //.
rewrite exchange_big /=; apply: eq_bigr => m _; rewrite -mulr_sumr /remap -mulr_suml.
rewrite sum_overlap ?Sbefore_le // => [|j jl]; last first.
  by rewrite (Zbefore_le z_simplex) // leqnSn /= (leq_ltn_trans (jl : (j <= l)%N) ln).
rewrite Zbefore0 (@clamp_below _ _ _ 0 (Sbefore_le lam_gt1 z_simplex (leqnSn m))) //.
exact: (Sbefore_ge0 lam_gt1 z_simplex m).
Qed.

(** The explicit form: [C_l^nw = sum_(m < m*_l) alpha_m s_m + r_l alpha_(m*_l) s_(m*_l)]. *)
Lemma cumcol_northwest_explicit l i : (l < n)%N ->
  cumcol (northwest n lam z) l i =
    \sum_(m < mstar l) geo i m + share l * geo i (mstar l).
Proof.
move=> ln; have lt_m := mstar_lt ln.
rewrite cumcol_northwest // -(big_mkord xpredT (fun m => geo i m * part l m)).
rewrite (big_cat_nat _ _ _ (leq0n (mstar l)) (ltnW lt_m)) /=.
rewrite (big_ltn lt_m) big_mkord (eq_bigr (fun m : 'I_(mstar l) => geo i m)); last first.
  by move=> m _; rewrite part_before ?mulr1.
have -> : \sum_((mstar l).+1 <= m < n) geo i m * part l m = 0.
  rewrite big_nat_cond big1 // => m /andP[/andP[lt_m' _] _].
  by rewrite part_after ?mulr0.
by rewrite addr0 part_at // mulrC.
Qed.

Lemma cumcol_northwest_compl l i : (l < n)%N -> (i < n)%N ->
  1 - cumcol (northwest n lam z) l i = \sum_(m < n) geo i m * (1 - part l m).
Proof.
move=> ln lt_in; rewrite cumcol_northwest // -{1}(geo_row_sum lam_gt1 lt_in) -sumrB.
by apply: eq_bigr => m _; rewrite mulrBr mulr1.
Qed.

(** Lemma B1 (2), the precise form: [1 - C_l^nw] rises by the factor [lam]
    up to the crossing scale [m*_l], and [C_l^nw] falls by [1 / lam] from it on. *)
Lemma lemma_B1_2_before l i : (l < n)%N -> (i.+1 < n)%N -> (i < mstar l)%N ->
  1 - cumcol (northwest n lam z) l i.+1 = lam * (1 - cumcol (northwest n lam z) l i).
Proof.
move=> ln lt_in im; rewrite !cumcol_northwest_compl // 1?ltnW // mulr_sumr.
apply: eq_bigr => m _; case: (ltnP m (mstar l)) => [lt_m|le_m].
  by rewrite part_before // subrr !mulr0.
by rewrite (geo_up lam_gt1 (n_gt0 z_simplex) (leq_trans im le_m)) -mulrA.
Qed.

Lemma lemma_B1_2_after l i : (l < n)%N -> (i.+1 < n)%N -> (mstar l <= i)%N ->
  cumcol (northwest n lam z) l i.+1 = cumcol (northwest n lam z) l i / lam.
Proof.
move=> ln lt_in mi; rewrite !cumcol_northwest // mulr_suml.
apply: eq_bigr => m _; case: (ltnP (mstar l) m) => [lt_m|le_m].
  by rewrite part_after // !mulr0 mul0r.
by rewrite (geo_down lam_gt1 (n_gt0 z_simplex) (leq_trans le_m mi)) -mulrA mulrC.
Qed.

(** Lemma B1 (2): [C_l^nw(i+1) = phi(C_l^nw(i))]. *)
Lemma lemma_B1_2 l i : (l < n)%N -> (i.+1 < n)%N ->
  cumcol (northwest n lam z) l i.+1 = phi lam (cumcol (northwest n lam z) l i).
Proof.
move=> ln lt_in.
have B := lemma_B1_1 lam_gt1 (northwest_in_F lam_gt1 z_simplex).1 ln lt_in.
apply/eqP; rewrite eq_le B andbT /phi le_maxr; case: (ltnP i (mstar l)) => [im|mi].
  by rewrite -(lemma_B1_2_before ln lt_in im) subKr lexx orbT.
by rewrite (lemma_B1_2_after ln lt_in mi) lexx.
Qed.

End NorthwestCumulative.
