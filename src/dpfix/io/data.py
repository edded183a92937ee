"""The data the toolkit finds and makes: the shared data sets and the synthetic table.

- the shared data sets, found in ``$DPFIX_DATA`` or ``../shared/data``
  (:func:`data_dir`, :func:`data_path`), never copied into the project;
- a reproducible synthetic table of counts (:func:`synthetic_counts`), the default
  input of ``make run`` and of ``dpfix privatize --demo``.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np

from dpfix.sampling.source import numpy_generator

__all__ = ["data_dir", "data_path", "synthetic_counts"]


def data_dir() -> Path:
    """The folder of the shared data sets.

    Returns
    -------
    pathlib.Path
        ``$DPFIX_DATA`` when set, else ``../shared/data`` beside the repository
        (or beside the current directory).

    Raises
    ------
    FileNotFoundError
        If ``$DPFIX_DATA`` is not a folder, or no data folder exists.

    Examples
    --------
    >>> import os, shutil, tempfile
    >>> before, folder = os.environ.get("DPFIX_DATA"), tempfile.mkdtemp()
    >>> os.environ["DPFIX_DATA"] = folder
    >>> data_dir() == Path(folder)
    True
    >>> shutil.rmtree(os.environ.pop("DPFIX_DATA"))
    >>> if before is not None:
    ...     os.environ["DPFIX_DATA"] = before
    """
    env = os.environ.get("DPFIX_DATA")
    if env:
        if not Path(env).is_dir():
            raise FileNotFoundError(f"DPFIX_DATA={env} is not a folder")
        return Path(env)
    # the repository is three folders up from src/dpfix/io/data.py
    candidates = [base.parent / "shared" / "data"
                  for base in (Path(__file__).resolve().parents[3], Path.cwd())]
    for candidate in candidates:
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError(f"no data folder: DPFIX_DATA is not set and none of "
                            f"{', '.join(map(str, dict.fromkeys(candidates)))} exists; set "
                            f"DPFIX_DATA to the folder of the data files")


def data_path(name: str) -> Path:
    """Path of one shared data file, e.g. ``data_path("crime_data.csv")``.

    Parameters
    ----------
    name : str
        The file name inside :func:`data_dir`.

    Returns
    -------
    pathlib.Path

    Raises
    ------
    FileNotFoundError
        If there is no data folder or no such file in it.

    Examples
    --------
    >>> import os, shutil, tempfile
    >>> before, folder = os.environ.get("DPFIX_DATA"), Path(tempfile.mkdtemp())
    >>> _ = (folder / "h.csv").write_text("0,1\\n")
    >>> os.environ["DPFIX_DATA"] = str(folder)
    >>> data_path("h.csv").name
    'h.csv'
    >>> shutil.rmtree(os.environ.pop("DPFIX_DATA"))
    >>> if before is not None:
    ...     os.environ["DPFIX_DATA"] = before
    """
    path = data_dir() / name
    if not path.is_file():
        raise FileNotFoundError(f"data file {path} not found")
    return path


def synthetic_counts(rows: int = 2000, seed: Any = 7) -> np.ndarray:
    """A reproducible synthetic table of counts, the embedded default of ``make run``.

    A zero-inflated negative binomial: about 40% zeros and a long right tail.

    Parameters
    ----------
    rows : int
        Number of rows (categories).
    seed : int, numpy.random.SeedSequence or a seeded RandomSource
        Seed of numpy's generator (:func:`dpfix.sampling.source.numpy_generator`): the
        same seed gives the same table.

    Returns
    -------
    numpy.ndarray
        ``rows`` non-negative int64 counts.

    Examples
    --------
    >>> c = synthetic_counts(1000, seed=3)
    >>> len(c), bool((c >= 0).all()), bool((synthetic_counts(1000, seed=3) == c).all())
    (1000, True, True)
    """
    rng = numpy_generator(seed)
    counts = rng.negative_binomial(2, 0.25, size=rows)
    counts[rng.random(rows) < 0.35] = 0
    return counts
