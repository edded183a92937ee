"""Work beyond one machine: the parts of a stream as futures of a Dask cluster
(a ``distributed.Client``), their results handed back in the order of the stream.

:class:`OrderedMap` runs ``function(shared, *args)`` on the client's workers for each
part ``(tag, args)`` of a stream, and yields ``(tag, result)`` in the order of the
stream, not of completion:

- at most ``window`` parts are out at a time (the stream is drawn as results come
  back, never materialised: a stream without end is fine);
- ``shared`` goes to the cluster once (``client.scatter``), every task takes it from
  there;
- a part whose ``args`` is None runs nothing: its result is None, yielded in its turn;
- at ``deadline`` (``time.perf_counter()``) the iteration ends, :attr:`OrderedMap.timed_out`
  says so, and no result of a part still out is yielded;
- however the iteration ends (the last part, an error, the deadline, a
  ``KeyboardInterrupt`` or a signal handler's exception, :meth:`OrderedMap.close`), the
  futures still out and the scattered ``shared`` are cancelled; the client stays open.

Dask cannot end a task that runs. A task of this module whose future is cancelled is
interrupted on its worker instead: the exception :class:`Abandoned` is raised in the
thread that runs it (by ``PyThreadState_SetAsyncExc``), which stops Python code at once
and a call into C when it returns, and the worker's thread is free again (a function
that catches ``BaseException`` runs on to its end).

``distributed`` is imported only when a client is used, never when this module is: the
research path runs without the production extra.

Examples
--------
>>> is_client(2), is_client("tcp://127.0.0.1:8786")
(False, False)
"""

from __future__ import annotations

import ctypes
import importlib
import itertools
import pickle
import threading
import time
import uuid
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from typing import Any

__all__ = ["Abandoned", "OrderedMap", "is_client", "worker_threads", "check_sendable"]

#: the methods of a ``distributed.Client`` that :class:`OrderedMap` uses
_CLIENT_METHODS = ("submit", "scatter", "cancel", "nthreads")
#: seconds between two looks of a running task at its own state on its worker
_POLL = 0.05
_END = object()


class Abandoned(BaseException):
    """Raised in a worker's thread while it runs a task whose future was cancelled (not
    an Exception, so that an ``except Exception`` of the function does not take it)."""


def is_client(jobs: Any) -> bool:
    """Whether ``jobs`` is a Dask client: it has the methods of a ``distributed.Client``
    that :class:`OrderedMap` uses (``submit``, ``scatter``, ``cancel``, ``nthreads``).

    Examples
    --------
    >>> is_client(1), is_client(None)
    (False, False)
    """
    return not isinstance(jobs, (int, str, bytes)) and \
        all(callable(getattr(jobs, m, None)) for m in _CLIENT_METHODS)


def worker_threads(client: Any) -> int:
    """The threads of the client's workers, all together (at least 1).

    Raises
    ------
    ValueError
        One line: an asynchronous client, a client that is not running (closed, say),
        or a cluster without a worker.

    Examples
    --------
    >>> class NoWorker:                 # what a client without workers answers
    ...     status, asynchronous = "running", False
    ...     submit = scatter = cancel = lambda self, *a: None
    ...     def nthreads(self):
    ...         return {}
    >>> worker_threads(NoWorker())
    Traceback (most recent call last):
    ...
    ValueError: jobs: the Dask cluster has no worker (client.wait_for_workers(1) waits for one)
    """
    if getattr(client, "asynchronous", False):
        raise ValueError("jobs: an asynchronous Dask client; give a synchronous one "
                         "(distributed.Client(..., asynchronous=False))")
    status = getattr(client, "status", "running")
    if status != "running":
        raise ValueError(f"jobs: the Dask client is {status}, not running")
    threads = sum(int(k) for k in client.nthreads().values())
    if threads < 1:
        raise ValueError("jobs: the Dask cluster has no worker (client.wait_for_workers(1) "
                         "waits for one)")
    return threads


def check_sendable(obj: Any) -> None:
    """Refuse what cannot go to a Dask worker: ``obj`` must pickle as Dask pickles it
    (``pickle``, else ``cloudpickle``, which also takes lambdas and closures).

    Raises
    ------
    TypeError
        It does not pickle: the reason, in one line.

    Examples
    --------
    >>> import threading
    >>> check_sendable(lambda x: x + 1)
    >>> check_sendable(threading.Lock())
    Traceback (most recent call last):
    ...
    TypeError: cannot pickle '_thread.lock' object
    """
    try:
        pickle.dumps(obj)
        return
    except Exception:
        pass
    cloudpickle = importlib.import_module("cloudpickle")
    try:
        cloudpickle.dumps(obj)
    except Exception as exc:
        text = str(exc).strip()
        raise TypeError(text.splitlines()[0] if text else type(exc).__name__) from exc


class OrderedMap:
    """``function(shared, *args)`` for each part ``(tag, args)`` of ``parts`` on the workers
    of ``client``; iterate it for ``(tag, result)`` in the order of ``parts`` (the module
    docstring says what happens at the deadline and at the end).

    Parameters
    ----------
    client : distributed.Client
        A running synchronous client (:func:`worker_threads`).
    function : callable
        Module-level (it goes to the workers by reference); its result must pickle.
    shared : object
        Its first argument, sent once.
    parts : iterable of (tag, args or None)
        ``args`` a tuple of the other arguments; None: nothing to run (result None).
    window : int
        Parts out at a time, ``>= 1``.
    deadline : float, optional
        ``time.perf_counter()`` at which the iteration ends.
    name : str
        The prefix of the tasks' keys (what the Dask dashboard shows).

    Attributes
    ----------
    timed_out : bool
        The deadline ended the iteration.

    Examples
    --------
    On a cluster (tests/test_search_dask.py runs this on a ``LocalCluster``):

    >>> from distributed import Client, LocalCluster            # doctest: +SKIP
    >>> with LocalCluster(n_workers=2, processes=False) as cluster, \
    ...         Client(cluster) as client:                       # doctest: +SKIP
    ...     powers = OrderedMap(client, pow, 3, ((k, (k,)) for k in range(5)), window=2)
    ...     print([result for _, result in powers])
    [1, 3, 9, 27, 81]
    """

    def __init__(self, client: Any, function: Callable, shared: Any,
                 parts: Iterable[tuple[Any, tuple | None]], *, window: int,
                 deadline: float | None = None, name: str = "dpfix") -> None:
        if isinstance(window, bool) or not isinstance(window, int) or window < 1:
            raise ValueError(f"window: a number of parts >= 1, got {window!r}")
        self.client, self.function, self.shared = client, function, shared
        self.window, self.deadline, self.name = window, deadline, name
        self.timed_out = False
        self._parts = iter(parts)
        self._pending: deque[tuple[Any, Any]] = deque()  # (tag, future or None), in order
        self._shared: Any = None
        self._keys = (f"{name}-{uuid.uuid4().hex[:12]}-{k}" for k in itertools.count())

    def __iter__(self) -> Iterator[tuple[Any, Any]]:
        distributed = importlib.import_module("distributed")
        try:
            self._shared = self.client.scatter(self.shared, hash=False)
            exhausted = False
            while True:
                while not exhausted and len(self._pending) < self.window:
                    item = next(self._parts, _END)
                    if item is _END:
                        exhausted = True
                        break
                    tag, args = item
                    future = None if args is None else self.client.submit(
                        _task, self.function, self._shared, *args, key=next(self._keys),
                        pure=False)
                    self._pending.append((tag, future))
                if not self._pending:
                    return
                tag, future = self._pending[0]
                result = None
                if future is not None:
                    if not self._wait(distributed, future):
                        self.timed_out = True
                        return
                    result = self._result(future)
                self._pending.popleft()
                yield tag, result
        finally:
            self.close()

    def _wait(self, distributed: Any, future: Any) -> bool:
        """Wait for ``future`` until the deadline: whether it is done."""
        timeout = None if self.deadline is None else self.deadline - time.perf_counter()
        if timeout is not None and timeout <= 0:
            return future.done()
        try:
            distributed.wait([future], timeout=timeout)
        except TimeoutError:
            return future.done()
        return True

    @staticmethod
    def _result(future: Any) -> Any:
        if future.status == "cancelled":
            raise RuntimeError(f"a Dask task ({future.key}) was cancelled from outside "
                               "(client.cancel or client.restart)")
        return future.result()  # a task's error is raised here, with its traceback

    def close(self) -> None:
        """Cancel the futures still out and the scattered ``shared`` (the client stays
        open); the iteration, if one runs, ends."""
        futures = [f for _, f in self._pending if f is not None]
        if self._shared is not None:
            futures.append(self._shared)
        self._pending.clear()
        self._shared = None
        if futures:
            try:
                self.client.cancel(futures)
            except Exception:  # a client closed meanwhile: its futures went with it
                pass


# ------------------------------------------------------------------ on a worker
def _set_async_exc(thread: int, exc: type[BaseException] | None) -> None:
    """Raise ``exc`` in thread ``thread`` at its next bytecode (None: clear a pending one)."""
    ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(thread),
                                               None if exc is None else ctypes.py_object(exc))


class _Guard:
    """While a task runs on a worker: raise :class:`Abandoned` in its thread, once, when the
    worker no longer holds the task for the cluster (its future was cancelled or
    released), until :meth:`disarm`."""

    def __init__(self, worker: Any, key: Any) -> None:
        self.thread = threading.get_ident()
        self.worker, self.key = worker, key
        self.lock = threading.Lock()
        self.armed, self.fired = True, False
        self.done = threading.Event()
        threading.Thread(target=self._watch, daemon=True, name="dpfix-task-guard").start()

    def _abandoned(self) -> bool:
        task = self.worker.state.tasks.get(self.key)
        return task is None or task.state == "cancelled"

    def _watch(self) -> None:
        while not self.done.wait(_POLL):
            try:
                abandoned = self._abandoned()
            except Exception:  # a worker of another make: no interruption
                return
            if abandoned:
                with self.lock:
                    if self.armed and not self.fired:
                        self.fired = True
                        _set_async_exc(self.thread, Abandoned)
                return

    def disarm(self) -> None:
        """In the task's thread: no exception from now on (a pending one is cleared)."""
        with self.lock:
            if self.armed:
                self.armed = False
                if self.fired:
                    _set_async_exc(self.thread, None)
        self.done.set()


class _NoGuard:
    def disarm(self) -> None:
        pass


def _guard() -> _Guard | _NoGuard:
    try:
        distributed = importlib.import_module("distributed")
        worker = distributed.get_worker()
        return _Guard(worker, worker.get_current_task())
    except (ImportError, ValueError, AttributeError):  # not on a worker
        return _NoGuard()


def _task(function: Callable, shared: Any, *args: Any) -> Any:
    """What a worker runs: ``function(shared, *args)``, None once its future is cancelled.

    The one :class:`Abandoned` the guard may raise is taken here wherever it lands (in
    ``function`` or in ``disarm``); once ``disarm`` has returned none is left pending."""
    guard = _guard()
    try:
        try:
            return function(shared, *args)
        finally:
            guard.disarm()
    except Abandoned:
        guard.disarm()
        return None
