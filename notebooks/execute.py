"""Execute the notebooks in place, so that they are committed with their outputs.

``make notebooks`` (or ``python notebooks/execute.py [NAME ...]``) runs each
notebook top to bottom in a fresh kernel of this interpreter and writes it back
with its outputs; ``tests/test_notebooks.py`` checks that the stored outputs
come from one such run and executes the notebooks again.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import nbclient
import nbformat

HERE = Path(__file__).resolve().parent


def execute(path: Path, timeout: float = 600) -> float:
    """Run ``path`` in place; the seconds it took."""
    nb = nbformat.read(path, as_version=4)
    start = time.perf_counter()
    nbclient.NotebookClient(nb, timeout=timeout, kernel_name="python3",
                            resources={"metadata": {"path": str(HERE)}}).execute()
    nb.metadata.pop("widgets", None)
    nbformat.write(nb, path)
    return time.perf_counter() - start


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("names", nargs="*", help="notebooks to run (default: all)")
    args = parser.parse_args()
    paths = [HERE / n for n in args.names] or sorted(HERE.glob("*.ipynb"))
    for path in paths:
        print(f"{path.name}: {execute(path):.1f} s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
