"""The Coq proof of Theorem A (formal/, docs/formal.md) and its bridge to the code.

On the sources, always: the folder holds no ``Admitted``, ``admit``, axiom or
parameter, and no hypothesis or variable outside a section; every Coq excerpt
that docs/formal.md shows is text of formal/. With ``coqc`` and MathComp (``make
proofs`` installs them): the development compiles in a scratch copy,
``Print Assumptions`` reports every main statement closed under the global
context, docs/formal.md shows every statement exactly as coqc prints it, and the
northwest corner computed inside Coq (``northwest_table``, proved equal to the
matrix of Theorem A by ``northwest_table_correct``) equals
:func:`dpfix.constructors.northwest_corner` exactly on small instances.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from fractions import Fraction
from pathlib import Path

import pytest

from dpfix.constructors.northwest import northwest_corner

ROOT = Path(__file__).resolve().parents[1]
FORMAL = ROOT / "formal"
DOC = ROOT / "docs" / "formal.md"
COQFLAGS = ["-R", ".", "DpfixFormal", "-w", "-notation-overridden,-ambiguous-paths"]

#: Forbidden anywhere: they leave a proof unfinished or assume a statement.
ANYWHERE = re.compile(r"\b(Admitted|admit|Axioms?|Conjectures?|Parameters?)\b")
#: Forbidden outside a section, where they would be global axioms.
TOP_LEVEL = re.compile(r"\b(Hypothes[ie]s|Variables?|Context)\b")
BLOCK = re.compile(r"\b(Section|Module)\s+(\w+)\s*\.|\bEnd\s+(\w+)\s*\.")


def _strip_comments(text: str) -> str:
    """The Coq source without its (nested) comments, line breaks kept."""
    out, depth, k = [], 0, 0
    while k < len(text):
        if text.startswith("(*", k):
            depth, k = depth + 1, k + 2
        elif depth and text.startswith("*)", k):
            depth, k = depth - 1, k + 2
        else:
            if not depth or text[k] == "\n":
                out.append(text[k])
            k += 1
    return "".join(out)


def forbidden(text: str) -> list[str]:
    """``"line K: word"`` for every forbidden word of a Coq source (comments ignored)."""
    code = _strip_comments(text)
    hits, depth, pos = [], 0, 0
    events = sorted([(m.start(), "block", m) for m in BLOCK.finditer(code)]
                    + [(m.start(), "any", m) for m in ANYWHERE.finditer(code)]
                    + [(m.start(), "top", m) for m in TOP_LEVEL.finditer(code)],
                    key=lambda e: e[0])
    for pos, kind, m in events:
        line = code.count("\n", 0, pos) + 1
        if kind == "block":
            depth += 1 if m.group(1) else -1
        elif kind == "any" or depth == 0:
            hits.append(f"line {line}: {m.group(1)}")
    return hits


def _project_files() -> list[str]:
    """The library's files in dependency order, as _CoqProject lists them."""
    lines = (FORMAL / "_CoqProject").read_text(encoding="utf-8").splitlines()
    return [s.strip() for s in lines if s.strip().endswith(".v")]


def _normal(text: str) -> str:
    return " ".join(text.split())


def test_the_scan_finds_what_is_forbidden():
    source = """(* Axiom in a comment (* nested Admitted *) is fine *)
Section S.
Variable x : nat.
Hypothesis hx : x = x.
End S.
Hypothesis h : False.
Lemma l : False. Proof. admit. Admitted.
Module M. Parameter p : nat. End M.
Axiom a : False.
"""
    assert forbidden(source) == ["line 6: Hypothesis", "line 7: admit", "line 7: Admitted",
                                 "line 8: Parameter", "line 9: Axiom"]


def test_no_admitted_axiom_or_global_hypothesis():
    files = sorted(FORMAL.glob("*.v"))
    assert {p.name for p in files} >= {*_project_files(), "Assumptions.v", "Statements.v"}
    bad = [f"{p.name} {hit}" for p in files for hit in forbidden(p.read_text(encoding="utf-8"))]
    assert not bad, "formal/ must prove everything it states:\n" + "\n".join(bad)


def test_every_coq_excerpt_of_the_doc_is_in_formal():
    sources = _normal(" ".join(p.read_text(encoding="utf-8") for p in FORMAL.glob("*.v")))
    blocks = re.findall(r"```coq\n(.*?)```", DOC.read_text(encoding="utf-8"), flags=re.S)
    assert len(blocks) >= 10
    missing = [b for b in blocks if _normal(b) not in sources]
    assert not missing, "docs/formal.md shows Coq text that formal/ does not hold:\n" + \
        "\n".join(missing)


def _coq_ready() -> bool:
    coqc = shutil.which("coqc")
    if coqc is None:
        return False
    where = subprocess.run([coqc, "-where"], capture_output=True, text=True, timeout=60)
    return (Path(where.stdout.strip()) / "user-contrib" / "mathcomp" / "algebra").is_dir()


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Path:
    """A scratch copy of formal/ with every library file compiled."""
    if not _coq_ready():
        pytest.skip("coqc with MathComp not found (make proofs installs them)")
    work = tmp_path_factory.mktemp("formal")
    for path in FORMAL.glob("*.v"):
        shutil.copy(path, work / path.name)
    for name in _project_files():
        run = subprocess.run(["coqc", *COQFLAGS, name], cwd=work, capture_output=True,
                             text=True, timeout=900)
        assert run.returncode == 0, f"coqc {name}:\n{run.stdout}{run.stderr}"
    return work


def _coq(work: Path, name: str, text: str | None = None) -> str:
    """coqc's output on ``name`` (written first when ``text`` is given)."""
    if text is not None:
        (work / name).write_text(text, encoding="utf-8")
    run = subprocess.run(["coqc", *COQFLAGS, name], cwd=work, capture_output=True, text=True,
                         timeout=900)
    assert run.returncode == 0, f"coqc {name}:\n{run.stdout}{run.stderr}"
    return run.stdout


def test_print_assumptions_closed(built):
    source = (built / "Assumptions.v").read_text(encoding="utf-8")
    names = re.findall(r"^Print Assumptions (\w+)\.", source, flags=re.M)
    assert {"theorem_A", "lemma_B1_1", "lemma_B1_2", "lemma_B2", "corollary_A1",
            "northwest_in_F", "northwest_table_correct"} <= set(names)
    lines = _coq(built, "Assumptions.v").splitlines()
    assert lines == ["Closed under the global context"] * len(names)


def _printed_statements(out: str) -> dict[str, str]:
    """``name -> printed type`` from the output of ``Check name.`` commands."""
    blocks = re.findall(r"^(\w+)\n((?:[ \t]+.*\n?)+)", out, flags=re.M)
    return {name: f"{name}\n{body}" for name, body in blocks}


def test_the_doc_shows_what_coqc_prints(built):
    checked = re.findall(r"^Check (\w+)\.", (built / "Statements.v").read_text(encoding="utf-8"),
                         flags=re.M)
    printed = _printed_statements(_coq(built, "Statements.v"))
    assert list(printed) == checked and "theorem_A" in printed
    shown = [_normal(b) for b in re.findall(r"```text\n(.*?)```",
                                            DOC.read_text(encoding="utf-8"), flags=re.S)]
    missing = [name for name, text in printed.items() if _normal(text) not in shown]
    assert not missing, f"docs/formal.md does not show coqc's statement of {missing}"


#: ``(lam, z)``: n = 1 .. 6, zeros at the ends and inside, a point mass, lam in
#: {3/2, 2, 5/2, 3}. MathComp's rationals sit on unary naturals, so the intermediate
#: numbers bound the sizes Coq can evaluate (lam = 3/2 at n = 5 already runs out of memory).
INSTANCES = [
    ("2", ["1"]),
    ("2", ["1/2", "1/2"]),
    ("3", ["1/4", "1/4", "1/2"]),
    ("2", ["1/2", "0", "1/2"]),
    ("2", ["0", "1/2", "1/2"]),
    ("5/2", ["1/2", "1/3", "1/6"]),
    ("3/2", ["1/3", "1/3", "1/3"]),
    ("2", ["1/4", "1/4", "1/4", "1/4"]),
    ("3/2", ["1/4", "1/4", "1/4", "1/4"]),
    ("3/2", ["1/6", "0", "1/3", "1/2"]),
    ("3", ["1/3", "0", "0", "2/3"]),
    ("2", ["0", "0", "1", "0"]),
    ("2", ["1/10", "1/5", "3/10", "2/5", "0"]),
    ("2", ["1/6"] * 6),
]


def _coq_rat(x: str) -> str:
    f = Fraction(x)
    return f"(q {f.numerator} {f.denominator})"


#: ``(num, den)`` as coqc prints it once blanks are removed: ``(8%Z,15%Z)``, ``((-3)%Z,4%Z)``
PAIR = re.compile(r"\(\(?(-?\d+)\)?%Z,\(?(-?\d+)\)?%Z\)")


def _fractions(text: str) -> list[Fraction]:
    """The ``(numerator, denominator)`` pairs of coqc's output, in order."""
    return [Fraction(int(a), int(b)) for a, b in PAIR.findall("".join(text.split()))]


def test_fractions_reads_what_coqc_prints():
    assert _fractions("[:: [:: (8%Z, 15%Z); (\n   (-3)%Z, 4%Z)]]") == [Fraction(8, 15),
                                                                   Fraction(-3, 4)]


def test_the_coq_northwest_corner_is_the_released_one(built):
    lines = ["From mathcomp Require Import all_ssreflect ssralg ssrnum ssrint rat.",
             "From DpfixFormal Require Import Bridge."]
    for lam, z in INSTANCES:
        lines.append(f"Eval vm_compute in northwest_fractions {_coq_rat(lam)} "
                     f"[:: {'; '.join(_coq_rat(x) for x in z)}].")
    out = _coq(built, "Instances.v", "\n".join(lines) + "\n")
    chunks = [c for c in out.split(": seq (seq (int * int))") if c.strip()]
    assert len(chunks) == len(INSTANCES)
    for (lam, z), chunk in zip(INSTANCES, chunks, strict=True):
        n = len(z)
        entries = _fractions(chunk)
        assert len(entries) == n * n, chunk
        coq = [entries[i * n:(i + 1) * n] for i in range(n)]
        released = northwest_corner(z, lam=Fraction(lam)).matrix.tolist()
        assert coq == released, f"lam = {lam}, z = {z}"

