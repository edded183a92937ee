"""The notebooks in ``notebooks/`` run top to bottom without a cell error.

They are committed with their outputs (a reader of the repository sees the
figures; ``make notebooks`` re-executes them in place) and executed again here
with nbclient in a fresh kernel. nbclient's ``"python3"`` kernel starts
``sys.executable`` (the test's interpreter, so the venv's ipykernel and the
installed dpfix); a test checks that, as a user-wide kernelspec could
otherwise point elsewhere. A cell running longer than :data:`HANG` seconds is stopped
(a hang, not a speed check: speed belongs in benchmarks/).
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")
pytest.importorskip("ipykernel")
pytest.importorskip("matplotlib")

NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks"
PATHS = sorted(NOTEBOOKS.glob("*.ipynb"))
#: Seconds after which a cell is taken to hang.
HANG = 600
#: Notebooks of exact text output (tables of fractions, counterexamples), without a figure.
WITHOUT_FIGURES = {"02_example1.ipynb", "07_your_own_conjecture.ipynb",
                   "08_neighbour_graphs.ipynb"}


def _execute(nb) -> None:
    """Run every cell (raises ``CellExecutionError`` on the first failure)."""
    client = nbclient.NotebookClient(nb, timeout=HANG, kernel_name="python3",
                                     resources={"metadata": {"path": str(NOTEBOOKS)}})
    client.execute()


def _stream_text(nb) -> str:
    return "".join(out.get("text", "") for cell in nb.cells if cell.cell_type == "code"
                   for out in cell.get("outputs", []) if out.get("output_type") == "stream")


def test_there_are_notebooks():
    assert PATHS, f"no notebooks found in {NOTEBOOKS}"


@pytest.mark.parametrize("path", PATHS, ids=[p.stem for p in PATHS])
def test_notebook_is_stored_with_its_outputs(path):
    """Every code cell was executed, top to bottom in one run, without an error."""
    nb = nbformat.read(path, as_version=4)
    nbformat.validate(nb)
    code = [cell for cell in nb.cells if cell.cell_type == "code"]
    counts = [cell.get("execution_count") for cell in code]
    assert counts == list(range(1, len(code) + 1)), (
        f"{path.name}: execution counts {counts}: run `make notebooks` before committing")
    errors = [i for i, cell in enumerate(code) for out in cell.get("outputs", [])
              if out.get("output_type") == "error"]
    assert not errors, f"{path.name}: code cells {errors} hold errors"
    assert any(out.get("output_type") == "display_data" and "image/png" in out.get("data", {})
               for cell in code for out in cell.get("outputs", [])) or \
        path.name in WITHOUT_FIGURES, f"{path.name}: no figure among the stored outputs"


def test_kernel_is_this_interpreter():
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("import sys, dpfix\n"
                                                                   "print(sys.executable)")])
    _execute(nb)
    assert Path(_stream_text(nb).strip()).resolve() == Path(sys.executable).resolve()


@pytest.mark.parametrize("path", PATHS, ids=[p.stem for p in PATHS])
def test_notebook_runs(path, monkeypatch):
    monkeypatch.delenv("DPFIX_NB04_FULL", raising=False)  # the quick variant of notebook 04
    _execute(nbformat.read(path, as_version=4))


@pytest.mark.full
def test_county_notebook_runs_without_the_data(tmp_path, monkeypatch):
    monkeypatch.setenv("DPFIX_DATA", str(tmp_path))  # an empty folder: no crime_data.csv
    path = NOTEBOOKS / "03_two_stage_county_homicides.ipynb"
    nb = nbformat.read(path, as_version=4)
    _execute(nb)
    assert "Using dpfix.io.data.synthetic_counts() instead" in _stream_text(nb)


def test_frameworks_notebook_runs_without_the_data(tmp_path, monkeypatch):
    """Notebook 06 falls back on a synthetic table; its study section reads committed CSVs."""
    monkeypatch.setenv("DPFIX_DATA", str(tmp_path))  # an empty folder: no crime_data.csv
    path = NOTEBOOKS / "06_no_split.ipynb"
    nb = nbformat.read(path, as_version=4)
    _execute(nb)
    assert "Using dpfix.io.data.synthetic_counts() instead" in _stream_text(nb)
