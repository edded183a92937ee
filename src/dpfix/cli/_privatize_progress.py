"""``dpfix privatize``'s progress on stderr: a bar per column on a terminal, one line per
column at the end otherwise, nothing with ``--quiet``."""

from __future__ import annotations

import sys
from typing import Any

from dpfix.numbers.numeric import require

__all__ = ["Progress", "Bars"]


class Progress:
    """Progress on stderr: a tqdm bar on a terminal, one line at the end otherwise.

    On a terminal the bar opens with the pipeline's first stage and shows the
    stage and its elapsed time while ``T`` is built (no row count stuck at 0%),
    then the rows drawn. When stderr is not a terminal (a log file, a pipe) no
    carriage-return frames are written: one line when the run succeeds, nothing
    when it fails (the error stays one line). ``--quiet``: nothing.
    """

    def __init__(self, total: int, quiet: bool, label: str) -> None:
        self.total, self.quiet, self.label, self.bar = total, quiet, label, None
        self.stages: list[str] = []
        self.done = 0
        self.tty = bool(getattr(sys.stderr, "isatty", lambda: False)())

    def stage(self, name: str) -> None:
        if self.quiet:
            return
        self.stages.append(name)
        if not self.tty:
            return
        if self.bar is None:
            tqdm = require("tqdm").tqdm
            self.bar = tqdm(total=self.total, unit="row", unit_scale=True, file=sys.stderr,
                            mininterval=0.5, dynamic_ncols=True,
                            bar_format="{desc}{elapsed}")
        if name == "draw":
            self.bar.bar_format = None  # the row bar from now on
        self.bar.set_description(f"{self.label}: {name}")

    def update(self, rows: int) -> None:
        self.done += rows
        if self.bar is not None:
            self.bar.update(rows)

    def close(self, failed: bool = False) -> None:
        if self.bar is not None:
            self.bar.leave = not failed  # an error message replaces the bar
            self.bar.close()
            self.bar = None
        elif not (self.tty or self.quiet or failed or not self.stages):
            share = 100 * self.done // self.total if self.total else 100
            print(f"dpfix privatize: {self.label}: {', '.join(self.stages)} done; "
                  f"{self.done} rows ({share}%)", file=sys.stderr)


class Bars:
    """One :class:`Progress` per column, opened when the library first tells of it.

    On a terminal one bar at a time: a column's bar closes when the next column's opens.
    Off a terminal each column's line is printed at the end, in the columns' order, with
    every row it drew: a streamed release builds every column's ``T`` in its first pass
    and draws the rows of all the columns together in its second.
    """

    def __init__(self, quiet: bool, label: str, several: bool) -> None:
        self.quiet, self.label, self.several = quiet, label, several
        self.bars: dict = {}
        self.current: Progress | None = None

    def bar(self, column: Any, rows: int = 0) -> Progress:
        if column not in self.bars:
            if self.current is not None and self.current.tty:
                self.current.close()
            name = f"{self.label} ({column})" if self.several else self.label
            self.current = self.bars[column] = Progress(rows, self.quiet, name)
        return self.bars[column]

    def close(self, failed: bool = False) -> None:
        for bar in self.bars.values():
            bar.close(failed=failed)
        self.bars, self.current = {}, None
