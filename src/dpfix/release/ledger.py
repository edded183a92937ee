"""A budget ledger: one privacy budget, spent release by release, recorded on disk.

A :class:`Ledger` is a file of JSON lines. Its first line fixes the total
budget ``(eps, delta)`` when the ledger is created, for good: no later call
changes it (plan a ledger per period, say one per year, each created with that
period's total; a new ledger does not know the charges of an old one, so the
periods' totals compose sequentially too). Every later line records the charge
of one release: its position (``entry``), ``eps``, ``delta``, the data set, the
columns, the privacy unit (what one individual can change, as the caller states
it), an optional note, the time the charge was reserved (UTC, ISO 8601), the
dpfix version and ``prev``, the SHA-256 of the line before it. The file holds
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

One room for the file and its lock: the balance a reservation checks, the record it
appends and the lock held between them are one protocol on one file descriptor; split,
the invariant (the bytes checked are the bytes appended to) would cross modules.

Amounts are exact rationals (:class:`fractions.Fraction`): a float is taken at
its exact binary value (``0.1`` is ``3602879701896397 / 2^55``, slightly more
than ``1/10``), which is the budget a mechanism run with that float spends, so
the balance is never overstated; a text (``"0.1"``, ``"1/3"``), an int, a
Decimal or a Fraction is taken exactly. The file stores each amount as its
exact text. An amount is at most :data:`MAX_AMOUNT` (``10^300``), its text at
most :data:`MAX_TEXT` characters with a decimal exponent of at most that, and
its numerator and denominator of at most :data:`MAX_BITS` bits each
(:func:`ledger_amount`): the exact value of a float budget fits, and no amount,
given or read from the file, makes the arithmetic slow or a float of the
report infinite; the text is checked before it is converted.

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
  a context manager: entering it takes the ledger's release lock, checks the
  balance (a request above it is a ValueError naming both, raised before the
  caller writes anything) and fixes the record it will write;
  :meth:`Reservation.commit` checks that the ledger is still, byte for byte,
  the file it checked, then appends the record; leaving the block without a
  commit (an error, an interruption) records nothing.
- **One lock per ledger file.** The release lock is ``flock(LOCK_EX)`` on the
  ledger file itself, held from the balance check to the record: every name
  of the file (a symbolic link, a hard link, a relative path) reaches the same
  file and so the same lock, and no other file is created or opened for it.
  The operating system drops a flock when its process ends, so a reservation
  of a crashed or killed process never blocks the next one (no stale lock).
  Readers (:meth:`Ledger.balance`, :meth:`Ledger.entries`) take a shared flock
  when no release holds the ledger; while one does they read without it, so
  that they do not wait for the release to finish, leaving out a last line
  still without its end (the one record a commit may be writing, in one
  ``write``).
- **Atomic records.** A ledger is created complete (its header written to a
  temporary, fsynced and hard-linked into place, so it never exists empty) and
  only ever appended to, one complete line per charge in one ``write`` and an
  ``fsync``; a short write is truncated back. The ledger must be a regular
  file (a FIFO, a device, a folder or a symbolic link to nothing is refused in
  one line, and never waited on).

Tamper evidence
---------------
Reading refuses, naming the line: a line cut short (no end of line), a line
that is not JSON or not a record (a key given twice, JSON nested deeper than a
record, an amount out of range, an ``entry`` that is not the integer of its
position), and a record whose ``prev`` is not the SHA-256 of the line before
it. So an edit of any line but the last (a lowered charge, a deleted record, a
raised total) breaks the chain at the next line. The release's report carries
its record's position and SHA-256 (:meth:`Reservation.statement`), so a
published report also pins its own line and, through ``prev``, every line
before it: the ledger is checked against the reports with :meth:`Ledger.verify`.
The chain needs no secret, so whoever may write the file can also rewrite the
chain from the edited line on: against them the ledger's protection is the
file's permissions (let only the releasing account write it), and the
published reports. A ledger of format 1 (no chain) is still read and charged:
its records before the first chained one carry no ``prev`` and are not
protected; every record appended carries one.

Examples
--------
>>> import shutil, tempfile
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
ValueError: ledger budget.jsonl: its total is eps 1, delta 0, not eps 2, delta 0 as given; a \
ledger's total is fixed when it is created (start a new ledger for a new total)
>>> shutil.rmtree(path.parent)
"""

from __future__ import annotations

import errno
import fcntl
import hashlib
import json
import math
import os
import re
import secrets
import stat
import threading
import time
from collections.abc import Callable, Iterable
from datetime import UTC, datetime
from decimal import Decimal
from fractions import Fraction
from pathlib import Path
from typing import Any, NamedTuple

from dpfix.numbers.errors import Error
from dpfix.numbers.exact import exact_text

__all__ = ["Ledger", "Reservation", "Budget", "ledger_amount", "LEDGER_KIND", "LEDGER_FORMAT",
           "LEDGER_FORMATS", "MAX_AMOUNT", "MAX_TEXT", "MAX_BITS"]

#: The ``ledger`` field of a ledger's first line.
LEDGER_KIND = "dpfix budget ledger"
#: The layout of the lines a new ledger gets: records chained by ``prev``.
LEDGER_FORMAT = 2
#: The layouts read: 1 (records without ``prev``; those appended carry it) and 2.
LEDGER_FORMATS = (1, 2)
#: The largest amount (total, charge): its float, in a report, is finite.
MAX_AMOUNT = Fraction(10) ** 300
#: The longest text of an amount, and the largest exponent of a decimal text.
MAX_TEXT = 2000
#: The most bits of an amount's numerator and of its denominator (``2^-1074``, the least
#: float, has 1075; ``10^-1000`` has 3323).
MAX_BITS = 8192
#: The ledgers this thread holds a reservation on (a second one would wait for itself).
_held = threading.local()
#: A decimal or a fraction written plainly; the exponent's digits are checked apart.
_AMOUNT = re.compile(r"\+?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE]([+-]?\d+))?|\d+/\d+")


class Budget(NamedTuple):
    """An amount of privacy budget, ``(eps, delta)``, as exact rationals."""

    eps: Fraction
    delta: Fraction


# ------------------------------------------------------------------ amounts
def ledger_amount(value: Any, what: str, positive: bool = False) -> Fraction:
    """``value`` as an exact rational in the range a ledger keeps (a float at its exact
    binary value); a one-line ValueError naming ``what`` otherwise.

    ``positive``: above 0 (a total), else at least 0 (a charge). The text is checked
    before it is converted, so an exponent such as ``1e-5000000`` is refused at once.

    Examples
    --------
    >>> ledger_amount("0.1", "eps"), ledger_amount(0.5, "eps"), ledger_amount("1/3", "eps")
    (Fraction(1, 10), Fraction(1, 2), Fraction(1, 3))
    >>> ledger_amount(float("nan"), "eps")
    Traceback (most recent call last):
    ...
    ValueError: eps: must be a finite number >= 0, got nan
    >>> ledger_amount("1e-5000000", "eps")
    Traceback (most recent call last):
    ...
    ValueError: eps: '1e-5000000' has an exponent beyond 2000, more than an amount a ledger keeps
    """
    bound = "> 0" if positive else ">= 0"
    shown = _given(value)
    wrong = ValueError(f"{what}: must be a finite number {bound}, got {shown}")
    if isinstance(value, bool):
        raise ValueError(f"{what}: must be a number, got {value!r}")
    if isinstance(value, str):
        text = value.strip()
        if len(text) > MAX_TEXT:
            raise ValueError(f"{what}: {len(text)} characters, more than the {MAX_TEXT} of an "
                             "amount a ledger keeps")
        match = _AMOUNT.fullmatch(text)
        if match is None:
            raise wrong
        if match.group(1) is not None and abs(int(match.group(1))) > MAX_TEXT:
            raise ValueError(f"{what}: {shown} has an exponent beyond {MAX_TEXT}, more than an "
                             "amount a ledger keeps")
        try:
            q = Fraction(text)
        except ZeroDivisionError:
            raise wrong from None
    elif isinstance(value, (int, Fraction)):
        if not _small(value):
            raise ValueError(f"{what}: more than {MAX_BITS} bits above or below the fraction "
                             "bar, more than an amount a ledger keeps")
        q = Fraction(value)
    elif isinstance(value, float):
        if not math.isfinite(value):
            raise wrong
        q = Fraction(value)
    elif isinstance(value, Decimal):
        if not value.is_finite() or abs(value.adjusted()) > MAX_TEXT:
            raise wrong
        q = Fraction(value)
    else:
        raise wrong
    if q < 0 or (positive and q == 0):
        raise wrong
    if q > MAX_AMOUNT:
        raise ValueError(f"{what}: {shown} is above 1e300, the most a ledger keeps")
    if not _small(q):
        raise ValueError(f"{what}: more than {MAX_BITS} bits above or below the fraction bar, "
                         "more than an amount a ledger keeps")
    return q


def _given(value: Any) -> str:
    """``value`` for a message, cut short when long (never a huge integer's digits)."""
    if isinstance(value, (int, Fraction)) and not isinstance(value, bool) and not _small(value):
        return f"a number of more than {MAX_BITS} bits"
    text = repr(value)
    return text if len(text) <= 60 else f"{text[:40]}... ({len(text)} characters)"


def _small(q: int | Fraction) -> bool:
    """Whether the numerator and the denominator of ``q`` have at most :data:`MAX_BITS` bits."""
    q = Fraction(q) if isinstance(q, int) else q
    return max(q.numerator.bit_length(), q.denominator.bit_length()) <= MAX_BITS


def _show(q: Fraction) -> str:
    """``q`` for a message: its exact text when short, else the float it equals, else an
    approximation marked ``about``.

    Examples
    --------
    >>> _show(Fraction(1, 4)), _show(Fraction(0.1)), _show(Fraction(1, 3) + Fraction(0.1))
    ('0.25', '0.1', 'about 0.43333333333333335')
    """
    text = exact_text(q)
    if len(text) > 20 and Fraction(float(q)) == q:
        return repr(float(q))
    return text if len(text) <= 20 else f"about {float(q)!r}"


def _pair(b: Budget) -> str:
    return f"eps {_show(b.eps)}, delta {_show(b.delta)}"


def _sha256(line: bytes) -> str:
    """The SHA-256 of one line of the file, without its end of line, in hex."""
    return hashlib.sha256(line).hexdigest()


# ------------------------------------------------------------------ the ledger
class Ledger:
    """A privacy budget on disk: its total, and the charge of every release (JSON lines).

    Parameters
    ----------
    path : str or pathlib.Path
        The ledger file (a symbolic link to it is the same ledger). It is created, with
        ``total``, when it does not exist.
    total : number, optional
        The total eps. Needed to create the ledger; for an existing ledger,
        when given, it must be the ledger's own (else a ValueError): a ledger's
        total is fixed when it is created.
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
        ledger's; a total out of range (:func:`ledger_amount`); a damaged or
        edited ledger file (the line is named); a path that is not a regular file.

    See the module docstring for the composition, the records and the lock.

    Examples
    --------
    >>> import shutil, tempfile
    >>> path = Path(tempfile.mkdtemp()) / "l.jsonl"
    >>> Ledger(path)
    Traceback (most recent call last):
    ...
    ValueError: ledger l.jsonl does not exist; give its total eps to create it
    >>> Ledger(path, total="2", delta_total="1e-6").balance()
    Budget(eps=Fraction(2, 1), delta=Fraction(1, 1000000))
    >>> shutil.rmtree(path.parent)
    """

    def __init__(self, path: str | Path, total: Any = None, *, delta_total: Any = 0,
                 timeout: float | None = None) -> None:
        self.path = Path(path)
        self.timeout = timeout
        given = None
        if total is not None:
            given = Budget(ledger_amount(total, "total", positive=True),
                           ledger_amount(delta_total, "delta_total"))
            if given.delta >= 1:
                raise ValueError(f"delta_total: must be below 1, got {delta_total!r}")
        if not os.path.lexists(self.path):
            if given is None:
                raise ValueError(f"ledger {self.path.name} does not exist; give its total eps "
                                 "to create it")
            self._create(given)
        head = self._read()[0]
        self.total = _head_total(head)
        if given is not None and given != self.total:
            raise ValueError(f"ledger {self.path.name}: its total is {_pair(self.total)}, not "
                             f"{_pair(given)} as given; a ledger's total is fixed when it is "
                             "created (start a new ledger for a new total)")

    # -------------------------------------------------------------- reading
    def entries(self) -> list[dict]:
        """The records of the charges, oldest first (``eps``, ``delta`` as Fractions).

        Examples
        --------
        >>> import shutil, tempfile
        >>> ledger = Ledger(Path(tempfile.mkdtemp()) / "l.jsonl", total=1)
        >>> with ledger.reserve(0.5, dataset="t.csv", columns=["a", "b"], unit="a row") as r:
        ...     _ = r.commit()
        >>> [(e["entry"], e["eps"], e["columns"]) for e in ledger.entries()]
        [(1, Fraction(1, 2), ['a', 'b'])]
        >>> shutil.rmtree(ledger.path.parent)
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

    def verify(self, statements: Iterable[dict]) -> int:
        """Check the ledger against the ``ledger`` entries of published reports: each
        names a line (``entry``) and its SHA-256 (``record_sha256``), which the file must
        hold, unchanged. Returns the number of statements checked.

        Since every record carries the SHA-256 of the line before it, a report pins its
        own line and every earlier one: an edit of any of them is found.

        Raises
        ------
        ValueError
            A statement whose line is missing or differs (named).

        Examples
        --------
        >>> import shutil, tempfile
        >>> ledger = Ledger(Path(tempfile.mkdtemp()) / "l.jsonl", total=1)
        >>> with ledger.reserve("0.5", dataset="t.csv", columns=["a"], unit="a row") as r:
        ...     report = {"ledger": r.statement()}
        ...     _ = r.commit()
        >>> ledger.verify([report["ledger"]])
        1
        >>> shutil.rmtree(ledger.path.parent)
        """
        lines = self._lines()
        count = 0
        for s in statements:
            k, digest = s.get("entry"), s.get("record_sha256")
            if not (isinstance(k, int) and not isinstance(k, bool) and k >= 1
                    and isinstance(digest, str)):
                raise ValueError(f"ledger {self.path.name}: a statement without entry and "
                                 "record_sha256 (a report of a ledger without the hash chain)")
            if k >= len(lines):
                raise ValueError(f"ledger {self.path.name}: a report names record {k}, but the "
                                 f"ledger has {len(lines) - 1} records: records were removed")
            if _sha256(lines[k]) != digest:
                raise ValueError(f"ledger {self.path.name}: record {k} is not the one its "
                                 "report states (its SHA-256 differs): the ledger was edited")
            count += 1
        return count

    def __repr__(self) -> str:
        spent = self.spent()
        left = Budget(self.total.eps - spent.eps, self.total.delta - spent.delta)
        return (f"Ledger({self.path.name!r}, total {_pair(self.total)}; spent {_pair(spent)}; "
                f"balance {_pair(left)})")

    def _read(self) -> list[dict]:
        """Every line, checked (:func:`_parse`)."""
        return _parse(self._raw(), self.path.name)

    def _lines(self) -> list[bytes]:
        """The lines as bytes, without their ends (the file checked first)."""
        data = self._raw()
        _parse(data, self.path.name)
        return data.split(b"\n")[:-1]

    def _raw(self) -> bytes:
        """The file's bytes: under a shared lock when no release holds the ledger, else
        without it and without a last line still unfinished (a commit's one write)."""
        fd = _open(self.path, os.O_RDONLY)
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
                held = False
            except BlockingIOError:
                held = True  # a release holds it: its commit is the only writer
            data = _read_all(fd)
        finally:
            os.close(fd)  # closing the descriptor drops the flock
        if held and data and not data.endswith(b"\n"):
            data = data[: data.rfind(b"\n") + 1]
        return data

    # -------------------------------------------------------------- writing
    def _create(self, total: Budget) -> None:
        """Create the ledger complete: a temporary with the header, fsynced, linked into place
        (a ledger created meanwhile by another process is kept: its total is then checked)."""
        head = {"ledger": LEDGER_KIND, "format": LEDGER_FORMAT, "total_eps": exact_text(total.eps),
                "total_delta": exact_text(total.delta), "created": _now(),
                "dpfix_version": _version()}
        tmp = self.path.parent / f".{self.path.name}.{secrets.token_hex(6)}.part"
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
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
            The budget the release spends (``delta`` default 0; :func:`ledger_amount`).
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
        charge = Budget(ledger_amount(eps, "eps"), ledger_amount(delta, "delta"))
        record = {"dataset": str(dataset), "columns": [str(c) for c in columns],
                  "unit": str(unit)}
        if note is not None:
            record["note"] = str(note)
        return Reservation(self, charge, record, on_wait)


class Reservation:
    """A charge held on a :class:`Ledger` from its balance check until :meth:`commit`.

    Made by :meth:`Ledger.reserve`; a context manager. Inside the block the
    ledger's release lock is held, so :attr:`after` (the balance once this
    charge is recorded) is what the ledger will say, and the record is fixed:
    :meth:`statement` may go into the release's report before the commit.

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
    >>> import shutil, tempfile
    >>> ledger = Ledger(Path(tempfile.mkdtemp()) / "l.jsonl", total=1)
    >>> with ledger.reserve("0.25", dataset="t.csv", columns=["k"], unit="a row") as r:
    ...     r.statement()["balance"]  # for the release's report, written with the outputs
    ...     _ = r.commit()            # the outputs complete: recorded, then made visible
    0.75
    >>> with ledger.reserve("0.25", dataset="t.csv", columns=["k"], unit="a row") as r:
    ...     pass                      # no commit: nothing recorded
    >>> len(ledger.entries()), ledger.balance().eps
    (1, Fraction(3, 4))
    >>> shutil.rmtree(ledger.path.parent)
    """

    def __init__(self, ledger: Ledger, charge: Budget, record: dict,
                 on_wait: Callable[[], None] | None) -> None:
        self.ledger, self.charge, self.record, self.on_wait = ledger, charge, record, on_wait
        self.committed = False
        self.after: Budget | None = None
        self._lock: int | None = None
        self._key: tuple[int, int] | None = None
        self._seen = b""  # the file as its balance was checked
        self._entry: dict | None = None  # the record commit() appends

    def check_spends(self, charge: Budget) -> None:
        """Refuse a release that spends ``charge`` under this reservation unless it is
        entered and charges exactly that (a reservation passed as ``ledger=``)."""
        if self.after is None:
            raise ValueError("ledger: a Reservation must be entered (with ledger.reserve(...) as "
                             "r) before the release")
        if (self.charge.eps, self.charge.delta) != (charge.eps, charge.delta):
            raise ValueError(f"ledger: the reservation charges eps {self.charge.eps}, delta "
                             f"{self.charge.delta}, but the release spends eps "
                             f"{charge.eps}, delta {charge.delta}")

    def __enter__(self) -> Reservation:
        name = self.ledger.path.name
        fd = _acquire(self.ledger.path, self.ledger.timeout, self.on_wait, name)
        info = os.fstat(fd)
        key = (info.st_dev, info.st_ino)
        self._lock, self._key = fd, key
        _held.__dict__.setdefault("files", set()).add(key)
        try:
            self._seen = _read_all(fd)
            lines = _parse(self._seen, name)
            self.after = self._check(lines)
            raw = self._seen.split(b"\n")[-2]
            self._entry = {"entry": len(lines), "eps": exact_text(self.charge.eps),
                           "delta": exact_text(self.charge.delta), **self.record, "time": _now(),
                           "dpfix_version": _version(), "prev": _sha256(raw)}
        except BaseException:
            self._release()
            raise
        return self

    def _check(self, lines: list[dict]) -> Budget:
        """The balance after this charge, given the ledger's ``lines``; a ValueError if it
        would be negative."""
        spent, total = _spent(lines[1:]), self.ledger.total
        head = _head_total(lines[0])
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

        Under the lock held since the balance check, the ledger is checked again
        first: the file its name reaches must still be the one locked, and hold
        exactly the bytes whose balance was checked (so that balance, and the
        record's ``entry`` and ``prev``, still hold). Anything else (a ledger
        replaced, edited or appended to outside the lock) is a ValueError and
        nothing is recorded.
        """
        if self._lock is None or self._entry is None:
            raise RuntimeError("commit() inside the reservation's with block only")
        if self.committed:
            raise RuntimeError("this reservation is already committed")
        name, fd = self.ledger.path.name, self._lock
        if _identity(self.ledger.path) != self._key:
            raise ValueError(f"ledger {name}: the file was replaced since the balance check; "
                             "the charge is not recorded (no output may be published)")
        now = _read_all(fd)
        if now != self._seen:  # the balance checked is the balance now
            raise ValueError(f"ledger {name}: the file changed since the balance check, "
                             "outside its lock; the charge is not recorded (no output may be "
                             "published)")
        size = len(now)
        try:
            _write_all(fd, _line(self._entry))
        except BaseException:
            os.ftruncate(fd, size)  # a short write: the ledger as it was
            raise
        self.committed = True  # written: from here the charge counts, fsync or not
        os.fsync(fd)
        return dict(self._entry)

    def statement(self) -> dict:
        """The ledger after this charge, for a public report: its name, total, spent,
        balance, and this release's record (its ``entry`` and ``record_sha256``, which
        :meth:`Ledger.verify` checks).

        Floats for reading, and the exact texts under ``exact``.
        """
        if self.after is None or self._entry is None:
            raise RuntimeError("statement() inside the reservation's with block only")
        total, after = self.ledger.total, self.after
        spent = Budget(total.eps - after.eps, total.delta - after.delta)
        return {"path": self.ledger.path.name, "total": float(total.eps),
                "spent": float(spent.eps), "balance": float(after.eps),
                "delta_total": float(total.delta), "delta_spent": float(spent.delta),
                "delta_balance": float(after.delta),
                "this_release": {"eps": float(self.charge.eps),
                                 "delta": float(self.charge.delta)},
                "exact": {k: exact_text(v) for k, v in (
                    ("total", total.eps), ("spent", spent.eps), ("balance", after.eps),
                    ("delta_total", total.delta), ("delta_spent", spent.delta),
                    ("delta_balance", after.delta))},
                "entry": self._entry["entry"],
                "record_sha256": _sha256(_line(self._entry)[:-1]),
                "composition": "sequential (basic composition, Dwork and Roth 2014, Theorem "
                               "3.16): the balance is the total minus the sum of the charges"}

    def recorded(self) -> str:
        """What became of the charge, for the message of a release that failed after
        :meth:`commit` was called: recorded (it stays: the budget is spent) or not."""
        name = self.ledger.path.name
        if self.committed:
            return (f"ledger {name}: the charge of {_pair(self.charge)} is recorded and stays "
                    f"(record {self._entry['entry']}): the budget is spent, though the "
                    "release's outputs are not in place")
        return f"ledger {name}: the charge is not recorded"

    def _release(self) -> None:
        if self._key is not None:
            _held.__dict__.setdefault("files", set()).discard(self._key)
            self._key = None
        if self._lock is not None:
            os.close(self._lock)  # closing the descriptor drops the flock
            self._lock = None

    def __exit__(self, *exc: object) -> None:
        self._release()


# ------------------------------------------------------------------ file helpers
def _held_twice(name: str) -> ValueError:
    return ValueError(f"ledger {name}: this thread already holds a reservation on it; commit "
                      "or leave that one first")


def _open(path: Path, flags: int) -> int:
    """``path`` opened (never waiting: a FIFO is opened non-blocking), checked to be a
    regular file; a one-line error otherwise."""
    name = path.name
    try:
        fd = os.open(path, flags | os.O_NONBLOCK)
    except FileNotFoundError:
        if os.path.islink(path):
            raise ValueError(f"ledger {name} is a symbolic link to {os.readlink(path)}, "
                             "which does not exist; remove the link or make it reach the "
                             "ledger") from None
        raise ValueError(f"ledger {name} does not exist any more (removed during the run)") \
            from None
    except IsADirectoryError:
        raise ValueError(f"ledger {name} is a folder, not a regular file") from None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise ValueError(f"ledger {name}: a loop of symbolic links") from None
        raise type(exc)(f"ledger {name}: {exc.strerror or exc}") from None
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        os.close(fd)
        what = ("a folder" if stat.S_ISDIR(mode) else "a FIFO (named pipe)" if
                stat.S_ISFIFO(mode) else "a socket" if stat.S_ISSOCK(mode) else
                "a device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode) else "not a file")
        raise ValueError(f"ledger {name} is {what}, not a regular file")
    os.set_blocking(fd, True)
    return fd


def _identity(path: Path) -> tuple[int, int] | None:
    """``(device, inode)`` of the file ``path`` reaches, or None."""
    try:
        info = os.stat(path)
    except OSError:
        return None
    return (info.st_dev, info.st_ino)


def _acquire(path: Path, timeout: float | None, on_wait: Callable[[], None] | None,
             name: str) -> int:
    """A descriptor of the ledger ``path`` (read, append) holding ``flock(LOCK_EX)`` on the
    file ``path`` still reaches (a ledger replaced while waiting is opened again)."""
    held = _held.__dict__.setdefault("files", set())
    waited = False
    for _ in range(100):
        fd = _open(path, os.O_RDWR | os.O_APPEND)
        try:
            info = os.fstat(fd)
            if (info.st_dev, info.st_ino) in held:
                raise _held_twice(name)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                if on_wait is not None and not waited:
                    on_wait()
                waited = True
                _wait(fd, timeout, name)
            if _identity(path) == (info.st_dev, info.st_ino):
                return fd
        except BaseException:
            os.close(fd)
            raise
        os.close(fd)  # replaced while we waited: the lock of the file now there
    raise ValueError(f"ledger {name}: the file kept being replaced; check what writes it")


def _wait(fd: int, timeout: float | None, name: str) -> None:
    """Block until ``flock(LOCK_EX)`` on ``fd`` is held, at most ``timeout`` seconds."""
    if timeout is None:
        fcntl.flock(fd, fcntl.LOCK_EX)
        return
    end = time.monotonic() + timeout
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            if time.monotonic() >= end:
                raise TimeoutError(f"ledger {name}: another release held it for "
                                   f"{timeout:g} s") from None
            time.sleep(0.02)


def _read_all(fd: int) -> bytes:
    """Every byte of the file open at ``fd``, from its start."""
    chunks, at = [], 0
    while True:
        chunk = os.pread(fd, 1 << 20, at)
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)
        at += len(chunk)


def _unique(pairs: list) -> dict:
    """A JSON object's pairs as a dict; a key given twice is refused (a reader would not know
    which of its values counts)."""
    out = {}
    for key, value in pairs:
        if key in out:
            raise _Bad(f"the key {key!r} is given twice")
        out[key] = value
    return out


class _Bad(Error, ValueError):
    """Why a line is not what its place needs (for the message)."""


def _head_total(head: dict) -> Budget:
    return Budget(Fraction(head["total_eps"]), Fraction(head["total_delta"]))


def _check_head(item: dict) -> None:
    if item.get("ledger") != LEDGER_KIND:
        raise _Bad("")
    if type(item.get("format")) is not int or item["format"] not in LEDGER_FORMATS:
        raise _Bad(f"format {item.get('format')!r}, which this dpfix does not read: it reads "
                   f"{' and '.join(map(str, LEDGER_FORMATS))}")
    for key in ("total_eps", "total_delta"):
        if not isinstance(item.get(key), str):
            raise _Bad(f"no {key} text")
    try:
        ledger_amount(item["total_eps"], "total_eps", positive=True)
        if ledger_amount(item["total_delta"], "total_delta") >= 1:
            raise ValueError("total_delta: must be below 1")
    except ValueError as exc:
        raise _Bad(str(exc)) from None


def _check_record(item: dict, k: int, prev: bytes, chained: bool) -> bool:
    """Check record ``k`` (``prev``: the line before it); returns whether it is chained."""
    entry = item.get("entry")
    if type(entry) is not int or entry != k:
        raise _Bad(f"its entry is {entry!r}")
    for key in ("eps", "delta"):
        if not isinstance(item.get(key), str):
            raise _Bad(f"no {key} text")
        try:
            ledger_amount(item[key], key)
        except ValueError as exc:
            raise _Bad(str(exc)) from None
    for key in ("dataset", "unit"):
        if key in item and not isinstance(item[key], str):
            raise _Bad(f"its {key} is not a text")
    columns = item.get("columns", [])
    if not (isinstance(columns, list) and all(isinstance(c, str) for c in columns)):
        raise _Bad("its columns are not a list of texts")
    if "prev" not in item:
        if chained:
            raise _Bad("no prev, the SHA-256 of the line before it")
        return False
    if item["prev"] != _sha256(prev):
        raise _Tampered()
    return True


class _Tampered(Error, ValueError):
    """A record whose ``prev`` is not the hash of the line before it."""


def _parse(data: bytes, name: str) -> list[dict]:
    """The lines of a ledger file, checked: a header, then records in their places, each
    chained to the line before it (format 2; format 1 from its first chained record)."""
    if not data:
        raise ValueError(f"ledger {name} is empty; it is not a ledger (remove it to start one)")
    lines = data.split(b"\n")
    if lines[-1]:
        raise ValueError(f"ledger {name}: line {len(lines)} is cut short (no end of line): a "
                         "write was interrupted; check the file and remove or repair that line")
    out: list[dict] = []
    chained = False
    for i, raw in enumerate(lines[:-1], 1):
        try:
            try:
                item = json.loads(raw, object_pairs_hook=_unique)
            except RecursionError:
                raise _Bad("JSON nested too deeply") from None
            except _Bad:
                raise
            except ValueError:
                raise _Bad("not JSON") from None
            if not isinstance(item, dict):
                raise _Bad("not a JSON object")
            if i == 1:
                _check_head(item)
                chained = item["format"] >= 2
            else:
                chained = _check_record(item, i - 1, lines[i - 2], chained)
        except _Tampered:
            raise ValueError(f"ledger {name}: line {i} is not record {i - 1} of the ledger "
                             f"(its prev is not the SHA-256 of line {i - 1}): the ledger was "
                             f"edited after line {i - 1} was written; check the file") from None
        except _Bad as exc:
            what = (f"not a {LEDGER_KIND} of format {'/'.join(map(str, LEDGER_FORMATS))}"
                    if i == 1 else f"not record {i - 1} of the ledger")
            why = f" ({exc})" if str(exc) else ""
            raise ValueError(f"ledger {name}: line {i} is {what}{why}; check the "
                             "file") from None
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
