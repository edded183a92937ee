(** * Theorem A: the northwest corner is an optimum of every Monge count
    error over F; Corollary A1: uniqueness on the rows with [z_i > 0] for
    strictly Monge costs. *)

From mathcomp Require Import all_ssreflect ssralg ssrnum ssrint.
From DpfixFormal Require Import Defs Geometric Northwest LemmaB1 LemmaB2.

Set Implicit Arguments.
Unset Strict Implicit.
Unset Printing Implicit Defensive.

Import Order.TTheory GRing.Theory Num.Theory.
Local Open Scope ring_scope.

Section ByParts.

Variable R : realFieldType.

Lemma alg_Dc (a b d e : R) : a - b - d + e = (a - d) - (b - e).
Proof. by rewrite opprB [e - b]addrC addrACA addrA. Qed.

Lemma alg_expand (x A B C : R) : x = A + B - C + ((C - A - B) + x).
Proof.
have -> : C - A - B = - (A + B - C) by rewrite opprB opprD addrA.
by rewrite addrA subrr add0r.
Qed.

Lemma alg_convex (a b e : R) : - (b - a - e + b) = a - b *+ 2 + e.
Proof.
rewrite mulr2n !opprD !opprK.
by rewrite addrAC [- b + a]addrC -[a - b - b]addrA.
Qed.

(** [sum_(j <= l < N) (g(l+1) - g(l)) = g(N) - g(j)]. *)
Lemma telescope_from (g : nat -> R) j N : (j <= N)%N ->
  \sum_(l < N | (j <= l)%N) (g l.+1 - g l) = g N - g j.
Proof.
move=> jN; rewrite (eq_bigl (fun l : 'I_N => true && (j <= l)%N)) //.
by rewrite -(big_geq_mkord j N xpredT (fun l => g l.+1 - g l)) telescope_sumr.
Qed.

(** A cost is its corner values plus the second differences below and right of it:
    [c(i, j) = c(i, N) + c(N, j) - c(N, N) + sum_(k >= i, l >= j) Dc(k, l)]. *)
Lemma cost_expand (c : nat -> nat -> R) N i j : (i <= N)%N -> (j <= N)%N ->
  c i j = c i N + c N j - c N N +
          \sum_(k < N | (i <= k)%N) \sum_(l < N | (j <= l)%N) Dc c k l.
Proof.
move=> iN jN.
rewrite (eq_bigr (fun k : 'I_N => (c k.+1 N - c k N) - (c k.+1 j - c k j))); last first.
  move=> k _; rewrite (eq_bigr (fun l : 'I_N => (c k.+1 l.+1 - c k l.+1) - (c k.+1 l - c k l))).
    by rewrite (telescope_from (fun l => c k.+1 l - c k l)).
  by move=> l _; rewrite /Dc alg_Dc.
rewrite sumrB (telescope_from (fun k => c k N)) // (telescope_from (fun k => c k j)) //.
by rewrite -alg_Dc [c N N - _ - _]addrAC -alg_expand.
Qed.

(** Exchanging the order of the four sums. *)
Lemma exchange4 n N (F : nat -> nat -> nat -> nat -> R) :
  \sum_(i < n) \sum_(j < n) \sum_(k < N | (i <= k)%N) \sum_(l < N | (j <= l)%N) F i j k l =
  \sum_(k < N) \sum_(l < N) \sum_(i < n | (i <= k)%N) \sum_(j < n | (j <= l)%N) F i j k l.
Proof.
under eq_bigr => i _.
  rewrite exchange_big /=.
  under eq_bigr => k _ do rewrite (exchange_big_dep xpredT) //=.
  over.
rewrite /= (exchange_big_dep xpredT) //=.
apply: eq_bigr => k _; rewrite exchange_big /=.
by apply: eq_bigr => l _.
Qed.

End ByParts.

Section CountError.

Variable R : realFieldType.
Variables (n : nat) (z : nat -> R) (c : nat -> nat -> R).

(** The constant [K(z, c) = sum_i z_i c(i, n-1) + sum_j z_j c(n-1, j) - c(n-1, n-1)]. *)
Definition Kconst :=
  \sum_(i < n) z i * c i n.-1 + \sum_(j < n) z j * c n.-1 j - c n.-1 n.-1.

Lemma le_pred i : (i < n)%N -> (i <= n.-1)%N.
Proof. by move=> lt_in; rewrite -ltnS prednK // (leq_ltn_trans _ lt_in). Qed.

Lemma jointcdf_widen (T : nat -> nat -> R) k l : (k < n)%N -> (l < n)%N ->
  jointcdf z T k l = \sum_(i < n | (i <= k)%N) \sum_(j < n | (j <= l)%N) z i * T i j.
Proof.
move=> kn ln; rewrite /jointcdf (big_ord_widen n (fun i => z i * cumcol T l i) kn).
apply: eq_bigr => i _; rewrite /cumcol (big_ord_widen n (T i) ln) mulr_sumr.
by [].
Qed.

(** Summation by parts: [E c(X, Y) = K(z, c) + sum_(k, l <= n-2) Dc(k, l) H_T(k, l)]
    for every row-stochastic [T] with fixed point [z]. *)
Lemma count_error_by_parts (T : nat -> nat -> R) :
  simplex n z -> (forall i, (i < n)%N -> \sum_(j < n) T i j = 1) -> fixed_point n z T ->
  count_error n z c T =
    Kconst + \sum_(k < n.-1) \sum_(l < n.-1) Dc c k l * jointcdf z T k l.
Proof.
move=> [_ zsum] rows fp; set N := n.-1.
have kn (k : 'I_N) : (k < n)%N.
  by apply: (leq_trans (ltn_ord k)); rewrite /N leq_pred.
rewrite /count_error.
rewrite (eq_bigr (fun i : 'I_n => \sum_(j < n)
   (z i * T i j * (c i N + c N j - c N N) +
    \sum_(k < N | (i <= k)%N) \sum_(l < N | (j <= l)%N) z i * T i j * Dc c k l))); last first.
  move=> i _; apply: eq_bigr => j _.
  rewrite (cost_expand c (le_pred (ltn_ord i)) (le_pred (ltn_ord j))) -/N.
  rewrite mulrAC mulrDr; congr (_ + _).
  by rewrite mulr_sumr; apply: eq_bigr => k _; rewrite mulr_sumr.
under eq_bigr do rewrite big_split /=.
rewrite big_split /=; congr (_ + _); last first.
  rewrite (exchange4 n N (fun i j k l => z i * T i j * Dc c k l)).
  apply: eq_bigr => k _; apply: eq_bigr => l _.
  rewrite jointcdf_widen ?kn // mulr_sumr; apply: eq_bigr => i _.
  by rewrite mulr_sumr; apply: eq_bigr => j _; rewrite mulrC.
rewrite (eq_bigr (fun i : 'I_n =>
   z i * c i N + \sum_(j < n) z i * T i j * c N j - z i * c N N)); last first.
  move=> i _; rewrite (eq_bigr (fun j : 'I_n =>
     z i * c i N * T i j + z i * T i j * c N j - z i * c N N * T i j)); last first.
    move=> j _; rewrite mulrBr mulrDr; congr (_ + _ - _); first by rewrite mulrAC.
    by rewrite mulrAC.
  rewrite sumrB big_split /= -!mulr_sumr rows ?mulr1 //.
rewrite sumrB big_split /= /Kconst -/N; congr (_ + _ - _).
  rewrite exchange_big /=; apply: eq_bigr => j _.
  by rewrite -mulr_suml fp // mulrC.
by rewrite -mulr_suml zsum mul1r.
Qed.

End CountError.

(** The two boundary identities: [H_T(k, n-1) = Z_k] (rows sum to 1) and
    [H_T(n-1, l) = Z_l] (the fixed point). *)
Lemma jointcdf_last_col (R : realFieldType) n (z : nat -> R) (T : nat -> nat -> R) k :
  (forall i, (i < n)%N -> \sum_(j < n) T i j = 1) -> (k < n)%N ->
  jointcdf z T k n.-1 = Zbefore z k.+1.
Proof.
move=> rows kn; rewrite /jointcdf /Zbefore; apply: eq_bigr => i _.
have lt_in : (i < n)%N by exact: leq_ltn_trans (ltn_ord i : (i <= k)%N) kn.
by rewrite /cumcol prednK ?rows ?mulr1 // (leq_ltn_trans _ lt_in).
Qed.

Lemma jointcdf_last_row (R : realFieldType) n (z : nat -> R) (T : nat -> nat -> R) l :
  (0 < n)%N -> fixed_point n z T -> (l < n)%N ->
  jointcdf z T n.-1 l = Zbefore z l.+1.
Proof. by move=> n0 fp ln; rewrite /jointcdf prednK // sum_z_cumcol. Qed.

(** Theorem A: for every [n], every [z] in the simplex, every [lam > 1] and
    every Monge cost [c], the northwest corner is in F and no [T] in F has a
    smaller count error [sum_ij z_i c(i, j) T_ij]. *)
Theorem theorem_A (R : realFieldType) (n : nat) (lam : R) (z : nat -> R)
    (c : nat -> nat -> R) :
  1 < lam -> simplex n z -> monge n c ->
  in_F n lam z (northwest n lam z) /\
  forall T, in_F n lam z T ->
    count_error n z c (northwest n lam z) <= count_error n z c T.
Proof.
move=> lam_gt1 zs mc; have nwF := northwest_in_F lam_gt1 zs.
split=> // T TF.
have [[[_ rowsT] _] fpT] := TF; have [[[_ rowsN] _] fpN] := nwF.
rewrite -subr_ge0 !count_error_by_parts // opprD addrACA subrr add0r -sumrB.
apply: sumr_ge0 => k _; rewrite -sumrB; apply: sumr_ge0 => l _.
have kn : (k.+1 < n)%N by rewrite -ltn_predRL.
have ln : (l.+1 < n)%N by rewrite -ltn_predRL.
rewrite -mulrBr mulr_le0 ?mc // subr_le0.
exact (lemma_B2 lam_gt1 zs TF (ltnW kn) (ltnW ln)).
Qed.

(** Universal optimality: one mechanism in F is an optimum for every Monge
    cost at once (the northwest corner does not depend on [c]). *)
Corollary universal_optimality (R : realFieldType) (n : nat) (lam : R) (z : nat -> R) :
  1 < lam -> simplex n z ->
  exists2 T0, in_F n lam z T0 &
    forall c, monge n c ->
      forall T, in_F n lam z T -> count_error n z c T0 <= count_error n z c T.
Proof.
move=> lam_gt1 zs; exists (northwest n lam z); first exact: northwest_in_F.
by move=> c mc T TF; apply: (theorem_A lam_gt1 zs mc).2.
Qed.

(** The count error minus the northwest corner's, by parts. *)
Lemma count_error_gap (R : realFieldType) (n : nat) (lam : R) (z : nat -> R)
    (c : nat -> nat -> R) (T : nat -> nat -> R) :
  1 < lam -> simplex n z -> in_F n lam z T ->
  count_error n z c T - count_error n z c (northwest n lam z) =
    \sum_(k < n.-1) \sum_(l < n.-1)
       Dc c k l * (jointcdf z T k l - jointcdf z (northwest n lam z) k l).
Proof.
move=> lam_gt1 zs TF; have nwF := northwest_in_F lam_gt1 zs.
have [[[_ rowsT] _] fpT] := TF; have [[[_ rowsN] _] fpN] := nwF.
rewrite !count_error_by_parts // opprD addrACA subrr add0r -sumrB.
by apply: eq_bigr => k _; rewrite -sumrB; apply: eq_bigr => l _; rewrite mulrBr.
Qed.

(** Partial sums determine the terms. *)
Lemma prefix_sums_inj (R : realFieldType) n (a b : nat -> R) :
  (forall k, (k < n)%N -> \sum_(i < k.+1) a i = \sum_(i < k.+1) b i) ->
  forall i, (i < n)%N -> a i = b i.
Proof.
move=> eqab [|i] lt_in.
  by move: (eqab 0%N lt_in); rewrite !big_ord_recr !big_ord0 /= !add0r.
move: (eqab i.+1 lt_in) (eqab i (ltnW lt_in)); rewrite big_ord_recr [in RHS]big_ord_recr /=.
by move=> + e; rewrite e => /addrI.
Qed.

(** Corollary A1: for a strictly Monge cost, every optimum of F has the joint
    law [z_i T_ij] of the northwest corner, so it equals the northwest corner
    on every row with [z_i > 0]. *)
Corollary corollary_A1 (R : realFieldType) (n : nat) (lam : R) (z : nat -> R)
    (c : nat -> nat -> R) (T : nat -> nat -> R) :
  1 < lam -> simplex n z -> strictly_monge n c -> in_F n lam z T ->
  count_error n z c T = count_error n z c (northwest n lam z) ->
  (forall i j, (i < n)%N -> (j < n)%N -> z i * T i j = z i * northwest n lam z i j) /\
  (forall i j, (i < n)%N -> (j < n)%N -> 0 < z i -> T i j = northwest n lam z i j).
Proof.
move=> lam_gt1 zs smc TF opt; set nw := northwest n lam z.
have nwF : in_F n lam z nw := northwest_in_F lam_gt1 zs.
have [[[_ rowsT] _] fpT] := TF; have [[[_ rowsN] _] fpN] := nwF.
have n0 : (0 < n)%N by apply: n_gt0 zs.
have term_ge0 (k l : 'I_n.-1) :
    0 <= Dc c k l * (jointcdf z T k l - jointcdf z nw k l).
  have kn : (k.+1 < n)%N by rewrite -ltn_predRL.
  have ln : (l.+1 < n)%N by rewrite -ltn_predRL.
  apply: mulr_le0; first exact: ltW (smc _ _ kn ln).
  rewrite subr_le0; exact (lemma_B2 lam_gt1 zs TF (ltnW kn) (ltnW ln)).
have gap0 := count_error_gap c lam_gt1 zs TF; rewrite opt subrr -/nw in gap0.
have Hinner (k l : 'I_n.-1) : jointcdf z T k l = jointcdf z nw k l.
  have kn : (k.+1 < n)%N by rewrite -ltn_predRL.
  have ln : (l.+1 < n)%N by rewrite -ltn_predRL.
  move/eqP: gap0; rewrite eq_sym psumr_eq0 => [/allP/(_ k (mem_index_enum _))|k' _]; last first.
    by apply: sumr_ge0 => l' _; apply: term_ge0.
  rewrite psumr_eq0 => [/allP/(_ l (mem_index_enum _))|l' _ /=]; last exact: term_ge0.
  by rewrite /= mulf_eq0 (negbTE (ltr0_neq0 (smc k l kn ln))) subr_eq0 => /eqP.
have H k l : (k < n)%N -> (l < n)%N -> jointcdf z T k l = jointcdf z nw k l.
  move=> kn ln; case: (ltnP k n.-1) => [kN|]; last first.
    move=> Nk; have -> : k = n.-1 by apply/eqP; rewrite eqn_leq Nk le_pred.
    by rewrite !jointcdf_last_row.
  case: (ltnP l n.-1) => [lN|]; first exact (Hinner (Ordinal kN) (Ordinal lN)).
  move=> Nl; have -> : l = n.-1 by apply/eqP; rewrite eqn_leq Nl le_pred.
  by rewrite !jointcdf_last_col.
have zC l : (l < n)%N -> forall i, (i < n)%N -> z i * cumcol T l i = z i * cumcol nw l i.
  move=> ln; apply: (@prefix_sums_inj R n (fun i => z i * cumcol T l i)
                                          (fun i => z i * cumcol nw l i)) => k kn.
  exact: H kn ln.
have joint i : (i < n)%N -> forall j, (j < n)%N -> z i * T i j = z i * nw i j.
  move=> lt_in; apply: (@prefix_sums_inj R n (fun j => z i * T i j)
                                             (fun j => z i * nw i j)) => l ln.
  by rewrite -!mulr_sumr; exact: zC ln i lt_in.
split=> [i j lt_in lt_jn|i j lt_in lt_jn zi]; first exact: joint.
by apply: (mulfI (lt0r_neq0 zi)); exact: joint.
Qed.

(** A convex loss of the deviation is a Monge cost: with [d = k - l],
    [Dc(k, l) = -(f(d+1) - 2 f(d) + f(d-1))]. *)
Lemma convex_monge (R : realFieldType) n (f : int -> R) :
  (forall d, 0 <= f (d + 1) - f d *+ 2 + f (d - 1)) ->
  monge n (fun i j => f (i%:Z - j%:Z)).
Proof.
move=> convex k l _ _; rewrite /Dc -[k.+1]addn1 -[l.+1]addn1 !PoszD.
have -> : k%:Z + 1 - (l%:Z + 1) = k%:Z - l%:Z by rewrite opprD addrACA subrr addr0.
have -> : k%:Z + 1 - l%:Z = k%:Z - l%:Z + 1 by rewrite addrAC.
have -> : k%:Z - (l%:Z + 1) = k%:Z - l%:Z - 1 by rewrite opprD addrA.
rewrite -oppr_ge0; apply: le_trans (convex (k%:Z - l%:Z)) _.
by rewrite alg_convex.
Qed.

(** Theorem A for the count errors [E f(X - Y)] of every convex [f]. *)
Corollary theorem_A_convex (R : realFieldType) (n : nat) (lam : R) (z : nat -> R)
    (f : int -> R) :
  1 < lam -> simplex n z -> (forall d, 0 <= f (d + 1) - f d *+ 2 + f (d - 1)) ->
  forall T, in_F n lam z T ->
    count_error n z (fun i j => f (i%:Z - j%:Z)) (northwest n lam z) <=
    count_error n z (fun i j => f (i%:Z - j%:Z)) T.
Proof.
move=> lam_gt1 zs convex.
by have [_] := theorem_A lam_gt1 zs (@convex_monge _ n _ convex).
Qed.
