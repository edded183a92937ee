(** * The main statements, as Coq prints them (docs/formal.md shows this output). *)

From mathcomp Require Import all_ssreflect ssralg ssrnum ssrint.
From DpfixFormal Require Import Defs Geometric Northwest LemmaB1 LemmaB2 TheoremA.

Unset Printing Implicit Defensive.
Import Order.TTheory GRing.Theory Num.Theory.
Local Open Scope ring_scope.

Check geo_row_sum.
Check geo_up.
Check geo_down.
Check northwest_GR.
Check northwest_in_F.
Check lemma_B1_1.
Check lemma_B1_2.
Check lemma_B1_2_before.
Check lemma_B1_2_after.
Check cumcol_northwest_explicit.
Check lemma_B2.
Check count_error_by_parts.
Check theorem_A.
Check convex_monge.
Check theorem_A_convex.
Check universal_optimality.
Check corollary_A1.
