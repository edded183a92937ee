"""The enumeration backends: cdd and Normaliz agree exactly, counts, compact
vertex sets, the incidence graph, and the symmetry orbits."""

from fractions import Fraction
from itertools import product
from pathlib import Path

import numpy as np
import pytest

from dpfix.explore.cases import LAMS, standard_z
from dpfix.theory import enumeration as en
from dpfix.theory.enumeration import HRep, Symmetry, VertexArray
from dpfix.theory.polytopes import RF, RU, F, U

pytest.importorskip("PyNormaliz_cpp")

Fr = Fraction
ZNAMES = ("uniform", "geometric", "asymmetric", "zero")


def make(kind, n, lam, zname=None):
    z = None if zname is None else standard_z(n)[zname]
    return {"U": lambda: U(n, lam), "R_U": lambda: RU(n, lam),
            "F": lambda: F(n, lam, z), "R_F": lambda: RF(n, lam, z)}[kind]()


def grid(n):
    for lam in LAMS:
        yield "U", n, lam, None
        yield "R_U", n, lam, None
        for zname in ZNAMES:
            yield "F", n, lam, zname
            yield "R_F", n, lam, zname


def edge_set(G):
    """Edges as pairs of exact vertex keys (independent of node numbering)."""
    key = {i: tuple(G.nodes[i]["matrix"].ravel()) for i in G}
    return {frozenset((key[a], key[b])) for a, b in G.edges()}


def check_agree(case, graph=True):
    # fresh polytopes: no cache is shared between the two backends
    Pc, Pn = make(*case), make(*case)
    Vc = Pc.vertices(limit=None, backend="cdd")
    Vn = Pn.vertices(limit=None, backend="normaliz")
    assert len(Vc) == len(Vn) > 0
    assert all(np.array_equal(a, b) for a, b in zip(Vc, Vn, strict=True))  # same sorted list
    assert all(isinstance(v, Fraction) for v in Vn[0].ravel())
    assert make(*case).count_vertices(limit=None, backend="normaliz") == len(Vn)
    assert make(*case).count_vertices(limit=None, backend="cdd") == len(Vc)
    if graph:
        Gc, Gn = Pc.graph(limit=None, backend="cdd"), Pn.graph(limit=None, backend="normaliz")
        assert sorted(Gc) == sorted(Gn) == list(range(len(Vc)))
        assert edge_set(Gc) == edge_set(Gn)


N2_N3 = [c for n in (2, 3) for c in grid(n)]


@pytest.mark.parametrize("case", N2_N3, ids=lambda c: f"{c[0]}-{c[1]}-{c[2]}-{c[3]}")
def test_backends_agree_n2_n3(case):
    check_agree(case)


# n = 4: cdd finishes on U, F (every z), R_U, and R_F for the zero-entry z (about a
# minute); R_F for the other z runs past 14 minutes in cdd, so there is nothing to compare.
N4 = [c for c in grid(4) if c[0] != "R_F" or c[3] == "zero"]
N4_QUICK = [("U", 4, Fr(2), None), ("F", 4, Fr(2), "uniform")]


@pytest.mark.parametrize("case", N4_QUICK, ids=lambda c: f"{c[0]}-{c[1]}-{c[2]}-{c[3]}")
def test_backends_agree_n4_quick(case):
    check_agree(case)


@pytest.mark.full
@pytest.mark.parametrize("case", [c for c in N4 if c not in N4_QUICK],
                         ids=lambda c: f"{c[0]}-{c[1]}-{c[2]}-{c[3]}")
def test_backends_agree_n4_full(case):
    check_agree(case, graph=case[0] != "R_F")


def test_count_vertices_does_not_enumerate_in_python():
    P = U(4, 2)
    assert P.count_vertices(backend="normaliz") == 664
    assert P._raw == {}  # nothing was brought into Python
    assert len(P.vertex_array(backend="normaliz")) == 664
    assert P.count_vertices(backend="normaliz") == 664  # now from the cache


def test_rf4_uniform_normaliz():
    # R_F at n = 4, uniform z: beyond cdd (over 14 minutes), seconds with Normaliz.
    R = RF(4, 2, standard_z(4)["uniform"])
    va = R.vertex_array()
    assert len(va) == R.count_vertices() == 44358
    assert va.numerators.dtype == np.int64
    rng = np.random.default_rng(0)
    for i in rng.choice(len(va), 25, replace=False):
        assert R.is_extreme(va[int(i)])  # exact rank test, independent of both backends


# -- the compact vertex set ---------------------------------------------------------------
def test_vertex_array_rows_are_primitive_and_exact():
    va = VertexArray(np.array([[2, 4], [0, 3]]), np.array([4, 3]), (1, 2))
    assert va.numerators.tolist() == [[1, 2], [0, 1]] and va.denominators.tolist() == [2, 1]
    assert va[0].tolist() == [[Fr(1, 2), Fr(1)]]
    assert va.keys() == {(1, 2, 2), (0, 1, 1)}
    same = VertexArray.from_matrices([[["1/2", 1]], [[0, 1]]], (1, 2))
    assert same.keys() == va.keys()
    assert [X.tolist() for X in va.sorted()] == [[[0, 1]], [[Fr(1, 2), 1]]]
    with pytest.raises(ValueError, match="positive"):
        VertexArray(np.array([[1, 1]]), np.array([0]), (2,))


def test_vertex_array_beyond_int64_stays_exact():
    big = 10**30
    va = VertexArray.from_matrices([[Fr(big + 1, big), Fr(1, big)]], (2,))
    assert va.numerators.dtype == object
    assert va[0].tolist() == [Fr(big + 1, big), Fr(1, big)]
    both = VertexArray.concatenate([va, VertexArray.from_matrices([[1, 0]], (2,))], (2,))
    assert len(both) == 2 and both[1].tolist() == [1, 0]


def test_normaliz_rows_are_positive_integer_multiples():
    h = U(3, Fr(3, 2)).hrep
    ineq, eq = h.normaliz_rows()
    for (a, b), row in zip(h.ub, ineq, strict=True):
        dense = [Fr(0)] * h.d
        for c, v in a.items():
            dense[c] = -v
        exact = dense + [b]
        k = next(Fr(r, 1) / e for r, e in zip(row, exact, strict=True) if e != 0)
        assert k > 0 and [Fr(r) for r in row] == [k * e for e in exact]
    assert all(isinstance(v, int) for r in ineq + eq for v in r)


def test_huge_coefficients_fall_back_to_gmp():
    # lam with a 25-digit numerator: Normaliz's 64-bit cone overflows and is redone
    # over GMP integers; the vertices agree exactly with cdd's.
    lam = Fr(10**24 + 7, 10**24)
    Vc, Vn = U(3, lam).vertices(backend="cdd"), U(3, lam).vertices(backend="normaliz")
    assert len(Vn) == 27 and all(np.array_equal(a, b) for a, b in zip(Vc, Vn, strict=True))


def test_streamed_chunks_equal_the_whole():
    P = F(4, 2, standard_z(4)["asymmetric"])
    parts = list(en.iter_vertex_chunks(P.hrep, P.shape, chunk=100))
    assert len(parts) > 1 and all(len(p) <= 100 for p in parts)
    whole = VertexArray.concatenate(parts, P.shape)
    assert whole.keys() == P.vertex_array(backend="cdd").keys()


def test_empty_and_unbounded():
    empty = HRep(1, [({0: Fr(1)}, Fr(0)), ({0: Fr(-1)}, Fr(-1))], [])  # x <= 0, x >= 1
    assert en.count_vertices(empty, "normaliz") == en.count_vertices(empty, "cdd") == 0
    assert len(en.enumerate_vertices(empty, (1,), "normaliz")) == 0
    ray = HRep(1, [({0: Fr(-1)}, Fr(0))], [])  # x >= 0
    for backend in ("cdd", "normaliz"):
        with pytest.raises(RuntimeError, match="unbounded"):
            en.enumerate_vertices(ray, (1,), backend)


def test_resolve_backend():
    assert en.resolve_backend("auto", "vertices", 9) == "normaliz"
    assert en.resolve_backend("auto", "graph", 9) == "cdd"
    assert en.resolve_backend("auto", "graph", 16) == "normaliz"
    with pytest.raises(ValueError, match="backend"):
        en.resolve_backend("lrs", "vertices", 9)
    with pytest.raises(ValueError, match="backend"):
        U(2, 2).vertices(backend="lrs")


# -- graph from incidence -----------------------------------------------------------------
def test_neighbours_without_the_dimension_filter():
    P = F(3, 2, standard_z(3)["geometric"])
    va = P.vertex_array(backend="cdd")
    masks = en.tight_masks(P.hrep, va)
    full = en.edges(masks)
    assert full == en.edges(masks, P.dimension())
    G = P.graph(backend="cdd")
    assert len(full) == G.number_of_edges()


def test_tight_masks_refuse_points_outside():
    P = U(2, 2)
    va = VertexArray.from_matrices([[[2, -1], [1, 0]]], (2, 2))
    with pytest.raises(ValueError, match="violates"):
        en.tight_masks(P.hrep, va)


# -- symmetry -----------------------------------------------------------------------------
def brute_orbit_sizes(P):
    keys = {tuple(V.ravel()) for V in P.vertices(limit=None, backend="cdd")}
    seen, sizes = set(), []
    for V in P.vertices(limit=None, backend="cdd"):
        if tuple(V.ravel()) in seen:
            continue
        orbit = {tuple(V[list(rho), :][:, list(sigma)].ravel())
                 for rho, sigma in P.symmetry.elements()}
        assert orbit <= keys, f"{P!r} is not invariant under its symmetry"
        seen |= orbit
        sizes.append(len(orbit))
    return sorted(sizes)


@pytest.mark.parametrize("case", [("U", 3, Fr(2), None), ("U", 4, Fr(3, 2), None),
                                  ("R_U", 3, Fr(3), None), ("F", 3, Fr(2), "uniform"),
                                  ("F", 4, Fr(3), "uniform"), ("F", 3, Fr(2), "asymmetric"),
                                  ("R_F", 3, Fr(2), "uniform"), ("R_F", 3, Fr(2), "zero")],
                         ids=lambda c: f"{c[0]}-{c[1]}-{c[2]}-{c[3]}")
def test_orbits_match_brute_force(case):
    P = make(*case)
    reps, sizes = P.orbits(limit=None)
    assert sorted(sizes.tolist()) == brute_orbit_sizes(P)
    assert int(sizes.sum()) == P.count_vertices(limit=None)
    assert all(P.is_extreme(X) for X in reps)


def test_symmetry_groups():
    assert U(4, 2).symmetry.order == 48
    assert F(4, 2, standard_z(4)["uniform"]).symmetry.order == 48
    assert F(4, 2, ["1/4", "1/8", "1/8", "1/2"]).symmetry.order == 2  # columns 1, 2 swap
    assert F(3, 2, ["1/4", "1/2", "1/4"]).symmetry.order == 4  # reversal, columns 0, 2
    assert RF(3, 2, standard_z(3)["geometric"]).symmetry.order == 1
    assert RU(3, 2).symmetry.order == 12
    assert Symmetry(((0, 1),), ((0,), (1,))).order == 1


def test_canonical_forms_separate_orbits():
    # the forms of two vertices agree iff some group element maps one to the other
    P = U(3, 2)
    va = P.vertex_array()
    forms = en.canonical_forms(va, P.symmetry)
    mats = list(va)
    for i, j in product(range(len(va)), repeat=2):
        same = any(np.array_equal(mats[i][list(r), :][:, list(s)], mats[j])
                   for r, s in P.symmetry.elements())
        assert same == bool((forms[i] == forms[j]).all())


@pytest.mark.parametrize("case", [("U", 3, Fr(2), None), ("U", 4, Fr(2), None),
                                  ("F", 4, Fr(2), "uniform"), ("R_F", 3, Fr(3), "uniform"),
                                  ("F", 3, Fr(3, 2), "zero")],
                         ids=lambda c: f"{c[0]}-{c[1]}-{c[2]}-{c[3]}")
def test_degree_range_matches_graph(case):
    P = make(*case)
    G = P.graph(limit=None, backend="cdd")
    degrees = [d for _, d in G.degree()]
    assert P.degree_range(limit=None) == (min(degrees), max(degrees), G.number_of_edges())


def test_best_values_exact():
    P = F(3, 2, standard_z(3)["asymmetric"])
    va = P.vertex_array(backend="cdd")
    C = [Fr(k % 5 - 2, 3) for k in range(9)]
    best, hits = en.best_values(va, C)
    values = [sum(c * x for c, x in zip(C, X.ravel(), strict=True)) for X in va]
    assert best == max(values)
    assert hits.tolist() == [i for i, v in enumerate(values) if v == best]


# -- what explore and verify use ----------------------------------------------------------
def test_summary_matches_the_graph():
    P = F(4, 2, standard_z(4)["uniform"])
    s = P.summary(diameter_max_vertices=2000)
    G = P.graph(backend="cdd")
    degrees = [d for _, d in G.degree()]
    assert s["vertices"] == G.number_of_nodes() == 1806 and s["dimension"] == 9
    assert s["degree"] == (min(degrees), max(degrees)) and s["edges"] == G.number_of_edges()
    import networkx as nx
    assert s["diameter"] == nx.diameter(G)
    assert s["orbits"] == len(P.orbits()[0]) and s["symmetry_order"] == 48
    skipped = F(3, 2, standard_z(3)["asymmetric"]).summary(degree_max_orbits=3,
                                                          diameter_max_vertices=0)
    assert skipped["degree"] is None and skipped["diameter"] is None


def test_sample_and_membership():
    P = RF(3, 2, standard_z(3)["geometric"])
    every = P.vertices()
    assert [X.tolist() for X in P.sample_vertices(10**6)] == [X.tolist() for X in every]
    some = P.sample_vertices(5, seed=1)
    assert len(some) == 5 and all(P.has_vertex(X) for X in some)
    assert [X.tolist() for X in some] == [X.tolist() for X in P.sample_vertices(5, seed=1)]
    assert not P.has_vertex((every[0] + every[1]) / 2)


def test_face_is_the_optimal_face():
    P = RF(3, 2, standard_z(3)["uniform"])
    rng = np.random.default_rng(2)
    for _ in range(5):
        C = rng.integers(-2, 3, size=P.shape).astype(object)
        face = P.face(C)
        assert {tuple(X.ravel()) for X in face.vertices(backend="cdd")} == \
            {tuple(X.ravel()) for X in P.optimal_face_vertices(C)}


# -- U counted through its structure ------------------------------------------------------
@pytest.mark.parametrize("n", [2, 3, 4])
@pytest.mark.parametrize("lam", LAMS + (Fr(7, 5),))
def test_structural_count_of_U_agrees_with_normaliz(n, lam):
    assert en.u_vertex_count(n, lam) == U(n, lam).count_vertices(backend="normaliz")


@pytest.mark.full
@pytest.mark.parametrize("lam", LAMS)
def test_structural_count_of_U_agrees_with_normaliz_n5(lam):
    # U(5)'s count depends on lam (it does not for n <= 4)
    assert U(5, lam).count_vertices(backend="structure", processes=2) == \
        U(5, lam).count_vertices(backend="normaliz")


def test_structural_faces():
    # the non-zero faces of the cone of lam-bounded vectors: 3^(n-1) patterns; a pattern
    # with c free pairs has c + 1 basis vectors, and with no free pair it is a scale
    patterns, families = en._u_faces(4, 2, 1)
    assert len(patterns) == 27
    for pt, fam in zip(patterns, families, strict=True):
        assert len(fam) == pt.count("*") + 1
    from dpfix.theory.scales import scale
    s = scale([1, -1, 1], 2)
    v = families[patterns.index(("+", "-", "+"))][0]
    assert [Fr(x, sum(v)) for x in v] == list(s)


@pytest.mark.parametrize("case", [("R_F", 3, Fr(3, 2), "asymmetric"), ("R_U", 3, Fr(2), None),
                                  ("R_F", 4, Fr(2), "zero")],
                         ids=lambda c: f"{c[0]}-{c[1]}-{c[2]}-{c[3]}")
def test_psi_images_are_psi_of_each_vertex(case):
    from dpfix.theory.scales import psi
    R = make(*case)
    P = psi(R.n, R.lam)
    images = R.psi_images(limit=None)
    assert len(images) == len(R.vertex_array(limit=None))
    for B, T in zip(R.vertex_array(limit=None), images, strict=True):
        assert (P @ B == T).all()
    with pytest.raises(ValueError, match="R_F and R_U"):
        U(2, 2).psi_images()


# -- Normaliz's private folder ------------------------------------------------------------
def spy_folders(monkeypatch, barrier=None):
    """Record the folder each Normaliz run writes to, and what it holds after the run."""
    import os
    import threading

    seen: list[tuple[Path, list[str], int]] = []
    lock = threading.Lock()
    original = en._normaliz_out

    def spy(h, directory):
        if barrier is not None:
            barrier.wait(timeout=60)  # both runs are under way at once
        out = original(h, directory)
        with lock:
            seen.append((Path(directory), sorted(os.listdir(directory)),
                         threading.get_ident()))
        return out

    monkeypatch.setattr(en, "_normaliz_out", spy)
    return seen


def test_concurrent_enumerations_use_private_folders(monkeypatch, tmp_path):
    """Two enumerations at once: each in its own folder (mode 0700) holding only its
    own output, under the temporary folder, and nothing is left behind."""
    import tempfile
    import threading

    monkeypatch.setenv("TMPDIR", str(tmp_path))
    monkeypatch.setattr(tempfile, "tempdir", None)  # re-read TMPDIR
    seen = spy_folders(monkeypatch, threading.Barrier(2))
    cases = [U(3, 2), F(3, 2, standard_z(3)["asymmetric"])]
    results: dict[int, set] = {}
    errors: list[BaseException] = []

    def run(i):
        try:
            results[i] = en.enumerate_vertices(cases[i].hrep, cases[i].shape, "normaliz").keys()
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert not errors, errors
    assert len(seen) == 2 and seen[0][0] != seen[1][0] and seen[0][2] != seen[1][2]
    for folder, files, _ in seen:
        assert folder.parent == tmp_path and folder.name.startswith("dpfix-normaliz-")
        assert files == ["polytope.out"]  # what Normaliz writes: its output file only
    for i, P in enumerate(cases):
        assert results[i] == P.vertex_array(backend="cdd").keys()
    assert list(tmp_path.iterdir()) == []


def test_normaliz_folder_is_gone_before_the_first_chunk(monkeypatch, tmp_path):
    """The output is read through an open file: the folder is removed before anything
    is handed out, so a stream left unfinished (or a job clearing the temporary folder
    meanwhile) leaves nothing behind and loses nothing."""
    import tempfile

    monkeypatch.setenv("TMPDIR", str(tmp_path))
    monkeypatch.setattr(tempfile, "tempdir", None)
    seen = spy_folders(monkeypatch)
    P = F(4, 2, standard_z(4)["asymmetric"])
    stream = en.iter_vertex_chunks(P.hrep, P.shape, chunk=100)
    first = next(stream)
    assert len(seen) == 1 and not seen[0][0].exists() and list(tmp_path.iterdir()) == []
    whole = VertexArray.concatenate([first, *stream], P.shape)
    assert whole.keys() == P.vertex_array(backend="cdd").keys()
    unfinished = en.iter_vertex_chunks(P.hrep, P.shape, chunk=100)
    next(unfinished)  # suspended mid-stream: its folder is already gone
    assert list(tmp_path.iterdir()) == []
    unfinished.close()
    assert en.count_vertices(P.hrep, "normaliz") == len(whole)
    assert list(tmp_path.iterdir()) == []
