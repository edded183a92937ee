(** * The single-peaked scales, the geometric amounts and the truncated
    geometric mechanism [G = Sigma diag(alpha)]. *)

From mathcomp Require Import all_ssreflect ssralg ssrnum.
From DpfixFormal Require Import Defs.

Set Implicit Arguments.
Unset Strict Implicit.
Unset Printing Implicit Defensive.

Import Order.TTheory GRing.Theory Num.Theory.
Local Open Scope ring_scope.

Section Geometric.

Variable R : realFieldType.
Variables (n : nat) (lam : R).

(** [rho = 1 / lam] and the distance [|i - m|] (truncated subtraction). *)
Definition rho := lam^-1.

Definition dist (i m : nat) := ((i - m) + (m - i))%N.

(** The single-peaked scale at [m]: [s_m(i)] proportional to [rho^|i-m|],
    summing to 1 (column [m] of [Sigma]). *)
Definition peak_sum (m : nat) := \sum_(k < n) rho ^+ dist k m.

Definition scale (m i : nat) := rho ^+ dist i m / peak_sum m.

(** The amounts [c_m] of the truncated geometric mechanism:
    [(1 - rho) / (1 + rho)] inside, [1 / (1 + rho)] at the two ends, 1 for
    [n = 1] ([dpfix.numbers.numeric.geometric_amounts]). *)
Definition geo_amount (m : nat) :=
  if n == 1%N then 1
  else if (m == 0%N) || (m == n.-1) then (1 + rho)^-1
  else (1 - rho) / (1 + rho).

(** The amounts [alpha_m = c_m * peak_sum m] with [Sigma alpha = 1]
    ([dpfix.constructors.unfixed.sigma_amounts]). *)
Definition amount (m : nat) := geo_amount m * peak_sum m.

(** The truncated geometric mechanism [G = Sigma diag(alpha)]. *)
Definition geo (i m : nat) := scale m i * amount m.

Hypothesis lam_gt1 : 1 < lam.

Lemma rho_gt0 : 0 < rho.
Proof. by rewrite invr_gt0 (lt_trans ltr01). Qed.

Lemma rho_lt1 : rho < 1.
Proof. by rewrite invf_lt1 ?(lt_trans ltr01). Qed.

Lemma lam_gt0 : 0 < lam.
Proof. exact: lt_trans ltr01 lam_gt1. Qed.

Lemma lam_rho : lam * rho = 1.
Proof. by rewrite /rho divff // gt_eqF // lam_gt0. Qed.

Lemma rho_le1 : rho <= 1.
Proof. exact: ltW rho_lt1. Qed.

Lemma lam_ge1 : 1 <= lam.
Proof. exact: ltW lam_gt1. Qed.

Lemma onerho_gt0 : 0 < 1 + rho.
Proof. by rewrite addr_gt0 ?ltr01 ?rho_gt0. Qed.

Lemma peak_sum_gt0 m : (0 < n)%N -> 0 < peak_sum m.
Proof.
move=> n_gt0; rewrite /peak_sum (bigD1 (Ordinal n_gt0)) //=.
rewrite ltr_spaddl ?exprn_gt0 ?rho_gt0 //.
by apply: sumr_ge0 => k _; rewrite exprn_ge0 // ltW // rho_gt0.
Qed.

Lemma geo_amount_gt0 m : 0 < geo_amount m.
Proof.
rewrite /geo_amount; case: ifP => _; first exact: ltr01.
case: ifP => _; first by rewrite invr_gt0 onerho_gt0.
by rewrite divr_gt0 ?onerho_gt0 // subr_gt0 rho_lt1.
Qed.

(** [G[i, m] = c_m rho^|i-m|]. *)
Lemma geoE i m : (0 < n)%N -> geo i m = geo_amount m * rho ^+ dist i m.
Proof.
move=> n_gt0; rewrite /geo /scale /amount [_ * peak_sum m]mulrC mulrA divfK.
  by rewrite mulrC.
by rewrite gt_eqF // peak_sum_gt0.
Qed.

Lemma geo_gt0 i m : (0 < n)%N -> 0 < geo i m.
Proof.
by move=> n_gt0; rewrite geoE // mulr_gt0 ?geo_amount_gt0 ?exprn_gt0 ?rho_gt0.
Qed.

Lemma geo_ge0 i m : (0 < n)%N -> 0 <= geo i m.
Proof. by move=> n_gt0; rewrite ltW // geo_gt0. Qed.

(** Every column of [G] is a single-peaked scale: it rises by [lam] up to its
    peak [m] and falls by [1 / lam] after it. *)
Lemma geo_up i m : (0 < n)%N -> (i < m)%N -> geo i.+1 m = lam * geo i m.
Proof.
move=> n_gt0 im; rewrite !geoE // /dist.
have -> : (i - m = 0)%N by apply/eqP; rewrite subn_eq0 ltnW.
have -> : (i.+1 - m = 0)%N by apply/eqP; rewrite subn_eq0.
rewrite !add0n mulrCA; congr (_ * _).
have -> : (m - i = (m - i.+1).+1)%N by rewrite subnS prednK // subn_gt0.
by rewrite exprS mulrA lam_rho mul1r.
Qed.

Lemma geo_down i m : (0 < n)%N -> (m <= i)%N -> geo i.+1 m = rho * geo i m.
Proof.
move=> n_gt0 mi; rewrite !geoE // /dist.
have -> : (m - i = 0)%N by apply/eqP; rewrite subn_eq0.
have -> : (m - i.+1 = 0)%N by apply/eqP; rewrite subn_eq0 (leq_trans mi).
by rewrite !addn0 mulrCA subSn // exprS.
Qed.

(** The rows of [G] sum to 1: the mass [rho / (1 + rho)] left of the
    diagonal, the same right of it, and [c_i] on it. *)
Let c := geo_amount.

Lemma geo_left i : (1 < n)%N -> (i < n)%N ->
  \sum_(m < i) c m * rho ^+ (i - m) = if i == 0%N then 0 else rho / (1 + rho).
Proof.
move=> n_gt1; elim: i => [|i IH] lt_in; first by rewrite big_ord0.
rewrite big_ord_recr /= subSnn expr1.
rewrite (eq_bigr (fun m : 'I_i => rho * (c m * rho ^+ (i - m)))); last first.
  by move=> m _; rewrite subSn ?exprS 1?mulrCA // ltnW.
rewrite -mulr_sumr IH ?(ltnW lt_in) // /c /geo_amount.
rewrite (gtn_eqF n_gt1).
have -> : (i == n.-1) = false.
  by apply/negbTE; rewrite neq_ltn ltn_predRL lt_in.
case: i {IH} lt_in => [|i] lt_in /=; first by rewrite mulr0 add0r mulrC.
rewrite mulrA [(1 - rho) / _ * rho]mulrAC -mulrDl; congr (_ / _).
by rewrite mulrBl mul1r addrC subrK.
Qed.

Lemma geo_right i : (1 < n)%N -> (i < n)%N ->
  \sum_(k < n - i.+1) c (k + i.+1) * rho ^+ k.+1 =
    if i == n.-1 then 0 else rho / (1 + rho).
Proof.
move=> n_gt1 lt_in.
have [j ij] : exists j, (i + j.+1 = n)%N by exists (n - i.+1)%N; rewrite addnS -addSn subnKC.
have -> : (n - i.+1 = j)%N by rewrite -ij addnS subSS addKn.
have -> : (i == n.-1) = (j == 0%N) by rewrite -ij addnS /= -{1}[i]addn0 eqn_add2l eq_sym.
elim: j i ij {lt_in} => [|j IH] i ij; first by rewrite big_ord0.
rewrite big_ord_recl /= add0n expr1.
rewrite (eq_bigr (fun k : 'I_j => rho * (c (k + i.+2) * rho ^+ k.+1))); last first.
  by move=> k _; rewrite /bump /= add1n addSnnS exprS mulrCA.
rewrite -mulr_sumr (IH i.+1); last by rewrite addSnnS.
rewrite /c /geo_amount (gtn_eqF n_gt1) -ij.
have -> : (i.+1 == 0%N) = false by [].
case: j {IH} ij => [|j] ij /=.
  by rewrite !addnS addn0 /= eqxx /= mulr0 addr0 mulrC.
have -> : (i.+1 == (i + j.+3).-1) = false.
  by rewrite !addnS /= eqSS ltn_eqF // ltnS leq_addr.
rewrite mulrAC mulrA -mulrDl; congr (_ / _).
by rewrite mulrBl mul1r subrK.
Qed.

Lemma geo_row_sum i : (i < n)%N -> \sum_(m < n) geo i m = 1.
Proof.
move=> lt_in; have n_gt0 : (0 < n)%N by apply: leq_ltn_trans lt_in.
rewrite (eq_bigr (fun m : 'I_n => c m * rho ^+ dist i m)); last by move=> m _; rewrite geoE.
case: (ltngtP n 1) => [|n_gt1|n1].
- by rewrite ltnS leqn0 => /eqP n0; rewrite n0 in n_gt0.
- rewrite -(big_mkord xpredT (fun m => c m * rho ^+ dist i m)) (big_cat_nat _ _ _ (leq0n i.+1)) //= big_nat_recr //=.
  rewrite big_mkord (eq_bigr (fun m : 'I_i => c m * rho ^+ (i - m))); last first.
    by move=> m _; rewrite /dist (eqP (ltnW (ltn_ord m) : (m <= i)%N)) addn0.
  rewrite geo_left // (big_addn 0 n i.+1) big_mkord.
  rewrite (eq_bigr (fun k : 'I_(n - i.+1) => c (k + i.+1) * rho ^+ k.+1)); last first.
    move=> k _; rewrite /dist.
    have -> : (i - (k + i.+1) = 0)%N by apply/eqP; rewrite subn_eq0 addnS leqW // leq_addl.
    by rewrite add0n addnS subSn ?leq_addl // addnK.
  rewrite geo_right // /dist subnn expr0 mulr1 /c /geo_amount (gtn_eqF n_gt1).
  have q0 : 1 + rho != 0 by rewrite gt_eqF // onerho_gt0.
  case: (i =P 0%N) => [->|i0] /=.
    have -> : (0%N == n.-1) = false by apply/negbTE; rewrite eq_sym -lt0n ltn_predRL.
    by rewrite add0r -{1}[(1 + rho)^-1]mul1r -mulrDl divff.
  case: (i =P n.-1) => [_|iN] /=.
    by rewrite addr0 -{2}[(1 + rho)^-1]mul1r -mulrDl addrC divff.
  by rewrite -!mulrDl addrCA subrr addr0 divff.
- rewrite n1 big_ord_recl big_ord0 addr0 /c /geo_amount n1 eqxx mul1r.
  by move: lt_in; rewrite n1 ltnS leqn0 => /eqP ->; rewrite /dist expr0.
Qed.

End Geometric.
