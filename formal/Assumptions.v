(** * What the proofs rest on: [Print Assumptions] of every main statement. *)

From DpfixFormal Require Import Defs Geometric Northwest LemmaB1 LemmaB2 TheoremA Bridge.

Print Assumptions northwest_in_F.
Print Assumptions lemma_B1_1.
Print Assumptions lemma_B1_2.
Print Assumptions lemma_B1_2_before.
Print Assumptions lemma_B1_2_after.
Print Assumptions cumcol_northwest_explicit.
Print Assumptions lemma_B2.
Print Assumptions northwest_table_correct.
Print Assumptions count_error_by_parts.
Print Assumptions theorem_A.
Print Assumptions universal_optimality.
Print Assumptions theorem_A_convex.
Print Assumptions corollary_A1.
