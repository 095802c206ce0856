"""Where CPU-heavy work runs: threads on this machine (the default) or tasks on a Ray cluster.

    executor = get_executor("ray://head.example:10001")   # or "local", or "ray"
    results = executor.map(fn, items)                     # fn(item) for each item, results in input order

The choice travels with the request (``EvaluationRequest.executor``, ``sciprobe evaluate --executor``); the
core machinery that does heavy work submits it here (sandboxed runs: :func:`sciprobe.sandbox.runner.run_many`;
the bundled model's generation: :class:`sciprobe.llm.local.LocalBackend`), so runners never know which
executor they got.

* ``local``: a thread pool in this process; work shares this machine's files and memory.
* ``ray``: tasks on a Ray cluster found the way ``ray.init()`` finds one (``$RAY_ADDRESS``, else the cluster
  that ``ray start`` last started on this machine as this user), else a single-machine instance of this process
  only (:class:`PrivateLocalCluster`: loopback only, its token 0600 in a 0700 folder of its own, all of it removed
  when the process ends, Ctrl-C included).
* ``ray://HOST:PORT``: tasks on the cluster whose head runs the Ray Client server there (``ray start --head``
  listens on port 10001).

A Ray executor is ``remote``: its work may run on another machine, so callers ship what it needs (files as
bytes, see :mod:`sciprobe.sandbox.ship`) instead of passing paths. Functions are pickled by reference:
every node needs the same sciprobe installed. Ray is an optional extra (``pip install 'sciprobe[ray]'``) and is
imported only when a Ray executor first submits work.
"""

from __future__ import annotations

import os
import stat
import threading
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sciprobe.core.errors import SciprobeError

if TYPE_CHECKING:  # the CLI imports this module for EXECUTOR_HELP: the pools load when work is submitted
    from concurrent.futures import Future, ThreadPoolExecutor

__all__ = ["EXECUTOR_HELP", "Executor", "LocalExecutor", "PrivateLocalCluster", "RayExecutor", "check_executor_name",
           "get_executor", "ray_installed", "shutdown_executors"]

EXECUTOR_HELP = ("where sandboxed runs and the bundled model's generation run: local (threads here, the default), "
                 "ray (the Ray cluster ray.init() finds: $RAY_ADDRESS or the one `ray start` started here; else a "
                 "private one of this run, on 127.0.0.1 only) or ray://HOST:PORT (a cluster's Ray Client server); "
                 "needs `pip install 'sciprobe[ray]'`")
_INSTALL_HINT = "pip install 'sciprobe[ray]'"
#: Ray Client connection attempts (each gives up after ~30 s).
CONNECT_ATTEMPTS = 4


class Executor:
    """Runs picklable module-level functions somewhere; subclasses say where.

    ``remote``: work may run in another process on another machine (no shared files, memory or globals).
    """

    name: str = "local"
    remote: bool = False

    def submit(self, fn: Callable[..., Any], /, *args: Any) -> Future:
        """Start ``fn(*args)``; a :class:`concurrent.futures.Future` of its value."""
        raise NotImplementedError

    def share(self, value: Any) -> Any:
        """A handle to pass as a top-level argument of :meth:`submit` / :meth:`map` in place of ``value``,
        stored once however many calls receive it (Ray: the object store)."""
        return value

    def map(self, fn: Callable[..., Any], *iterables: Iterable[Any], workers: int | None = None) -> list[Any]:
        """``[fn(*args) for args in zip(*iterables)]`` with at most ``workers`` calls at a time (None: as many as
        the executor can run); results in input order. The first exception is raised once the calls already
        running have finished; calls not started by then are dropped."""
        from concurrent.futures import FIRST_COMPLETED, wait

        calls = list(zip(*iterables))
        limit = max(1, workers or len(calls) or 1)
        results: list[Any] = [None] * len(calls)
        running: dict[Future, int] = {}
        failure: BaseException | None = None
        position = 0
        while position < len(calls) or running:
            while failure is None and position < len(calls) and len(running) < limit:
                running[self.submit(fn, *calls[position])] = position
                position += 1
            if failure is not None and not running:
                break
            done, _ = wait(running, return_when=FIRST_COMPLETED)
            for future in done:
                index = running.pop(future)
                try:
                    results[index] = future.result()
                except BaseException as exc:  # noqa: BLE001 - re-raised below, after the running calls end
                    failure = failure or exc
        if failure is not None:
            raise failure
        return results

    def on_each_node(self, fn: Callable[[], Any]) -> list[tuple[str, Any]]:
        """``(node label, fn())`` for every machine that runs this executor's work."""
        import socket

        return [(f"{socket.gethostname()} (this machine)", fn())]

    def describe(self) -> dict[str, Any]:
        """For provenance."""
        return {"name": self.name}

    def close(self) -> None:
        return


class LocalExecutor(Executor):
    """Threads in this process (sandboxed runs are subprocesses: threads only wait on them)."""

    name = "local"
    remote = False

    def __init__(self, workers: int | None = None) -> None:
        self.workers = workers
        self._pool: ThreadPoolExecutor | None = None
        self._lock = threading.Lock()

    def submit(self, fn: Callable[..., Any], /, *args: Any) -> Future:
        from concurrent.futures import ThreadPoolExecutor

        with self._lock:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(max_workers=self._size(None), thread_name_prefix="sciprobe-exec")
            return self._pool.submit(fn, *args)

    def map(self, fn: Callable[..., Any], *iterables: Iterable[Any], workers: int | None = None) -> list[Any]:
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(max_workers=self._size(workers), thread_name_prefix="sciprobe-exec") as pool:
            return list(pool.map(fn, *iterables))

    def _size(self, workers: int | None) -> int:
        return max(1, workers or self.workers or os.cpu_count() or 1)

    def close(self) -> None:
        with self._lock:
            if self._pool is not None:
                self._pool.shutdown(wait=True)
                self._pool = None


def ray_installed() -> bool:
    import importlib.util

    return importlib.util.find_spec("ray") is not None


#: The only address a private local cluster listens on.
LOOPBACK = "127.0.0.1"


def joins_running_cluster() -> bool:
    """Whether ``ray.init()`` without an address joins a running cluster: ``$RAY_ADDRESS`` (unless ``local``), or
    the address file the last ``ray start`` left in Ray's temp folder, when this user owns it (a file another user
    put in the shared ``/tmp/ray`` never chooses the cluster our work runs on)."""
    address = os.environ.get("RAY_ADDRESS", "")
    if address:
        return address != "local"
    from ray._common.utils import get_ray_address_file

    try:
        status = os.lstat(get_ray_address_file(None))
    except OSError:
        return False
    return stat.S_ISREG(status.st_mode) and status.st_uid == os.geteuid()


class PrivateLocalCluster:
    """What ``ray.init()`` needs to start a single-machine Ray instance no one else on the machine can reach.

    Left to itself, ``ray.init()`` writes its token to ``~/.ray/auth_token`` with mode 0644 (readable by every
    local user when the home is 0755), listens on every interface and makes its session folders, ``sockets/``
    included, world-writable. Here:

    - the token is a fresh one, in ``auth_token`` (0600) in a folder of this process (``mkdtemp``: 0700), named
      by ``RAY_AUTH_TOKEN_PATH`` (Ray 2.60 reads ``RAY_AUTH_TOKEN``, then that file, then ``~/.ray``); token
      authentication is on (``RAY_AUTH_MODE=token``);
    - Ray's temp folder is ``ray/`` inside that folder (``_temp_dir``), and after start every folder Ray made
      world-writable there (it chmods them 0777) is made 0700;
    - the node's address is 127.0.0.1 (Ray turns 127.0.0.1 into the machine's network address unless
      ``RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0``, which is set for this process and the node's processes), so every
      port (GCS, raylet, object manager, workers, agents) listens on loopback only; no dashboard;
    - :meth:`close` (``ray.shutdown()``, then the folder removed and the environment restored) runs when the
      executor closes and at exit, Ctrl-C included. A process killed with SIGKILL leaves its folder (Ray's reaper
      still stops the node's processes).
    """

    def __init__(self) -> None:
        import secrets
        import tempfile

        self.folder = Path(tempfile.mkdtemp(prefix="sciprobe-ray-"))  # short: Ray's socket paths live in it
        self.token_file = self.folder / "auth_token"
        try:
            descriptor = os.open(self.token_file, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
            with os.fdopen(descriptor, "w") as out:
                out.write(secrets.token_hex(32))
        except BaseException:
            self.close()
            raise
        self._saved_env: dict[str, str | None] = {}
        self._saved_cluster_flag: Any = None

    @property
    def environment(self) -> dict[str, str | None]:
        """What the driver and the node's processes get for the cluster's life (None: unset)."""
        return {"RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN_PATH": str(self.token_file), "RAY_AUTH_TOKEN": None,
                "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0", "RAY_USAGE_STATS_ENABLED": "0"}

    def init_options(self) -> dict[str, Any]:
        return {"_temp_dir": str(self.folder / "ray"), "_node_ip_address": LOOPBACK, "include_dashboard": False,
                "dashboard_host": LOOPBACK}

    def enter(self) -> None:
        """Set the environment (and Ray's already imported flag) before ``ray.init()``."""
        for key, value in self.environment.items():
            self._saved_env[key] = os.environ.get(key)
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
        from ray._private import ray_constants

        self._saved_cluster_flag = ray_constants.ENABLE_RAY_CLUSTER
        ray_constants.ENABLE_RAY_CLUSTER = False  # read at import: Ray may have been imported already
        _reset_ray_token_state()

    def started(self, ray: Any) -> None:
        """After ``ray.init()``: the node is on loopback, and no folder Ray made is open to others."""
        node_ip = ray.util.get_node_ip_address()
        if node_ip != LOOPBACK:
            raise SciprobeError(f"the local Ray instance took the address {node_ip}, not {LOOPBACK}: refusing to "
                                "run work on a node other machines can reach")
        for folder, subfolders, _ in os.walk(self.folder):
            for name in subfolders:
                path = os.path.join(folder, name)
                try:
                    status = os.lstat(path)
                except FileNotFoundError:
                    continue
                if stat.S_ISDIR(status.st_mode) and status.st_mode & 0o022 and status.st_uid == os.geteuid():
                    os.chmod(path, 0o700)

    def close(self) -> None:
        """Remove the folder (the token with it) and restore the environment; after ``ray.shutdown()``."""
        import shutil

        shutil.rmtree(self.folder, ignore_errors=True)
        for key, value in self._saved_env.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
        self._saved_env.clear()
        if self._saved_cluster_flag is not None:
            from ray._private import ray_constants

            ray_constants.ENABLE_RAY_CLUSTER = self._saved_cluster_flag
            self._saved_cluster_flag = None
            _reset_ray_token_state()  # a later connection of this process reads its own token


def _reset_ray_token_state() -> None:
    """Make Ray re-read its auth settings (it caches them per process): the config first, then the token (Ray's
    own order: a gRPC thread still draining must not reload a token the config no longer asks for)."""
    from ray._raylet import AuthenticationTokenLoader, Config

    Config.initialize("")
    AuthenticationTokenLoader.instance().reset_cache()


class RayExecutor(Executor):
    """Ray tasks (one CPU each) on a cluster; connects on first use. ``address`` None: ``ray.init()``'s own
    search; ``ray://HOST:PORT``: the Ray Client server of a cluster's head. Ray retries a task whose worker
    or node died (its default, 3 times), so a lost node costs time, not results."""

    remote = True

    def __init__(self, address: str | None = None) -> None:
        self.address = address
        self.name = address or "ray"
        self._remote_fns: dict[Any, Any] = {}
        self._lock = threading.Lock()
        self._ray: Any = None
        #: the single-machine instance this executor started, when ``ray`` found no cluster to join
        self.private_cluster: PrivateLocalCluster | None = None

    def _connect(self) -> Any:
        with self._lock:
            if self._ray is not None:
                return self._ray
            if not ray_installed():
                raise SciprobeError(f"--executor {self.name} needs Ray: {_INSTALL_HINT}")
            import ray

            if ray.is_initialized():  # the caller's own connection (a notebook): use it as it is
                self._ray = ray
                return ray
            # Ray Client forwards ray.init's options to the server's own ray.init: give it none
            options = {} if self.address else {"logging_level": "WARNING", "log_to_driver": False,
                                               "include_dashboard": False, "configure_logging": False}
            private = None
            try:
                if self.address is None and not joins_running_cluster():
                    private = self.private_cluster = PrivateLocalCluster()
                    private.enter()
                    options.update(private.init_options())
                self._init(ray, options)
                if private is not None:
                    import atexit

                    private.started(ray)
                    atexit.register(self.close)  # runs before Ray's own shutdown at exit: the folder goes too
            except BaseException:  # Ctrl-C included: no node, folder or token left behind
                if private is not None:
                    ray.shutdown()
                    private.close()
                    self.private_cluster = None
                raise
            self._ray = ray
            return ray

    def _init(self, ray: Any, options: dict[str, Any]) -> None:
        for attempt in range(1, CONNECT_ATTEMPTS + 1):
            try:
                ray.init(address=self.address, **options)
                return
            except ConnectionError as exc:  # Ray Client gives up after ~30 s; a loaded head needs longer
                if attempt == CONNECT_ATTEMPTS:
                    raise SciprobeError(f"cannot reach the Ray cluster {self.name} ({attempt} attempts): "
                                        f"{' '.join(str(exc).split())}") from None
            except (RuntimeError, ValueError) as exc:
                raise SciprobeError(f"cannot reach the Ray cluster {self.name}: "
                                    f"{' '.join(str(exc).split())}") from None

    def _remote(self, fn: Callable[..., Any]) -> Any:
        ray = self._connect()
        with self._lock:
            remote = self._remote_fns.get(fn)
            if remote is None:
                remote = self._remote_fns[fn] = ray.remote(num_cpus=1)(fn)
            return remote

    def submit(self, fn: Callable[..., Any], /, *args: Any) -> Future:
        return self._remote(fn).remote(*args).future()

    def share(self, value: Any) -> Any:
        return self._connect().put(value)

    def nodes(self) -> list[dict[str, Any]]:
        """The cluster's live nodes that can run a task (at least one CPU)."""
        ray = self._connect()
        return [n for n in ray.nodes() if n.get("Alive") and n.get("Resources", {}).get("CPU", 0) > 0]

    def on_each_node(self, fn: Callable[[], Any]) -> list[tuple[str, Any]]:
        ray = self._connect()
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        remote = ray.remote(num_cpus=0)(fn)
        nodes = self.nodes()
        refs = [remote.options(scheduling_strategy=NodeAffinitySchedulingStrategy(n["NodeID"], soft=False)).remote()
                for n in nodes]
        labels = [f"{n.get('NodeManagerHostname') or n.get('NodeName')} {n.get('NodeManagerAddress')} "
                  f"node {n['NodeID'][:12]} ({n['Resources'].get('CPU', 0):g} CPU)" for n in nodes]
        return list(zip(labels, ray.get(refs)))

    def describe(self) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name}
        if self._ray is not None:
            nodes = self.nodes()
            out.update(ray_version=self._ray.__version__, nodes=len(nodes),
                       cpus=sum(n["Resources"].get("CPU", 0) for n in nodes))
        return out

    def close(self) -> None:
        with self._lock:
            if self._ray is not None:
                self._ray.shutdown()
                self._ray = None
                self._remote_fns.clear()
            if self.private_cluster is not None:
                import atexit

                self.private_cluster.close()
                self.private_cluster = None
                atexit.unregister(self.close)


def check_executor_name(name: str | None) -> str:
    """``local``, ``ray`` or ``ray://HOST:PORT`` (None: local); anything else is a one-line error."""
    name = (name or "local").strip()
    if name in ("local", "ray"):
        return name
    if name.startswith("ray://"):
        host, sep, port = name[len("ray://"):].rpartition(":")
        if host and sep and port.isdigit():
            return name
    raise SciprobeError(f"unknown executor {name!r}: expected local, ray or ray://HOST:PORT")


_EXECUTORS: dict[str, Executor] = {}
_EXECUTORS_LOCK = threading.Lock()


def get_executor(name: str | None = None) -> Executor:
    """The process's executor of that name (one Ray connection per process, reused by every run)."""
    name = check_executor_name(name)
    if name != "local" and not ray_installed():
        raise SciprobeError(f"--executor {name} needs Ray: {_INSTALL_HINT}")
    with _EXECUTORS_LOCK:
        executor = _EXECUTORS.get(name)
        if executor is None:
            if name == "local":
                executor = LocalExecutor()
            else:
                for other in [n for n in _EXECUTORS if n != "local"]:  # one Ray connection at a time
                    _EXECUTORS.pop(other).close()
                executor = RayExecutor(None if name == "ray" else name)
            _EXECUTORS[name] = executor
        return executor


def shutdown_executors() -> None:
    """Close every executor of this process (the Ray connection included); the next use starts afresh."""
    with _EXECUTORS_LOCK:
        executors = list(_EXECUTORS.values())
        _EXECUTORS.clear()
    for executor in executors:
        executor.close()
