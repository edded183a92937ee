"""Outputs committed atomically, with signals held while they move into place.

- staged atomic writing (:class:`StagedFiles`): every output goes to a
  temporary file beside its destination and all of them are moved into place
  together, so a failure leaves no partial output (see the class for the
  guarantees: rollback, no silent replacement, signals held during the moves);
- an existing output that is not a regular file (a device, a FIFO, a symbolic
  link) is refused (:func:`not_a_regular_file`);
- signals (SIGINT, SIGTERM, SIGHUP) are held during the moves
  (:class:`held_signals`, :func:`blocked_signals`);
- scratch folders and partial datasets carry the process id and host
  (:func:`leftover_tag`), so the next run removes those a killed run left
  (:func:`remove_stale`); docs/failures.md.
"""

from __future__ import annotations

import errno
import os
import re
import secrets
import signal
import stat
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover

    pass

__all__ = ["StagedFiles", "held_signals", "HELD_SIGNALS", "not_a_regular_file", "blocked_signals",
           "leftover_tag", "remove_stale"]


#: The signals held back while staged files are created, moved into place or removed:
#: the ones a user or a system sends to stop a program (SIGKILL cannot be held).
HELD_SIGNALS = tuple(getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP")
                     if hasattr(signal, name))
_held = threading.local()
#: errno values of a file system without hard links (os.link refused as such).
_NO_LINK = {getattr(errno, name) for name in ("EPERM", "ENOTSUP", "EOPNOTSUPP", "ENOSYS")
            if hasattr(errno, name)}


@contextmanager
def blocked_signals(signums: Any = HELD_SIGNALS) -> Iterator[None]:
    """Block ``signums`` at the operating system's level for the block, where it can.

    A signal that arrives meanwhile waits in the kernel and is delivered, to
    whatever handler is then in place, when the block ends: so a few handlers
    can be replaced together, with no signal between two of them.

    Examples
    --------
    >>> import signal
    >>> seen = []
    >>> old = signal.signal(signal.SIGTERM, lambda s, f: seen.append(s))
    >>> with blocked_signals([signal.SIGTERM]):
    ...     signal.raise_signal(signal.SIGTERM)
    ...     seen
    []
    >>> seen == [signal.SIGTERM]
    True
    >>> _ = signal.signal(signal.SIGTERM, old)
    """
    block = getattr(signal, "pthread_sigmask", None)
    if block is None or threading.current_thread() is not threading.main_thread():
        yield
        return
    old = block(signal.SIG_BLOCK, list(signums))
    try:
        yield
    finally:
        block(signal.SIG_SETMASK, old)


class held_signals:
    """Hold SIGINT, SIGTERM and SIGHUP back during a few file operations, then deliver them.

    Inside the block a signal is only recorded; on leaving it the previous
    handlers are back and each recorded signal is raised again
    (:func:`signal.raise_signal`), so it has exactly the effect it would have
    had, a moment later: a Python handler runs (``Ctrl-C``'s
    KeyboardInterrupt), the default action ends the program, an ignored signal
    stays ignored. Nested blocks hold until the outermost ends. Outside the
    main thread (where no handler can be set) the block does nothing.

    Examples
    --------
    >>> import signal
    >>> seen = []
    >>> old = signal.signal(signal.SIGTERM, lambda s, f: seen.append(s))
    >>> with held_signals():
    ...     signal.raise_signal(signal.SIGTERM)
    ...     seen
    []
    >>> seen == [signal.SIGTERM]
    True
    >>> _ = signal.signal(signal.SIGTERM, old)
    """

    def __enter__(self) -> held_signals:
        depth = getattr(_held, "depth", 0)
        if depth == 0:
            _held.pending, _held.saved = [], {}
            try:
                if threading.current_thread() is threading.main_thread():
                    for signum in HELD_SIGNALS:
                        _held.saved[signum] = signal.signal(signum, self._record)
            except BaseException:  # a signal before every handler was set: undo, re-raise
                for signum, old in _held.saved.items():
                    signal.signal(signum, old)
                _held.saved = {}
                raise
        _held.depth = depth + 1
        return self

    @staticmethod
    def _record(signum: int, frame: Any) -> None:
        if signum not in _held.pending:
            _held.pending.append(signum)

    def __exit__(self, *exc: object) -> None:
        _held.depth -= 1
        if _held.depth:
            return
        with blocked_signals(list(_held.saved)):  # no signal between two restored handlers
            for signum, old in _held.saved.items():
                signal.signal(signum, old)
            pending, _held.pending, _held.saved = _held.pending, [], {}
        for signum in pending:
            signal.raise_signal(signum)


class StagedFiles:
    """Files written beside their destinations, then moved into place all together or not at all.

    :meth:`temp` creates an empty temporary file ``.NAME.HEX.part`` in the
    destination's folder (so that the final move is atomic); :meth:`commit`
    moves every temporary onto its destination; :meth:`discard` (also on
    leaving a ``with`` block, whatever the exception) deletes the temporaries
    not committed. Guarantees:

    - **all or nothing**: :meth:`commit` first checks every destination (its
      folder exists, it is not a folder, and without ``force`` no file is
      there), then moves the files; if a move fails, the files already moved
      are taken back and every file ``force`` replaced is restored (a hard link
      to it is kept until the end);
    - **no silent replacement**: without ``force`` a file is moved into place
      by :func:`os.link` and the temporary then removed, which fails atomically
      (FileExistsError) when a file of that name appeared during the run. On a
      file system without hard links the commit stops with an error that says
      so (``force`` does not need them);
    - **signals**: SIGINT, SIGTERM and SIGHUP are held back while a temporary
      is created, while the files are moved and while temporaries are removed
      (:class:`held_signals`), so that these steps are never cut in half. Only
      SIGKILL (or a power cut) can leave a ``.part`` file; its random name never
      clashes with a later run, which leaves it alone.

    - **regular files only**: a destination that exists and is not a regular
      file (a device such as ``/dev/null``, a FIFO, a socket, a symbolic link
      such as ``/dev/stdout``) is refused, with or without ``force``: moving a
      file onto it would replace the device or the link, not write to it
      (:func:`not_a_regular_file`);
    - **confidential files** (:meth:`temp` with ``private=True``) are created
      with mode 0600 and, replacing a file whose mode is stricter, keep the
      stricter bits (the intersection with 0600).

    Parameters
    ----------
    force : bool
        Replace existing destinations (``force=True``; ``dpfix privatize --force``).

    Examples
    --------
    >>> import shutil, tempfile
    >>> d = Path(tempfile.mkdtemp())
    >>> with StagedFiles() as staged:
    ...     _ = staged.temp(d / "a.txt").write_text("a")
    ...     _ = staged.temp(d / "b.txt").write_text("b")
    ...     sorted(p.name for p in d.iterdir() if not p.name.startswith("."))
    ...     staged.commit()
    []
    >>> sorted(p.name for p in d.iterdir())
    ['a.txt', 'b.txt']
    >>> with StagedFiles() as staged:
    ...     _ = staged.temp(d / "c.txt").write_text("c")
    ...     # an error here: nothing is committed
    >>> sorted(p.name for p in d.iterdir())
    ['a.txt', 'b.txt']
    >>> with StagedFiles() as staged:
    ...     _ = staged.temp(d / "a.txt").write_text("new")
    Traceback (most recent call last):
    ...
    FileExistsError: ...a.txt exists (use force=True to overwrite)
    >>> shutil.rmtree(d)
    """

    def __init__(self, force: bool = False) -> None:
        self.force = bool(force)
        self.items: list[tuple[Path, Path, str]] = []
        #: The complete folders moved into place with the files (:meth:`folder`).
        self.folders: list[tuple[Path, Path, str]] = []
        #: The temporaries of confidential files (mode 0600 or stricter).
        self.private: set[Path] = set()
        #: The destinations of the last successful :meth:`commit`.
        self.committed: list[Path] = []

    @staticmethod
    def _where(final: Path, label: str) -> str:
        return f"{label}: {final}" if label else str(final)

    def temp(self, final: str | Path, label: str = "", private: bool = False) -> Path:
        """A new empty temporary file beside ``final``, moved onto it by :meth:`commit`.

        ``label`` (an option name such as ``--out``) starts the error messages
        about this file. Without ``force``, an existing ``final`` is refused here;
        so is, always, an existing ``final`` that is not a regular file.
        ``private``: a confidential file, created with mode 0600.
        """
        final = Path(final)
        where = self._where(final, label)
        _refuse_non_file(final, where)
        if not self.force and os.path.lexists(final):
            raise FileExistsError(f"{where} exists (use force=True to overwrite)")
        with held_signals():
            for _ in range(100):
                tmp = final.parent / f".{final.name}.{secrets.token_hex(6)}.part"
                try:
                    os.close(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL,
                                     0o600 if private else 0o666))
                except FileExistsError:  # a leftover of a killed run: another name
                    continue
                self.items.append((tmp, final, label))
                if private:
                    self.private.add(tmp)
                return tmp
        raise FileExistsError(f"{where}: no free temporary name in {final.parent}")

    def folder(self, tmp: str | Path, final: str | Path, label: str = "") -> None:
        """Move the complete folder ``tmp`` (beside ``final``: the same file system) onto
        ``final`` at :meth:`commit`, with the files, all or nothing; :meth:`discard`
        removes it. A folder never replaces anything: ``final`` must not exist then,
        ``force`` or not (a Dask dataset, staged under a name of its own by its writer).
        """
        self.folders.append((Path(tmp), Path(final), label))

    def _check_folder(self, final: Path, label: str) -> None:
        where = self._where(final, label)
        if not final.parent.is_dir():
            raise FileNotFoundError(f"{label + ': ' if label else ''}folder {final.parent} "
                                    "does not exist any more")
        if os.path.lexists(final):
            raise FileExistsError(f"{where} was created during the run; a folder is never "
                                  "replaced")

    def _check(self, final: Path, label: str) -> None:
        where = self._where(final, label)
        if not final.parent.is_dir():
            raise FileNotFoundError(f"{label + ': ' if label else ''}folder {final.parent} "
                                    "does not exist any more")
        _refuse_non_file(final, where)
        if not self.force and os.path.lexists(final):
            raise FileExistsError(f"{where} was created during the run (use force=True to "
                                  "overwrite)")

    def _move(self, tmp: Path, final: Path, label: str) -> tuple[Path, Path | None]:
        """Move one temporary into place; returns ``(final, backup of the replaced file)``."""
        if tmp in self.private:  # 0600, or the stricter bits of the file it replaces
            mode = 0o600
            if os.path.lexists(final):
                mode &= os.lstat(final).st_mode
            os.chmod(tmp, mode & 0o777)
        if self.force:
            backup, linked = None, True
            if os.path.lexists(final):
                backup = final.parent / f".{final.name}.{secrets.token_hex(6)}.bak"
                try:
                    os.link(final, backup, follow_symlinks=False)
                except OSError:  # no hard links here: keep the old file by renaming it
                    os.rename(final, backup)
                    linked = False
            try:
                os.replace(tmp, final)  # atomic: on failure final is as it was
            except BaseException:
                if backup is not None:
                    _quietly(os.unlink if linked else os.replace,
                             *((backup,) if linked else (backup, final)))
                raise
            return final, backup
        try:
            os.link(tmp, final)
        except FileExistsError:
            raise FileExistsError(f"{self._where(final, label)} was created during the run "
                                  "(use force=True to overwrite)") from None
        except OSError as exc:
            if exc.errno in _NO_LINK:
                raise OSError(exc.errno, f"{self._where(final, label)}: the file system of "
                              f"{final.parent} has no hard links, which dpfix needs to refuse "
                              "a file created during the run; use force=True to replace any "
                              "such file") from None
            raise
        _quietly(os.unlink, tmp)
        return final, None

    def commit(self) -> None:
        """Check every destination, then move every temporary onto it; all or nothing.

        Raises
        ------
        OSError
            FileExistsError (without ``force``: a destination appeared during
            the run), IsADirectoryError, FileNotFoundError (its folder is gone),
            or the error of a move; then no destination has changed.
        """
        with held_signals():
            try:
                for _, final, label in self.folders:
                    self._check_folder(final, label)
                for _, final, label in self.items:
                    self._check(final, label)
                moved: list[tuple[Path, Path]] = []
                done: list[tuple[Path, Path | None]] = []
                try:
                    for tmp, final, _ in self.folders:
                        os.rename(tmp, final)
                        moved.append((tmp, final))
                    for tmp, final, label in self.items:
                        done.append(self._move(tmp, final, label))
                except BaseException:
                    for final, backup in reversed(done):  # take back what was moved
                        if backup is not None:
                            _quietly(os.replace, backup, final)
                        else:
                            _quietly(os.unlink, final)
                    for tmp, final in reversed(moved):  # a folder back to its name, removed
                        _quietly(os.rename, final, tmp)
                    raise
                for _, backup in done:
                    if backup is not None:
                        _quietly(os.unlink, backup)
                self.committed = [final for _, final in moved] + [final for final, _ in done]
                self.items, self.folders = [], []
            finally:
                self.discard()

    def discard(self) -> None:
        """Delete the temporaries (and remove the folders) not yet committed."""
        import shutil

        with held_signals():
            for tmp, _, _ in self.items:
                _quietly(os.unlink, tmp)
            for tmp, _, _ in self.folders:
                shutil.rmtree(tmp, ignore_errors=True)
            self.items, self.folders = [], []

    def __enter__(self) -> StagedFiles:
        return self

    def __exit__(self, *exc: object) -> None:
        self.discard()


def not_a_regular_file(path: str | Path) -> str | None:
    """What ``path`` is when it exists and is neither a regular file nor a folder, else None.

    A symbolic link counts as not regular whatever it points to (``/dev/stdout``
    is a link): moving a file onto it replaces the link.

    Examples
    --------
    >>> not_a_regular_file("/dev/null"), not_a_regular_file(__file__)
    ('a device', None)
    """
    try:
        mode = os.lstat(path).st_mode
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError as exc:
        return f"unreadable ({exc.strerror or exc})"
    for test, what in ((stat.S_ISREG, None), (stat.S_ISDIR, None),
                       (stat.S_ISLNK, "a symbolic link"), (stat.S_ISFIFO, "a FIFO (named pipe)"),
                       (stat.S_ISSOCK, "a socket"), (stat.S_ISCHR, "a device"),
                       (stat.S_ISBLK, "a device")):
        if test(mode):
            return what
    return "not a regular file"


def _refuse_non_file(final: Path, where: str) -> None:
    """Refuse an existing ``final`` that is a folder or not a regular file (a device, a
    FIFO, a socket, a symbolic link): a move onto it would replace it."""
    if final.is_dir():
        raise IsADirectoryError(f"{where} is a folder")
    odd = not_a_regular_file(final)
    if odd is not None:
        raise FileExistsError(f"{where} is {odd}, not a regular file; dpfix writes "
                              "regular files only")


def _quietly(op: Any, *paths: Any) -> None:
    """A clean-up step that must not hide the error being handled."""
    try:
        op(*paths)
    except OSError:
        pass


# ------------------------------------------------------------------ leftovers of killed runs
def leftover_tag() -> str:
    """``PID-HOST``: what dpfix puts in the names of its scratch folders and partial datasets.

    A folder named with it is provably this machine's and provably stale once no
    process of that id runs (:func:`remove_stale`): a run killed by SIGKILL cannot
    remove its own.

    Examples
    --------
    >>> leftover_tag().split("-", 1)[0] == str(os.getpid())
    True
    """
    import socket

    host = re.sub(r"[^A-Za-z0-9.]", "_", socket.gethostname())[:64] or "host"
    return f"{os.getpid()}-{host}"


def _running(pid: int) -> bool:
    """Whether a process ``pid`` exists (one of another user counts as running)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError):
        return True
    return True


def remove_stale(folder: str | Path, prefix: str) -> list[Path]:
    """Remove the folders ``PREFIX PID-HOST-...`` in ``folder`` left by dpfix runs that are gone.

    Only what is provably ours and stale is removed: a folder (not a link) of
    the current user whose name is ``prefix``, then the :func:`leftover_tag` of
    a process of this host, then ``-`` and more, and no process of that id
    runs. Anything else, in particular a leftover of a run on another host (a
    shared file system) or of a process that still runs, is left alone.

    Parameters
    ----------
    folder : str or pathlib.Path
        Where to look (the temporary folder; the folder of a Dask ``out``).
    prefix : str
        The start of the names (``dpfix-``; ``.OUT.partial-``).

    Returns
    -------
    list of pathlib.Path
        The folders removed.

    Examples
    --------
    >>> import shutil, tempfile
    >>> d = Path(tempfile.mkdtemp())
    >>> host = leftover_tag().split("-", 1)[1]
    >>> (d / f"dpfix-{2**22 + 1}-{host}-x").mkdir()   # no such process
    >>> (d / f"dpfix-{os.getpid()}-{host}-y").mkdir()  # this one runs
    >>> [p.name.endswith("-x") for p in remove_stale(d, "dpfix-")]
    [True]
    >>> sorted(p.name[-1] for p in d.iterdir())
    ['y']
    >>> shutil.rmtree(d)
    """
    import shutil
    import stat

    host = leftover_tag().split("-", 1)[1]
    name = re.compile(re.escape(prefix) + r"([0-9]{1,10})-" + re.escape(host) + r"-.+")
    removed = []
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return removed
    for entry in entries:
        match = name.fullmatch(entry.name)
        if match is None or _running(int(match.group(1))):
            continue
        try:
            info = entry.stat(follow_symlinks=False)
        except OSError:
            continue
        if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid():
            continue
        shutil.rmtree(entry.path, ignore_errors=True)
        removed.append(Path(entry.path))
    return removed
