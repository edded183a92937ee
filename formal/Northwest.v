(** * The northwest corner [T_nw = Sigma A = G R] and its membership in F. *)

From mathcomp Require Import all_ssreflect ssralg ssrnum.
From DpfixFormal Require Import Defs Geometric.

Set Implicit Arguments.
Unset Strict Implicit.
Unset Printing Implicit Defensive.

Import Order.TTheory GRing.Theory Num.Theory.
Local Open Scope ring_scope.

(** The length of [[a, b] ∩ [u, v]], and the clamp of [x] to [[a, b]]. *)
Definition overlap (R : realFieldType) (a b u v : R) :=
  Num.max 0 (Num.min b v - Num.max a u).

Definition clamp (R : realFieldType) (a b x : R) := Num.min b (Num.max a x).

Section Overlap.

Variable R : realFieldType.

Lemma overlapC (a b u v : R) : overlap a b u v = overlap u v a b.
Proof. by rewrite /overlap [Num.min b v]minC [Num.max a u]maxC. Qed.

Lemma overlap_ge0 (a b u v : R) : 0 <= overlap a b u v.
Proof. by rewrite /overlap le_maxr lexx. Qed.

(** The length of the intersection is the growth of the clamp. *)
Lemma overlap_clamp (a b u v : R) : a <= b -> u <= v ->
  overlap a b u v = clamp a b v - clamp a b u.
Proof.
move=> ab uv; rewrite /overlap /clamp.
case: (leP v a) => [va|av].
  rewrite (max_l (le_trans uv va)) subrr max_l //.
  by rewrite subr_le0 le_minl va orbT.
case: (leP u a) => [ua|au].
  by rewrite (min_r ab) max_r // subr_ge0 le_minr ab ltW.
case: (leP u b) => [ub|bu].
  by rewrite max_r // subr_ge0 le_minr ub uv.
rewrite (min_l (le_trans (ltW bu) uv)) subrr max_l //.
by rewrite subr_le0 ltW.
Qed.

Lemma clamp_id (a b x : R) : a <= x -> x <= b -> clamp a b x = x.
Proof. by move=> ax xb; rewrite /clamp max_r // min_r. Qed.

Lemma clamp_below (a b x : R) : a <= b -> x <= a -> clamp a b x = a.
Proof. by move=> ab xa; rewrite /clamp max_l // min_r. Qed.

Lemma clamp_above (a b x : R) : a <= b -> b <= x -> clamp a b x = b.
Proof. by move=> ab bx; rewrite /clamp max_r ?(le_trans ab) // min_l. Qed.

(** Summing the lengths of [[a, b] ∩ [Q j, Q (j+1)]] over [j < l]. *)
Lemma sum_overlap (a b : R) (Q : nat -> R) l : a <= b ->
  (forall j, (j < l)%N -> Q j <= Q j.+1) ->
  \sum_(j < l) overlap a b (Q j) (Q j.+1) = clamp a b (Q l) - clamp a b (Q 0%N).
Proof.
move=> ab Qup; rewrite -(big_mkord xpredT (fun j => overlap a b (Q j) (Q j.+1))).
rewrite big_nat_cond (eq_bigr (fun j => clamp a b (Q j.+1) - clamp a b (Q j))).
  by rewrite -big_nat_cond telescope_sumr.
by move=> j /andP[/andP[_ jl] _]; rewrite overlap_clamp // Qup.
Qed.

End Overlap.

Section Northwest.

Variable R : realFieldType.
Variables (n : nat) (lam : R) (z : nat -> R).

(** [w_m = z . s_m] and the supplies [a_m = w_m alpha_m]. *)
Definition weight (m : nat) := \sum_(i < n) z i * scale n lam m i.

Definition supply (m : nat) := weight m * amount n lam m.

(** The prefix sums [S_(m-1) = a_0 + ... + a_(m-1)] and [Z_(j-1) = z_0 + ... + z_(j-1)]. *)
Definition Sbefore (m : nat) := \sum_(k < m) supply k.

Definition Zbefore (j : nat) := \sum_(k < j) z k.

(** The northwest-corner plan: [X[m, j]] is the length of
    [[S_(m-1), S_m] ∩ [Z_(j-1), Z_j]]. *)
Definition plan (m j : nat) := overlap (Sbefore m) (Sbefore m.+1) (Zbefore j) (Zbefore j.+1).

(** The northwest corner [T_nw = Sigma A], [A[m, j] = X[m, j] / w_m]. *)
Definition northwest (i j : nat) := \sum_(m < n) scale n lam m i * (plan m j / weight m).

(** The monotone remapping [R[m, j] = X[m, j] / a_m]. *)
Definition remap (m j : nat) := plan m j / supply m.

Hypothesis lam_gt1 : 1 < lam.
Hypothesis z_simplex : simplex n z.

Lemma n_gt0 : (0 < n)%N.
Proof.
case: z_simplex => _; case: n => [|//]; rewrite big_ord0 => /eqP.
by rewrite eq_sym oner_eq0.
Qed.

Lemma z_ge0 i : (i < n)%N -> 0 <= z i.
Proof. by case: z_simplex => + _; apply. Qed.

Lemma weight_gt0 m : 0 < weight m.
Proof.
have sc_gt0 i : 0 < scale n lam m i.
  by rewrite /scale divr_gt0 ?exprn_gt0 ?rho_gt0 ?peak_sum_gt0 ?n_gt0.
have w_ge0 : 0 <= weight m.
  by apply: sumr_ge0 => i _; rewrite mulr_ge0 ?z_ge0 // ltW.
rewrite lt_def w_ge0 andbT; apply/eqP => /eqP; rewrite psumr_eq0; last first.
  by move=> i _; rewrite mulr_ge0 ?z_ge0 // ltW.
move=> /allP z0; case: z_simplex => _; rewrite big1 => [/eqP|i _].
  by rewrite eq_sym oner_eq0.
have /z0 : i \in index_enum (ordinal_finType n) by rewrite mem_index_enum.
by rewrite /= mulf_eq0 (gt_eqF (sc_gt0 i)) orbF => /eqP.
Qed.

Lemma amount_gt0 m : 0 < amount n lam m.
Proof. by rewrite /amount mulr_gt0 ?geo_amount_gt0 ?peak_sum_gt0 ?n_gt0. Qed.

Lemma supply_gt0 m : 0 < supply m.
Proof. by rewrite /supply mulr_gt0 ?weight_gt0 ?amount_gt0. Qed.

Lemma supplyE m : supply m = \sum_(i < n) z i * geo n lam i m.
Proof. by rewrite /supply mulr_suml; apply: eq_bigr => i _; rewrite /geo -mulrA. Qed.

(** [T_nw = G R]: the truncated geometric mechanism followed by the remapping. *)
Lemma northwest_GR i j : northwest i j = \sum_(m < n) geo n lam i m * remap m j.
Proof.
apply: eq_bigr => m _; rewrite /geo /remap /supply invfM -mulrA; congr (_ * _).
rewrite mulrCA; congr (_ * _); rewrite mulrCA mulfV ?mulr1 //.
by rewrite gt_eqF ?amount_gt0.
Qed.

Lemma supply_sum : \sum_(m < n) supply m = 1.
Proof.
under eq_bigr do rewrite supplyE; rewrite exchange_big /=.
case: z_simplex => _ <-; apply: eq_bigr => i _.
by rewrite -mulr_sumr geo_row_sum ?mulr1.
Qed.

Lemma Sbefore_le m m' : (m <= m')%N -> Sbefore m <= Sbefore m'.
Proof.
move=> mm'; rewrite /Sbefore (big_ord_widen m' supply mm') big_mkcond /=.
by apply: ler_sum => k _; case: ifP => _; rewrite ?lexx // ltW ?supply_gt0.
Qed.

Lemma Sbefore0 : Sbefore 0 = 0.
Proof. by rewrite /Sbefore big_ord0. Qed.

Lemma Sbefore_n : Sbefore n = 1.
Proof. exact: supply_sum. Qed.

Lemma Sbefore_ge0 m : 0 <= Sbefore m.
Proof. by rewrite -Sbefore0 Sbefore_le. Qed.

Lemma Sbefore_le1 m : (m <= n)%N -> Sbefore m <= 1.
Proof. by move=> mn; rewrite -Sbefore_n Sbefore_le. Qed.

Lemma SbeforeS m : Sbefore m.+1 = Sbefore m + supply m.
Proof. by rewrite /Sbefore big_ord_recr. Qed.

Lemma Zbefore_le j j' : (j <= j' <= n)%N -> Zbefore j <= Zbefore j'.
Proof.
move=> /andP[jj' j'n]; rewrite /Zbefore (big_ord_widen j' z jj') big_mkcond /=.
apply: ler_sum => k _; case: ifP => _; rewrite ?lexx // z_ge0 //.
exact: leq_trans (ltn_ord k) j'n.
Qed.

Lemma Zbefore0 : Zbefore 0 = 0.
Proof. by rewrite /Zbefore big_ord0. Qed.

Lemma Zbefore_n : Zbefore n = 1.
Proof. by case: z_simplex. Qed.

Lemma Zbefore_ge0 j : (j <= n)%N -> 0 <= Zbefore j.
Proof. by move=> jn; rewrite -Zbefore0 Zbefore_le. Qed.

Lemma Zbefore_le1 j : (j <= n)%N -> Zbefore j <= 1.
Proof. by move=> jn; rewrite -Zbefore_n Zbefore_le ?jn ?leqnn. Qed.

Lemma ZbeforeS j : Zbefore j.+1 = Zbefore j + z j.
Proof. by rewrite /Zbefore big_ord_recr. Qed.

Lemma plan_ge0 m j : 0 <= plan m j.
Proof. exact: overlap_ge0. Qed.

Lemma remap_ge0 m j : 0 <= remap m j.
Proof. by rewrite /remap divr_ge0 ?plan_ge0 ?ltW ?supply_gt0. Qed.

(** Supply [m] is sent in full: the plan's row sums. *)
Lemma plan_row_sum m : (m < n)%N -> \sum_(j < n) plan m j = supply m.
Proof.
move=> mn; rewrite sum_overlap ?Sbefore_le ?leqnSn //; last first.
  by move=> j jn; rewrite Zbefore_le ?leqnSn.
rewrite Zbefore_n Zbefore0 clamp_above ?Sbefore_le ?Sbefore_le1 //.
by rewrite clamp_below ?Sbefore_le ?Sbefore_ge0 // SbeforeS addrAC subrr add0r.
Qed.

(** Demand [j] is met exactly: the plan's column sums. *)
Lemma plan_col_sum j : (j < n)%N -> \sum_(m < n) plan m j = z j.
Proof.
move=> jn; under eq_bigr do rewrite /plan overlapC.
rewrite sum_overlap ?Zbefore_le ?leqnSn ?jn //; last first.
  by move=> m _; rewrite Sbefore_le.
rewrite Sbefore_n Sbefore0 clamp_above ?Zbefore_le ?Zbefore_le1 ?leqnSn ?jn //.
by rewrite clamp_below ?Zbefore_le ?Zbefore_ge0 ?leqnSn ?jn 1?ltnW // ZbeforeS addrAC subrr add0r.
Qed.

Lemma remap_row_sum m : (m < n)%N -> \sum_(j < n) remap m j = 1.
Proof.
by move=> mn; rewrite -mulr_suml plan_row_sum // divff // gt_eqF ?supply_gt0.
Qed.

(** The columns of [G] are eps-DP. *)
Lemma geo_dp i m : geo n lam i.+1 m <= lam * geo n lam i m /\
                   geo n lam i m <= lam * geo n lam i.+1 m.
Proof.
have g0 k : 0 <= geo n lam k m by apply: geo_ge0 n_gt0.
case: (ltnP i m) => [im|mi].
  rewrite geo_up ?n_gt0 //; split; first by rewrite lexx.
  rewrite mulrA; apply: ler_pemull; first exact: g0.
  exact: mulr_ege1 (lam_ge1 lam_gt1) (lam_ge1 lam_gt1).
rewrite geo_down ?n_gt0 //; split.
  by rewrite ler_wpmul2r ?g0 // (le_trans (rho_le1 lam_gt1)) ?lam_ge1.
by rewrite mulrA lam_rho // mul1r lexx.
Qed.

(** Theorem: the northwest corner is in F. *)
Theorem northwest_in_F : in_F n lam z northwest.
Proof.
split; [split; [split|] | ].
- move=> i j _ _; rewrite northwest_GR; apply: sumr_ge0 => m _.
  by rewrite mulr_ge0 ?geo_ge0 ?n_gt0 ?remap_ge0.
- move=> i lt_in; under eq_bigr do rewrite northwest_GR; rewrite exchange_big /=.
  rewrite -(geo_row_sum lam_gt1 lt_in); apply: eq_bigr => m _.
  by rewrite -mulr_sumr remap_row_sum ?mulr1.
- move=> i j _ _; rewrite !northwest_GR !mulr_sumr; split; apply: ler_sum => m _.
  + rewrite [lam * _]mulrA ler_wpmul2r ?remap_ge0 //; exact: (geo_dp i m).1.
  + rewrite [lam * _]mulrA ler_wpmul2r ?remap_ge0 //; exact: (geo_dp i m).2.
- move=> j jn; under eq_bigr do rewrite northwest_GR mulr_sumr.
  rewrite exchange_big /= -(plan_col_sum jn); apply: eq_bigr => m _.
  rewrite (eq_bigr (fun i : 'I_n => z i * geo n lam i m * remap m j)); last first.
    by move=> i _; rewrite mulrA.
  rewrite -mulr_suml -supplyE /remap mulrCA divff ?mulr1 //.
  by rewrite gt_eqF ?supply_gt0.
Qed.

End Northwest.
