(** * What the proofs rest on: [Print Assumptions] of every main statement. *)

From DpfixFormal Require Import Defs Geometric Northwest LemmaB1 LemmaB2 TheoremA.

Print Assumptions northwest_in_F.
Print Assumptions lemma_B1_1.
Print Assumptions lemma_B1_2.
Print Assumptions lemma_B1_2_before.
Print Assumptions lemma_B1_2_after.
Print Assumptions lemma_B2.
Print Assumptions count_error_by_parts.
Print Assumptions theorem_A.
Print Assumptions corollary_A1.
