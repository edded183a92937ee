"""Floor 5, explore: posing questions of the theory and finding the answers exactly.

- :mod:`dpfix.explore.cases`: the standard small cases the checks run on;
- :mod:`dpfix.explore.instances`: enumerators of exact instances ``(n, lam, z)`` in a
  documented small-first order;
- :mod:`dpfix.explore.search`: the exploration engine, ``smallest_counterexample``
  and ``survey``;
- :mod:`dpfix.explore.strategies`: hypothesis strategies for lam, targets, scales,
  vertices and mechanisms;
- :mod:`dpfix.explore.counterexamples`, :mod:`dpfix.explore.northwest`,
  :mod:`dpfix.explore.delta_examples`: the searches behind the paper's Example 1, the
  survey of the northwest corner and the (eps, delta) examples;
- :mod:`dpfix.explore.verification`: the runner of ``proofs_checks`` (``dpfix verify``);
- :mod:`dpfix.explore.joint_instances`: the joint instances (pairs and triples of count
  columns on the unit's graph) and their order; :mod:`dpfix.explore.joint`: the exact
  search, on the engine, for pairs where product noise then optimal transport is not
  optimal over ``F_grid`` (docs/joint.md);
- :mod:`dpfix.explore.graphs`: the report of ``dpfix explore graph`` (the scales and
  polytopes of a neighbour graph) and the table of docs/graphs.md;
- the rooms of docs/graphs.md on neighbour graphs: :mod:`dpfix.explore.graph_instances`
  (the graph instances and their order), :mod:`dpfix.explore.graph_mechanisms` (exact
  LPs with certificates, losses, remaps, randomized response and the graph geometric
  mechanism), :mod:`dpfix.explore.graph_theory` (which of the paper's results carry
  over: the statements and their checks) and :mod:`dpfix.explore.graph_tables` (the
  tables, searches and reports of the complete graph, trees, cycles and the grid);
- :mod:`dpfix.explore.grid_products`: Theorem G on grids of any dimension (the product of
  the paths' northwest corners against exact optima over ``F_grid``, the proof's dual
  point, the failures when a hypothesis is dropped).

May import: every floor below (:mod:`dpfix.numbers`, :mod:`dpfix.sampling`,
:mod:`dpfix.theory`, :mod:`dpfix.constructors`, :mod:`dpfix.certify`).
"""
