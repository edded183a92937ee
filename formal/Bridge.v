(** * The bridge to the code: the northwest corner computed on the rationals.

    MathComp's big operators are sealed, so [vm_compute] cannot unfold
    [\sum].  [northwest_table] rebuilds the northwest corner of
    Northwest.v with sums as plain folds over [iota 0 n], and
    [northwest_table_correct] proves that it is entrywise the matrix
    [northwest] of Theorem A.  [Eval vm_compute in northwest_table ...]
    then prints the exact entries, which tests/test_formal.py compares with
    [dpfix.constructors.northwest_corner]. *)

From mathcomp Require Import all_ssreflect ssralg ssrnum ssrint rat.
From DpfixFormal Require Import Defs Geometric Northwest.

Set Implicit Arguments.
Unset Strict Implicit.
Unset Printing Implicit Defensive.

Import Order.TTheory GRing.Theory Num.Theory.
Local Open Scope ring_scope.

Section Computable.

Variable R : realFieldType.

(** A sum over [0 .. n-1] as a fold (no big operator). *)
Definition fsum (n : nat) (F : nat -> R) := foldr (fun i acc => F i + acc) 0 (iota 0 n).

Lemma fsumE n F : fsum n F = \sum_(i < n) F i.
Proof.
rewrite /fsum -(big_mkord xpredT F) /index_iota subn0.
by elim: (iota 0 n) => [|i s IH] /=; rewrite ?big_nil ?big_cons ?IH.
Qed.

Variables (n : nat) (lam : R) (z : nat -> R).

Definition peak_sum_c m := fsum n (fun k => rho lam ^+ dist k m).
Definition scale_c m i := rho lam ^+ dist i m / peak_sum_c m.
Definition amount_c m := geo_amount n lam m * peak_sum_c m.
Definition weight_c m := fsum n (fun i => z i * scale_c m i).
Definition supply_c m := weight_c m * amount_c m.
Definition Sbefore_c m := fsum m supply_c.
Definition Zbefore_c j := fsum j z.
Definition plan_c m j :=
  overlap (Sbefore_c m) (Sbefore_c m.+1) (Zbefore_c j) (Zbefore_c j.+1).
Definition northwest_c i j := fsum n (fun m => scale_c m i * (plan_c m j / weight_c m)).

Lemma northwest_cE i j : northwest_c i j = northwest n lam z i j.
Proof.
have psE m : peak_sum_c m = peak_sum n lam m by rewrite /peak_sum_c fsumE.
have scE m k : scale_c m k = scale n lam m k by rewrite /scale_c psE.
have amE m : amount_c m = amount n lam m by rewrite /amount_c psE.
have wE m : weight_c m = weight n lam z m.
  by rewrite /weight_c fsumE; apply: eq_bigr => k _; rewrite scE.
have suE m : supply_c m = supply n lam z m by rewrite /supply_c wE amE.
have SE m : Sbefore_c m = Sbefore n lam z m.
  by rewrite /Sbefore_c fsumE; apply: eq_bigr => k _; rewrite suE.
have ZE k : Zbefore_c k = Zbefore z k by rewrite /Zbefore_c fsumE.
rewrite /northwest_c fsumE; apply: eq_bigr => m _.
by rewrite scE /plan_c !SE !ZE wE.
Qed.

End Computable.

Lemma fsum_eq (R : realFieldType) n (F G : nat -> R) :
  (forall i, (i < n)%N -> F i = G i) -> fsum n F = fsum n G.
Proof. by move=> FG; rewrite !fsumE; apply: eq_bigr => i _; apply: FG. Qed.

Lemma nth_map_iota (R : realFieldType) (f : nat -> R) k m : (m < k)%N ->
  nth 0 (map f (iota 0 k)) m = f m.
Proof. by move=> mk; rewrite (nth_map 0%N) ?size_iota ?nth_iota. Qed.

(** The same matrix with every intermediate quantity computed once: the peak
    sums, weights and supplies of the scales and the two lists of prefix sums. *)
Section Rows.

Variable R : realFieldType.
Variables (n : nat) (lam : R) (z : nat -> R).

Definition peaks := map (peak_sum_c n lam) (iota 0 n).
Definition scale_of (P : seq R) m i := rho lam ^+ dist i m / nth 0 P m.
Definition weights_of (P : seq R) :=
  map (fun m => fsum n (fun i => z i * scale_of P m i)) (iota 0 n).
Definition supplies_of (P W : seq R) :=
  map (fun m => nth 0 W m * (geo_amount n lam m * nth 0 P m)) (iota 0 n).
Definition Sprefix_of (Sup : seq R) := map (fun m => fsum m (nth 0 Sup)) (iota 0 n.+1).
Definition Zprefix := map (fun j => fsum j z) (iota 0 n.+1).

Definition rows_of (P W S Z : seq R) :=
  map (fun i => map (fun j =>
      fsum n (fun m => scale_of P m i *
        (overlap (nth 0 S m) (nth 0 S m.+1) (nth 0 Z j) (nth 0 Z j.+1) / nth 0 W m)))
    (iota 0 n)) (iota 0 n).

(** The [let]s are evaluated once by [vm_compute]. *)
Definition northwest_rows :=
  let P := peaks in
  let W := weights_of P in
  let S := Sprefix_of (supplies_of P W) in
  rows_of P W S Zprefix.

Lemma scale_ofE m i : (m < n)%N -> scale_of peaks m i = scale_c n lam m i.
Proof. by move=> mn; rewrite /scale_of /peaks nth_map_iota. Qed.

Lemma weightsE m : (m < n)%N -> nth 0 (weights_of peaks) m = weight_c n lam z m.
Proof.
move=> mn; rewrite /weights_of nth_map_iota //; apply: fsum_eq => i _.
by rewrite scale_ofE.
Qed.

Lemma suppliesE m : (m < n)%N ->
  nth 0 (supplies_of peaks (weights_of peaks)) m = supply_c n lam z m.
Proof.
by move=> mn; rewrite /supplies_of nth_map_iota // weightsE // /peaks nth_map_iota.
Qed.

Lemma SprefixE m : (m <= n)%N ->
  nth 0 (Sprefix_of (supplies_of peaks (weights_of peaks))) m = Sbefore_c n lam z m.
Proof.
move=> mn; rewrite /Sprefix_of nth_map_iota ?ltnS //; apply: fsum_eq => k km.
by rewrite suppliesE // (leq_trans km).
Qed.

Lemma ZprefixE j : (j <= n)%N -> nth 0 Zprefix j = Zbefore_c z j.
Proof. by move=> jn; rewrite /Zprefix nth_map_iota ?ltnS. Qed.

Lemma northwest_rows_correct i j : (i < n)%N -> (j < n)%N ->
  nth 0 (nth [::] northwest_rows i) j = northwest n lam z i j.
Proof.
move=> lt_in lt_jn; rewrite -northwest_cE /northwest_rows /rows_of /northwest_c.
rewrite (nth_map 0%N) ?size_iota // nth_iota // add0n.
rewrite (nth_map 0%N) ?size_iota // nth_iota // add0n.
apply: fsum_eq => m mn.
rewrite scale_ofE // weightsE // (SprefixE (ltnW mn)) (SprefixE mn).
by rewrite (ZprefixE (ltnW lt_jn)) (ZprefixE lt_jn).
Qed.

End Rows.

(** The northwest corner for [n = size zs], [lam] and [z = zs], as a table of rows. *)
Definition northwest_table (lam : rat) (zs : seq rat) : seq (seq rat) :=
  northwest_rows (size zs) lam (fun i => nth 0 zs i).

Lemma northwest_table_correct (lam : rat) (zs : seq rat) i j :
  (i < size zs)%N -> (j < size zs)%N ->
  nth 0 (nth [::] (northwest_table lam zs) i) j =
    northwest (size zs) lam (fun k => nth 0 zs k) i j.
Proof. exact: northwest_rows_correct. Qed.

Definition fraction (q : rat) : int * int := (numq q, denq q).

Definition northwest_fractions (lam : rat) (zs : seq rat) : seq (seq (int * int)) :=
  map (map fraction) (northwest_table lam zs).

(** [q a b] is the rational [a / b]. *)
Definition q (a b : nat) : rat := a%:R / b%:R.
