"""A complete folder (a Dask dataset) committed with the staged files
(dpfix.io.commit.StagedFiles.folder): all moved, or none; never replacing anything."""

from __future__ import annotations

import pytest

from dpfix.io.commit import StagedFiles


def _dataset(path):
    path.mkdir()
    (path / "part-00000.parquet").write_bytes(b"p")
    return path


def test_a_folder_moves_with_the_files(tmp_path):
    with StagedFiles() as staged:
        staged.folder(_dataset(tmp_path / ".o.staged"), tmp_path / "o", "--out")
        staged.temp(tmp_path / "r.json", "--report").write_text("{}")
        staged.commit()
    assert staged.committed == [tmp_path / "o", tmp_path / "r.json"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["o", "r.json"]
    assert (tmp_path / "o" / "part-00000.parquet").read_bytes() == b"p"


@pytest.mark.parametrize("force", [False, True])
def test_a_folder_that_appeared_stops_the_commit(tmp_path, force):
    """Even with force: the other's folder stays, nothing of the run is left."""
    (tmp_path / "o").mkdir()  # someone else's, created during the run
    with StagedFiles(force=force) as staged:
        staged.folder(_dataset(tmp_path / ".o.staged"), tmp_path / "o", "--out")
        staged.temp(tmp_path / "r.json", "--report").write_text("{}")
        with pytest.raises(FileExistsError, match="--out: .* was created during the run"):
            staged.commit()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["o"]
    assert list((tmp_path / "o").iterdir()) == []


def test_a_failed_file_move_takes_the_folder_back(tmp_path, monkeypatch):
    def refuse(*args):
        raise OSError("disk full")

    with StagedFiles() as staged:
        staged.folder(_dataset(tmp_path / ".o.staged"), tmp_path / "o", "--out")
        staged.temp(tmp_path / "r.json", "--report").write_text("{}")
        monkeypatch.setattr(StagedFiles, "_move", refuse)
        with pytest.raises(OSError, match="disk full"):
            staged.commit()
    assert list(tmp_path.iterdir()) == []  # the folder went back to its name and was removed


def test_discard_removes_a_folder_not_committed(tmp_path):
    with StagedFiles() as staged:
        staged.folder(_dataset(tmp_path / ".o.staged"), tmp_path / "o")
    assert list(tmp_path.iterdir()) == []
