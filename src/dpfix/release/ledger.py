"""A budget ledger: one privacy budget, spent release by release, recorded on disk.

A :class:`Ledger` is a file of JSON lines. Its first line fixes the total
budget ``(eps, delta)`` when the ledger is created; every later line records
the charge of one release: the data set, the columns, ``eps``, ``delta``, the
privacy unit (what one individual can change, as the caller states it), an
optional note, the time (UTC, ISO 8601) and the dpfix version. The file holds
no confidential value (no count, no statistic of the data), so it can be kept
and shown with the releases.

Composition
-----------
The releases recorded are composed **sequentially**: the ledger's balance is
the total minus the sum of the charges, ``eps_total - sum eps_k`` and
``delta_total - sum delta_k``. By the basic composition theorem (Dwork and
Roth, *The Algorithmic Foundations of Differential Privacy*, 2014, Theorem
3.16) releases that are ``(eps_k, delta_k)``-DP, each on its own randomness,
are together ``(sum eps_k, sum delta_k)``-DP, whatever each release's
mechanism and even when each is chosen after seeing the earlier outputs; a
release that would take either sum above the total is refused. This is the
composition ``docs/math_notes.md`` (Section 7) uses for the two stages of one
release, applied across releases. Every charge counts against the one total,
whatever its ``dataset``: a ledger stands for one population of individuals,
and tables about the same people share its budget.

Amounts are exact rationals (:class:`fractions.Fraction`): a float is taken at
its exact binary value (``0.1`` is ``3602879701896397 / 2^55``, slightly more
than ``1/10``), which is the budget a mechanism run with that float spends, so
the balance is never overstated; a text (``"0.1"``, ``"1/3"``), an int, a
Decimal or a Fraction is taken exactly. The file stores each amount as its
exact text.

What identifies a data set
--------------------------
``dataset`` is a label the caller chooses: ``dpfix privatize`` records the
input's resolved path (``<stdin>`` for standard input). The ledger records no
hash of the data: a hash is a deterministic function of the confidential
table, not a private one (whoever knows every row but one could test each
candidate value of the last against it), and it would make the ledger a
confidential file. Since every charge counts against the one total, the label
serves the audit, not the arithmetic.

Atomicity and concurrency
-------------------------
- **Two-phase charge.** :meth:`Ledger.reserve` returns a :class:`Reservation`,
  a context manager: entering it takes the ledger's release lock and checks
  the balance (a request above it is a ValueError naming both, raised before
  the caller writes anything); :meth:`Reservation.commit` appends the record;
  leaving the block without a commit (an error, an interruption) records
  nothing.
- **Serialised.** The release lock is ``flock(LOCK_EX)`` on the file
  ``.NAME.lock`` beside the ledger, held from the balance check to the record,
  so two concurrent releases cannot both pass the check. The operating system
  drops a flock when its process ends, so a reservation of a crashed or
  killed process never blocks the next one (no stale lock). Readers
  (:meth:`Ledger.balance`, :meth:`Ledger.entries`) take a shared flock on the
  ledger itself, which a writer holds exclusively only while it appends, so
  they do not wait for a release to finish.
- **Atomic records.** A ledger is created complete (its header written to a
  temporary, fsynced and hard-linked into place, so it never exists empty) and
  only ever appended to, one complete line per charge in one ``write`` and an
  ``fsync``; a short write is truncated back. Each record carries its
  position (``entry``). Reading refuses a line cut short (no end of line), a
  line that is not a record, and a record out of place, naming the line: a
  damaged ledger is never read as a smaller spending.

Examples
--------
>>> import tempfile
>>> path = Path(tempfile.mkdtemp()) / "budget.jsonl"
>>> ledger = Ledger(path, total=1)
>>> with ledger.reserve("0.75", dataset="t.csv", columns=["k"], unit="one row by 1") as r:
...     r.commit()["eps"]
'0.75'
>>> ledger
Ledger('budget.jsonl', total eps 1, delta 0; spent eps 0.75, delta 0; balance eps 0.25, delta 0)
>>> with ledger.reserve("0.5", dataset="t.csv", columns=["k"], unit="one row by 1") as r:
...     r.commit()
Traceback (most recent call last):
...
ValueError: ledger budget.jsonl: the release needs eps 0.5, delta 0, but the balance is eps 0.25, \
delta 0 (total eps 1, delta 0); refused
>>> Ledger(path, total=2)
Traceback (most recent call last):
...
ValueError: ledger budget.jsonl: its total is eps 1, delta 0, not eps 2, delta 0 as given
"""

from __future__ import annotations

import errno
import fcntl
import json
import math
import os
import secrets
import threading
import time
from collections.abc import Callable, Iterable
from datetime import UTC, datetime
from decimal import Decimal
from fractions import Fraction
from pathlib import Path
from typing import Any, NamedTuple

__all__ = ["Ledger", "Reservation", "Budget", "LEDGER_KIND", "LEDGER_FORMAT"]

#: The ``ledger`` field of a ledger's first line.
LEDGER_KIND = "dpfix budget ledger"
#: The layout of the lines; a ledger of another format is refused.
LEDGER_FORMAT = 1
#: The ledgers this thread holds a reservation on (a second one would wait for itself).
_held = threading.local()


class Budget(NamedTuple):
    """An amount of privacy budget, ``(eps, delta)``, as exact rationals."""

    eps: Fraction
    delta: Fraction


# ------------------------------------------------------------------ amounts
def _amount(value: Any, what: str) -> Fraction:
    """``value`` as an exact non-negative rational (a float at its exact binary value).

    Examples
    --------
    >>> _amount("0.1", "eps"), _amount(0.5, "eps"), _amount(Fraction(1, 3), "eps")
    (Fraction(1, 10), Fraction(1, 2), Fraction(1, 3))
    >>> _amount(float("nan"), "eps")
    Traceback (most recent call last):
    ...
    ValueError: eps: must be a finite number >= 0, got nan
    """
    if isinstance(value, bool):
        raise ValueError(f"{what}: must be a number, got {value!r}")
    try:
        if isinstance(value, str):
            q = Fraction(value.strip())
        elif isinstance(value, (int, Fraction)):
            q = Fraction(value)
        elif isinstance(value, float):
            if not math.isfinite(value):
                raise ValueError
            q = Fraction(value)
        elif isinstance(value, Decimal):
            q = Fraction(value)
        else:
            raise ValueError
    except (ValueError, OverflowError, ZeroDivisionError):
        raise ValueError(f"{what}: must be a finite number >= 0, got {value!r}") from None
    if q < 0:
        raise ValueError(f"{what}: must be a finite number >= 0, got {value!r}")
    return q


def _text(q: Fraction) -> str:
    """The exact text of ``q``: a decimal where it has one, else ``p/q``.

    Examples
    --------
    >>> _text(Fraction(3, 4)), _text(Fraction(5)), _text(Fraction(1, 3)), _text(Fraction(1, 20))
    ('0.75', '5', '1/3', '0.05')
    """
    den, twos, fives = q.denominator, 0, 0
    while den % 2 == 0:
        den, twos = den // 2, twos + 1
    while den % 5 == 0:
        den, fives = den // 5, fives + 1
    if den != 1:
        return f"{q.numerator}/{q.denominator}"
    places = max(twos, fives)
    digits = str(q.numerator * 10**places // q.denominator).rjust(places + 1, "0")
    if not places:
        return digits
    return f"{digits[:-places]}.{digits[-places:]}".rstrip("0").rstrip(".")


def _show(q: Fraction) -> str:
    """``q`` for a message: its exact text when short, else the float it equals, else an
    approximation marked ``about``.

    Examples
    --------
    >>> _show(Fraction(1, 4)), _show(Fraction(0.1)), _show(Fraction(1, 3) + Fraction(0.1))
    ('0.25', '0.1', 'about 0.43333333333333335')
    """
    text = _text(q)
    if len(text) > 20 and Fraction(float(q)) == q:
        return repr(float(q))
    return text if len(text) <= 20 else f"about {float(q)!r}"


def _pair(b: Budget) -> str:
    return f"eps {_show(b.eps)}, delta {_show(b.delta)}"


# ------------------------------------------------------------------ the ledger
class Ledger:
    """A privacy budget on disk: its total, and the charge of every release (JSON lines).

    Parameters
    ----------
    path : str or pathlib.Path
        The ledger file. It is created, with ``total``, when it does not exist.
    total : number, optional
        The total eps. Needed to create the ledger; for an existing ledger,
        when given, it must be the ledger's own (else a ValueError).
    delta_total : number, optional
        The total delta (default 0: only pure eps-DP releases fit).
    timeout : float, optional
        Seconds a reservation waits for another release to finish (default:
        as long as it takes); then a TimeoutError.

    Attributes
    ----------
    path : pathlib.Path
    total : Budget
        The ledger's total ``(eps, delta)``, as its file states it.

    Raises
    ------
    ValueError
        A ledger that does not exist and no ``total``; a total other than the
        ledger's; a damaged ledger file (the line is named).

    See the module docstring for the composition, the records and the locks.

    Examples
    --------
    >>> import tempfile
    >>> path = Path(tempfile.mkdtemp()) / "l.jsonl"
    >>> Ledger(path)
    Traceback (most recent call last):
    ...
    ValueError: ledger l.jsonl does not exist; give its total eps to create it
    >>> Ledger(path, total="2", delta_total="1e-6").balance()
    Budget(eps=Fraction(2, 1), delta=Fraction(1, 1000000))
    """

    def __init__(self, path: str | Path, total: Any = None, *, delta_total: Any = 0,
                 timeout: float | None = None) -> None:
        self.path = Path(path)
        self.timeout = timeout
        given = None
        if total is not None:
            given = Budget(_amount(total, "total"), _amount(delta_total, "delta_total"))
            if given.eps == 0:
                raise ValueError(f"total: must be a finite number > 0, got {total!r}")
            if given.delta >= 1:
                raise ValueError(f"delta_total: must be below 1, got {delta_total!r}")
        if not os.path.lexists(self.path):
            if given is None:
                raise ValueError(f"ledger {self.path.name} does not exist; give its total eps "
                                 "to create it")
            self._create(given)
        head = self._read()[0]
        self.total = Budget(Fraction(head["total_eps"]), Fraction(head["total_delta"]))
        if given is not None and given != self.total:
            raise ValueError(f"ledger {self.path.name}: its total is {_pair(self.total)}, not "
                             f"{_pair(given)} as given")

    # -------------------------------------------------------------- reading
    def entries(self) -> list[dict]:
        """The records of the charges, oldest first (``eps``, ``delta`` as Fractions).

        Examples
        --------
        >>> import tempfile
        >>> ledger = Ledger(Path(tempfile.mkdtemp()) / "l.jsonl", total=1)
        >>> with ledger.reserve(0.5, dataset="t.csv", columns=["a", "b"], unit="a row") as r:
        ...     _ = r.commit()
        >>> [(e["entry"], e["eps"], e["columns"]) for e in ledger.entries()]
        [(1, Fraction(1, 2), ['a', 'b'])]
        """
        return [dict(e, eps=Fraction(e["eps"]), delta=Fraction(e["delta"]))
                for e in self._read()[1:]]

    def spent(self) -> Budget:
        """The sum of the charges, ``(sum eps, sum delta)``."""
        return _spent(self._read()[1:])

    def balance(self) -> Budget:
        """What is left: the total minus the sum of the charges (sequential composition)."""
        spent = self.spent()
        return Budget(self.total.eps - spent.eps, self.total.delta - spent.delta)

    def __repr__(self) -> str:
        spent = self.spent()
        left = Budget(self.total.eps - spent.eps, self.total.delta - spent.delta)
        return (f"Ledger({self.path.name!r}, total {_pair(self.total)}; spent {_pair(spent)}; "
                f"balance {_pair(left)})")

    def _read(self) -> list[dict]:
        """Every line, checked, under a shared lock (a writer appends under an exclusive one)."""
        fd = os.open(self.path, os.O_RDONLY)
        try:
            fcntl.flock(fd, fcntl.LOCK_SH)
            with open(fd, "rb", closefd=False) as f:
                data = f.read()
        finally:
            os.close(fd)
        return _parse(data, self.path.name)

    # -------------------------------------------------------------- writing
    def _create(self, total: Budget) -> None:
        """Create the ledger complete: a temporary with the header, fsynced, linked into place
        (a ledger created meanwhile by another process is kept: its total is then checked)."""
        head = {"ledger": LEDGER_KIND, "format": LEDGER_FORMAT, "total_eps": _text(total.eps),
                "total_delta": _text(total.delta), "created": _now(),
                "dpfix_version": _version()}
        tmp = self.path.parent / f".{self.path.name}.{secrets.token_hex(6)}.part"
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        try:
            try:
                _write_all(fd, _line(head))
                os.fsync(fd)
            finally:
                os.close(fd)
            try:
                os.link(tmp, self.path)
            except FileExistsError:
                pass
            except OSError as exc:
                if exc.errno not in (errno.EPERM, errno.ENOTSUP, errno.EOPNOTSUPP, errno.ENOSYS):
                    raise
                raise OSError(exc.errno, f"ledger {self.path}: the file system has no hard "
                              "links, which the ledger needs to be created atomically") from None
        finally:
            os.unlink(tmp)
        _fsync_folder(self.path.parent)

    def reserve(self, eps: Any, delta: Any = 0, *, dataset: str, columns: Iterable[str],
                unit: str, note: str | None = None,
                on_wait: Callable[[], None] | None = None) -> Reservation:
        """A charge of ``(eps, delta)`` for one release, to enter before the release is made.

        Use it as ``with ledger.reserve(eps, ...) as r: ...write outputs...; r.commit()``.
        Entering waits for any other release on this ledger (``on_wait()`` is
        called once if it has to), then checks the balance; leaving without
        :meth:`Reservation.commit` records nothing.

        Parameters
        ----------
        eps, delta : number
            The budget the release spends (``delta`` default 0).
        dataset : str
            What the release is of (a name or a resolved path; no hash of the data).
        columns : iterable of str
            The columns released.
        unit : str
            The privacy unit: what one individual can change, and the composition.
        note : str, optional
            Free text kept with the record.
        on_wait : callable, optional
            Called when another release holds the ledger.

        Raises
        ------
        ValueError
            On entering: the request exceeds the balance (both named); a damaged ledger.
        TimeoutError
            On entering: the ledger's ``timeout`` passed while another release held it.
        """
        charge = Budget(_amount(eps, "eps"), _amount(delta, "delta"))
        record = {"dataset": str(dataset), "columns": [str(c) for c in columns],
                  "unit": str(unit)}
        if note is not None:
            record["note"] = str(note)
        return Reservation(self, charge, record, on_wait)

    def _lock_path(self) -> Path:
        return self.path.parent / f".{self.path.name}.lock"


class Reservation:
    """A charge held on a :class:`Ledger` from its balance check until :meth:`commit`.

    Made by :meth:`Ledger.reserve`; a context manager. Inside the block the
    ledger's release lock is held, so :attr:`after` (the balance once this
    charge is recorded) is what the ledger will say, and it may go into the
    release's report before the commit.

    Attributes
    ----------
    ledger : Ledger
    charge : Budget
        The ``(eps, delta)`` reserved.
    after : Budget or None
        The balance once the charge is recorded (set on entering).
    committed : bool
        Whether the record is written.

    Examples
    --------
    >>> import tempfile
    >>> ledger = Ledger(Path(tempfile.mkdtemp()) / "l.jsonl", total=1)
    >>> with ledger.reserve("0.25", dataset="t.csv", columns=["k"], unit="a row") as r:
    ...     r.statement()["balance"]  # for the release's report, written with the outputs
    ...     _ = r.commit()            # the outputs complete: recorded, then made visible
    0.75
    >>> with ledger.reserve("0.25", dataset="t.csv", columns=["k"], unit="a row") as r:
    ...     pass                      # no commit: nothing recorded
    >>> len(ledger.entries()), ledger.balance().eps
    (1, Fraction(3, 4))
    """

    def __init__(self, ledger: Ledger, charge: Budget, record: dict,
                 on_wait: Callable[[], None] | None) -> None:
        self.ledger, self.charge, self.record, self.on_wait = ledger, charge, record, on_wait
        self.committed = False
        self.after: Budget | None = None
        self._lock: int | None = None

    def __enter__(self) -> Reservation:
        key = os.path.abspath(self.ledger.path)
        held = _held.__dict__.setdefault("paths", set())
        if key in held:
            raise ValueError(f"ledger {self.ledger.path.name}: this thread already holds a "
                             "reservation on it; commit or leave that one first")
        self._lock = _acquire(self.ledger._lock_path(), self.ledger.timeout, self.on_wait,
                              self.ledger.path.name)
        held.add(key)
        try:
            self.after = self._check(self.ledger._read())
        except BaseException:
            self._release()
            raise
        return self

    def _check(self, lines: list[dict]) -> Budget:
        """The balance after this charge, given the ledger's ``lines``; a ValueError if it
        would be negative."""
        spent, total = _spent(lines[1:]), self.ledger.total
        head = Budget(Fraction(lines[0]["total_eps"]), Fraction(lines[0]["total_delta"]))
        if head != total:  # the file was replaced by another ledger since it was opened
            raise ValueError(f"ledger {self.ledger.path.name}: its total is now {_pair(head)}, "
                             f"not {_pair(total)} as opened; open it again")
        left = Budget(total.eps - spent.eps, total.delta - spent.delta)
        if self.charge.eps > left.eps or self.charge.delta > left.delta:
            short = min(self.charge.eps - left.eps, Fraction(1))
            hint = ("; the amounts are the exact values of the floats given (0.1 is slightly "
                    "more than 1/10)" if 0 < short < self.charge.eps * Fraction(1, 10**9)
                    else "")
            raise ValueError(f"ledger {self.ledger.path.name}: the release needs "
                             f"{_pair(self.charge)}, but the balance is {_pair(left)} (total "
                             f"{_pair(self.ledger.total)}); refused{hint}")
        return Budget(left.eps - self.charge.eps, left.delta - self.charge.delta)

    def commit(self) -> dict:
        """Record the charge (one line, appended and fsynced); returns the record written.

        Call it when the release's outputs are complete, before they become
        visible: a charge recorded for a release that then fails only wastes
        budget, a release without its charge would break the accounting.
        """
        if self._lock is None:
            raise RuntimeError("commit() inside the reservation's with block only")
        if self.committed:
            raise RuntimeError("this reservation is already committed")
        fd = os.open(self.ledger.path, os.O_WRONLY | os.O_APPEND)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            with open(self.ledger.path, "rb") as f:
                lines = _parse(f.read(), self.ledger.path.name)
            self.after = self._check(lines)  # the file may have changed outside any lock
            entry = {"entry": len(lines), "eps": _text(self.charge.eps),
                     "delta": _text(self.charge.delta), **self.record, "time": _now(),
                     "dpfix_version": _version()}
            size = os.fstat(fd).st_size
            try:
                _write_all(fd, _line(entry))
            except BaseException:
                os.ftruncate(fd, size)  # a short write: the ledger as it was
                raise
            self.committed = True  # written: from here the charge counts, fsync or not
            os.fsync(fd)
        finally:
            os.close(fd)
        return entry

    def statement(self) -> dict:
        """The ledger after this charge, for a public report: its name, total, spent, balance.

        Floats for reading, and the exact texts under ``exact``.
        """
        if self.after is None:
            raise RuntimeError("statement() inside the reservation's with block only")
        total, after = self.ledger.total, self.after
        spent = Budget(total.eps - after.eps, total.delta - after.delta)
        return {"path": self.ledger.path.name, "total": float(total.eps),
                "spent": float(spent.eps), "balance": float(after.eps),
                "delta_total": float(total.delta), "delta_spent": float(spent.delta),
                "delta_balance": float(after.delta),
                "this_release": {"eps": float(self.charge.eps),
                                 "delta": float(self.charge.delta)},
                "exact": {k: _text(v) for k, v in (
                    ("total", total.eps), ("spent", spent.eps), ("balance", after.eps),
                    ("delta_total", total.delta), ("delta_spent", spent.delta),
                    ("delta_balance", after.delta))},
                "composition": "sequential (basic composition, Dwork and Roth 2014, Theorem "
                               "3.16): the balance is the total minus the sum of the charges"}

    def _release(self) -> None:
        _held.paths.discard(os.path.abspath(self.ledger.path))
        if self._lock is not None:
            os.close(self._lock)  # closing the descriptor drops the flock
            self._lock = None

    def __exit__(self, *exc: object) -> None:
        self._release()


# ------------------------------------------------------------------ file helpers
def _acquire(path: Path, timeout: float | None, on_wait: Callable[[], None] | None,
             name: str) -> int:
    """An open descriptor of ``path`` holding ``flock(LOCK_EX)``."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return fd
        except BlockingIOError:
            pass
        if on_wait is not None:
            on_wait()
        if timeout is None:
            fcntl.flock(fd, fcntl.LOCK_EX)
            return fd
        end = time.monotonic() + timeout
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                return fd
            except BlockingIOError:
                if time.monotonic() >= end:
                    raise TimeoutError(f"ledger {name}: another release held it for "
                                       f"{timeout:g} s") from None
                time.sleep(0.02)
    except BaseException:
        os.close(fd)
        raise


def _parse(data: bytes, name: str) -> list[dict]:
    """The lines of a ledger file, checked: a header, then records in their places."""
    if not data:
        raise ValueError(f"ledger {name} is empty; it is not a ledger (remove it to start one)")
    lines = data.split(b"\n")
    if lines[-1]:
        raise ValueError(f"ledger {name}: line {len(lines)} is cut short (no end of line): a "
                         "write was interrupted; check the file and remove or repair that line")
    out = []
    for i, raw in enumerate(lines[:-1], 1):
        try:
            item = json.loads(raw)
            if not isinstance(item, dict):
                raise ValueError
            if i == 1:
                if item.get("ledger") != LEDGER_KIND or item.get("format") != LEDGER_FORMAT:
                    raise ValueError
                Fraction(item["total_eps"]), Fraction(item["total_delta"])
            elif item.get("entry") != i - 1:
                raise ValueError
            else:
                _amount(item["eps"], "eps"), _amount(item["delta"], "delta")
        except (ValueError, KeyError, TypeError, ZeroDivisionError):
            what = (f"not a {LEDGER_KIND} of format {LEDGER_FORMAT}" if i == 1 else
                    f"not record {i - 1} of the ledger")
            raise ValueError(f"ledger {name}: line {i} is {what}; check the file") from None
        out.append(item)
    return out


def _spent(records: list[dict]) -> Budget:
    eps = sum((Fraction(e["eps"]) for e in records), Fraction(0))
    return Budget(eps, sum((Fraction(e["delta"]) for e in records), Fraction(0)))


def _line(obj: dict) -> bytes:
    return (json.dumps(obj, ensure_ascii=False, separators=(",", ":")) + "\n").encode()


def _write_all(fd: int, data: bytes) -> None:
    """Write ``data`` at ``fd``; an OSError when the system writes less (a full disk)."""
    written = os.write(fd, data)
    if written != len(data):
        raise OSError(errno.ENOSPC, f"wrote {written} of {len(data)} bytes")


def _fsync_folder(folder: Path) -> None:
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def _version() -> str:
    from dpfix import __version__

    return __version__
