"""The sandboxed executor for SGI-Bench dry experiments (spec sgibench.md §3.3, §8).

The adversarial suite lives in tests/cases/sandbox_hostile/*.py (one hostile program per file, its header says what
must happen). Every run here is followed by host checks: no process of the run left (a scan of /proc for the
run's marker env var, and for hostile programs, which report their uid, no process with the run's fresh uid in
root mode), the private run dir removed (its tmp root empty), nothing named after the run's marker in /tmp, $HOME,
the repo, /etc, /dev/shm or /, the host secret file unchanged and absent from the output.

Set SCIPROBE_SANDBOX_OPTIONAL=1 to skip (instead of fail) where bubblewrap cannot run.
"""

from __future__ import annotations

import json
import os
import re
import socket
import stat
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path

import pytest

from sciprobe.core.errors import SciprobeError
from sciprobe.sandbox import bwrap as bw
from sciprobe.sandbox import env as sandbox_env
from sciprobe.sandbox.runner import (
    RunResult,
    RunSpec,
    SandboxLimits,
    SandboxUnavailableError,
    bwrap_path,
    interpreter_prefixes,
    run_many,
    run_python,
    sandbox_available,
)
from sciprobe.sandbox.tree import list_tree, remove_tree

from golden import CASES_DIR, REPO

CASES = CASES_DIR / "sandbox_hostile"
MARKER_ENV = "SCIPROBE_SBX_TEST_MARKER"


def _require_sandbox() -> None:
    ok, reason = sandbox_available()
    if not ok:
        if os.environ.get("SCIPROBE_SANDBOX_OPTIONAL") == "1":
            pytest.skip(reason)
        pytest.fail(f"bubblewrap sandbox unavailable: {reason} (apt-get install bubblewrap)")


# --- host observation ---------------------------------------------------------------------------------------
def _procs_with(marker: str) -> list[int]:
    """Host pids whose environment contains the marker (every sandboxed process inherits it)."""
    needle = marker.encode()
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) == os.getpid():
            continue
        try:
            with open(f"/proc/{name}/environ", "rb") as fh:
                if needle in fh.read():
                    found.append(int(name))
        except OSError:
            continue
    return found


def _procs_of_uid(uid: int) -> list[int]:
    """Host pids owned by uid (root mode gives every run a fresh uid, so this finds any survivor of a run,
    even one that dropped the marker from its environment)."""
    out = []
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                if os.stat(f"/proc/{name}").st_uid == uid:
                    out.append(int(name))
            except OSError:
                pass
    return out


#: Prepended to every hostile program: reports the host-visible uid of the run on stderr.
UID_PROBE = "import os as _o, sys as _s; _s.stderr.write(f'SBXUID={_o.getuid()}\\n'); _s.stderr.flush(); del _o, _s\n"


def _watched_dirs() -> list[Path]:
    return [Path("/tmp"), Path.home(), REPO, REPO / "tests", Path("/etc"), Path("/dev/shm"), Path("/")]


def _snapshot() -> dict[str, set[str]]:
    snap = {}
    for d in _watched_dirs():
        try:
            snap[str(d)] = set(os.listdir(d))
        except OSError:
            snap[str(d)] = set()
    return snap


@pytest.fixture
def host(tmp_path, monkeypatch):
    """A private sandbox tmp root, a host secret, a marker; checks the host afterwards."""
    tmp_root = tmp_path / "sbx-root"
    tmp_root.mkdir()
    monkeypatch.setenv("SCIPROBE_SANDBOX_TMPDIR", str(tmp_root))
    secret_dir = tmp_path / "host-secret"
    secret_dir.mkdir()
    secret = secret_dir / "secret.txt"
    secret_value = f"sk-host-secret-{uuid.uuid4().hex}"
    secret.write_text(secret_value)
    marker = f"sbxmark{uuid.uuid4().hex[:12]}"
    before = _snapshot()
    state = {"marker": marker, "secret": secret, "secret_value": secret_value, "tmp_root": tmp_root}
    yield state
    deadline = time.monotonic() + 30
    while _procs_with(marker) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _procs_with(marker) == [], "a sandboxed process survived the run"
    assert list(tmp_root.iterdir()) == [], "the private run dir was not removed"
    after = _snapshot()
    for d in _watched_dirs():
        new = after[str(d)] - before[str(d)]
        assert not [n for n in new if marker in n], f"the sandbox left a file in {d}: {new}"
    # Shared dirs (other jobs may write there) are checked for the run's marker above; private ones strictly.
    assert os.listdir(secret_dir) == ["secret.txt"] and secret.read_text() == secret_value


def _under_private_tmpfs(path: Path) -> bool:
    """The sandbox mounts fresh tmpfs on /tmp and /dev/shm, so writes to such paths stay inside it."""
    resolved = Path(path).resolve()
    return any(resolved == Path(p) or Path(p) in resolved.parents for p in ("/tmp", "/dev/shm"))


def _run(code: str, host: dict, **kw) -> RunResult:
    _require_sandbox()
    env = {MARKER_ENV: host["marker"], **kw.pop("env", {})}
    r = run_python(code, env=env, **kw)
    assert r.sandboxed
    assert host["secret_value"] not in r.stdout + r.stderr
    return r


# --- the adversarial suite ------------------------------------------------------------------------------------
def _load_case(path: Path) -> tuple[dict, str, str]:
    text = path.read_text()
    must = " ".join(line[len("# must:"):].strip() for line in text.splitlines() if line.startswith("# must:"))
    expect = next(json.loads(line[len("# expect:"):]) for line in text.splitlines() if line.startswith("# expect:"))
    return expect, must, text


HOSTILE = sorted(CASES.glob("*.py"))
SLOW_CASES = {"fork_bomb", "memory_bomb_multiproc", "disk_bomb_many_files", "infinite_loop", "stop_self"}
UNSANDBOXED_TOO = [p for p in HOSTILE if _load_case(p)[0].get("unsandboxed_too")]
#: What the checks understand; a typo in a case file must not silently disable a check.
EXPECT_KEYS = {"limits", "exit", "exit_code", "limit_hit", "timed_out", "killed_by_signal", "stdout_truncated",
               "stdout_contains", "sandboxed_stdout_contains", "stderr_contains", "stdout_not_contains",
               "stdout_ints_at_most", "warnings_contain", "output_dir", "output_files", "output_entries_at_least",
               "unsandboxed_too"}


def test_suite_is_big_enough():
    assert len(HOSTILE) >= 40
    for p in HOSTILE:
        expect, must, _ = _load_case(p)
        assert must and "limits" in expect, p.name
        assert set(expect) <= EXPECT_KEYS, (p.name, set(expect) - EXPECT_KEYS)
        # at least one check beyond "the host is untouched" (which every run gets)
        assert set(expect) - {"limits", "unsandboxed_too"}, p.name
    assert RUN_ALONE <= {p.stem for p in HOSTILE}, "RUN_ALONE names a case that does not exist"


class _Server:
    """A TCP server on the host's loopback; records whether anything connected."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.sock.settimeout(0.2)
        self.port = self.sock.getsockname()[1]
        self.connections = 0
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._loop, daemon=True)
        self.thread.start()

    def _loop(self) -> None:
        while not self.stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            if not self.stop.is_set():  # once stopped, the connection is close()'s wake-up call
                self.connections += 1
            conn.close()

    def close(self) -> None:
        self.stop.set()
        try:  # wake accept() now rather than after its timeout (0.2 s a case, the suite's largest idle time)
            socket.create_connection(("127.0.0.1", self.port), timeout=2).close()
        except OSError:
            pass
        self.thread.join(2)
        self.sock.close()


def _fill(text: str, values: dict[str, str]) -> str:
    for key, value in values.items():
        text = text.replace(key, value)
    return text


def _case_values(host: dict, port: int) -> dict[str, str]:
    return {"__PORT__": str(port), "__SECRET_FILE__": str(host["secret"]), "__MARKER__": host["marker"],
            "__REPO__": str(REPO), "__TMP_ROOT__": str(host["tmp_root"])}


def _tree_entries(root: Path) -> dict[str, list[int]]:
    """relative path -> [st_mode, st_blocks] of everything below root."""
    return {rel: [st.st_mode, st.st_blocks] for rel, st in list_tree(root).items()}


def _check_case(expect: dict, r: dict, limits: SandboxLimits, out_dir: Path | None,
                outputs: dict[str, list[int]] | None, info: str) -> None:
    """The expectations of one hostile case against one run (``r``: ``RunResult.to_dict()``)."""
    as_list = lambda v: v if isinstance(v, list) else [v]  # noqa: E731
    if expect.get("exit") == "zero":
        assert r["exit_code"] == 0, info
    elif expect.get("exit") == "nonzero":
        assert r["exit_code"] != 0, info
    for key in ("exit_code", "timed_out", "killed_by_signal", "stdout_truncated"):
        if key in expect:
            assert r[key] == expect[key], info
    if "limit_hit" in expect:
        assert r["limit_hit"] in expect["limit_hit"], info
    if r["timed_out"]:
        assert r["limit_hit"] == "wall", info
    assert len(r["stdout"].encode()) <= limits.output_limit_bytes, info
    for text in as_list(expect.get("stdout_contains", [])):
        assert text in r["stdout"], info
    if r["sandboxed"]:
        for text in as_list(expect.get("sandboxed_stdout_contains", [])):
            assert text in r["stdout"], info
    for text in as_list(expect.get("stderr_contains", [])):
        assert text in r["stderr"], info
    for bad in expect.get("stdout_not_contains", []):
        if bad == "repo:WROTE" and _under_private_tmpfs(REPO):
            continue  # a checkout under /tmp is shadowed by the sandbox's own /tmp; the host check below holds
        assert bad not in r["stdout"], info
    for name, most in expect.get("stdout_ints_at_most", {}).items():
        for value in re.findall(rf"\b{name}=(\d+)", r["stdout"]):
            assert int(value) <= most, info
    if "warnings_contain" in expect:
        assert any(expect["warnings_contain"] in w for w in r["warnings"]), info
    assert "sk-host-secret" not in r["stdout"] + r["stderr"], info
    if out_dir is not None:
        assert outputs is not None
        assert (out_dir / "result.txt").read_text() == "ok", info
        odd = {p: m for p, (m, _) in outputs.items() if not (stat.S_ISREG(m) or stat.S_ISDIR(m))}
        assert not odd, f"{odd} {info}"
        # what output_dir received never exceeds the run's disk budget, however the program built its files
        assert sum(blocks for _, blocks in outputs.values()) * 512 <= (limits.disk_mb << 20) + (8 << 20), info
        for rel in expect.get("output_files", []):
            assert rel in outputs and stat.S_ISREG(outputs[rel][0]), f"{rel!r} {info}"
        assert len(outputs) >= expect.get("output_entries_at_least", 0), info


def _run_case(case: Path, host: dict, tmp_path: Path, monkeypatch, **kw) -> tuple[dict, RunResult, SandboxLimits,
                                                                                   Path | None, str]:
    expect, must, code = _load_case(case)
    server = _Server()
    monkeypatch.setenv("SCIPROBE_TEST_HOST_SECRET", "sk-host-secret-env")
    decoy = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)", "host-marker-process"])
    try:
        values = _case_values(host, server.port)
        expect = json.loads(_fill(json.dumps(expect), values))
        limits = SandboxLimits(**expect["limits"])
        out_dir = tmp_path / "outputs" if expect.get("output_dir") else None
        env = {MARKER_ENV: host["marker"]}
        r = run_python(UID_PROBE + _fill(code, values), env=env, limits=limits, output_dir=out_dir, **kw)
        assert server.connections == 0, r
    finally:
        decoy.kill()
        decoy.wait()
        server.close()
    return expect, r, limits, out_dir, f"{case.name} ({must}): {r}"[:3000]


@pytest.mark.parametrize("case", [pytest.param(p, id=p.stem, marks=[pytest.mark.slow] if p.stem in SLOW_CASES
                                               else []) for p in HOSTILE])
def test_hostile_program_is_contained(case: Path, host, tmp_path, monkeypatch):
    _require_sandbox()
    expect, r, limits, out_dir, info = _run_case(case, host, tmp_path, monkeypatch)
    assert r.sandboxed
    uid = int(r.stderr.split("SBXUID=", 1)[1].split()[0])
    if os.geteuid() == 0:
        assert bw.UID_BASE <= uid < bw.UID_BASE + bw.UID_SPAN, info
        deadline = time.monotonic() + 30
        while _procs_of_uid(uid) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert _procs_of_uid(uid) == [], f"a process of the run's uid survived: {info}"
    outputs = _tree_entries(out_dir) if out_dir is not None else None
    _check_case(expect, r.to_dict(), limits, out_dir, outputs, info)


@pytest.mark.parametrize("case", [pytest.param(p, id=p.stem) for p in UNSANDBOXED_TOO])
def test_hostile_cleanup_without_a_sandbox(case: Path, host, tmp_path, monkeypatch):
    """The explicit opt-out keeps its private run dir on the host disk: whatever the program leaves there (deep,
    locked, oddly named, special or sparse files, flags) is removed, and output_dir stays within its budgets."""
    with monkeypatch.context() as m:
        m.setenv("SCIPROBE_BWRAP", str(tmp_path / "no-such-bwrap"))
        expect, r, limits, out_dir, info = _run_case(case, host, tmp_path, monkeypatch, allow_unsandboxed=True)
    assert not r.sandboxed and not any("left for a later cleanup" in w for w in r.warnings), info
    outputs = _tree_entries(out_dir) if out_dir is not None else None
    _check_case(expect, r.to_dict(), limits, out_dir, outputs, info)
    # the host fixture then checks that the run dir is gone


@pytest.mark.slow
def test_hostile_run_beside_normal_run(host):
    """A fork bomb in one sandbox does not starve a normal program running at the same time."""
    _require_sandbox()
    bomb = (CASES / "fork_bomb.py").read_text()
    env = {MARKER_ENV: host["marker"]}
    specs = [RunSpec(bomb, limits=SandboxLimits(wall_s=3, max_procs=32), env=env),
             RunSpec("import os\nos.fork() or print('forked fine')\n", limits=SandboxLimits(wall_s=20), env=env)]
    bombed, normal = run_many(specs, workers=2)
    assert bombed.timed_out
    assert normal.exit_code == 0 and "forked fine" in normal.stdout


# --- normal behaviour ---------------------------------------------------------------------------------------
def test_stdout_stderr_and_upstream_output_string(host):
    r = _run("import sys\nprint('[Final Output]')\nprint(3.14159)\nprint('warn', file=sys.stderr)\n", host)
    assert r.exit_code == 0 and r.ok
    assert r.stdout == "[Final Output]\n3.14159\n"
    assert r.stderr == "warn\n"
    assert r.output == "warn\n\n[Final Output]\n3.14159"
    assert not r.timed_out and r.limit_hit is None and r.killed_by_signal is None and not r.warnings


def test_exit_codes(host):
    assert _run("import sys; sys.exit(3)", host).exit_code == 3
    r = _run("raise ValueError('boom')", host)
    assert r.exit_code == 1 and "ValueError: boom" in r.stderr and not r.ok
    r = _run("import os, signal; os.kill(os.getpid(), signal.SIGTERM)", host)
    assert r.exit_code == -15 and r.killed_by_signal == 15


def test_rlimits_are_applied_inside(host):
    limits = SandboxLimits(cpu_s=7, memory_mb=777, max_procs=33, file_size_mb=55, max_open_files=99)
    code = ("import resource as r\n"
            "for n in ('CPU', 'AS', 'NPROC', 'FSIZE', 'NOFILE', 'CORE'):\n"
            "    print(n, *r.getrlimit(getattr(r, 'RLIMIT_' + n)))\n")
    r = _run(code, host, limits=limits)
    got = {line.split()[0]: tuple(int(x) for x in line.split()[1:]) for line in r.stdout.splitlines()}
    assert got == {"CPU": (7, 8), "AS": (777 << 20,) * 2, "NPROC": (33, 33), "FSIZE": (55 << 20,) * 2,
                   "NOFILE": (99, 99), "CORE": (0, 0)}


def test_program_is_not_root_and_has_no_capabilities(host):
    r = _run("import os\nprint(os.getuid(), os.geteuid())\n"
             "print([l for l in open('/proc/self/status') if l.startswith(('CapEff', 'CapBnd', 'NoNewPrivs'))])",
             host)
    uid = int(r.stdout.split()[0])
    assert uid != 0
    assert "CapEff:\\t0000000000000000" in r.stdout and "CapBnd:\\t0000000000000000" in r.stdout
    assert "NoNewPrivs:\\t1" in r.stdout


def test_inputs_are_readable_and_read_only_and_workdir_writable(host, tmp_path):
    data = tmp_path / "adult.data"
    data.write_text("39, State-gov, 77516\n")
    d = tmp_path / "mnist_raw"
    d.mkdir()
    (d / "labels.gz").write_bytes(b"\x1f\x8b")
    code = (
        "import os\n"
        "print(open('data/adult.data').read().strip())\n"
        "print(sorted(os.listdir('data/mnist_raw')))\n"
        "for p in ('data/adult.data', 'data/mnist_raw/new'):\n"
        "    try:\n"
        "        open(p, 'w').write('x'); print('WROTE', p)\n"
        "    except OSError as e:\n"
        "        print('ro', p, type(e).__name__)\n"
        "open('data/generated.npy', 'w').write('gen')\n"
        "print(sorted(os.listdir('data')))\n")
    out = tmp_path / "out"
    r = _run(code, host, inputs={"data/adult.data": data, "data/mnist_raw": d}, output_dir=out)
    assert r.exit_code == 0, r
    assert "39, State-gov, 77516" in r.stdout and "['labels.gz']" in r.stdout
    assert "WROTE" not in r.stdout
    assert "['adult.data', 'generated.npy', 'mnist_raw']" in r.stdout
    assert data.read_text() == "39, State-gov, 77516\n" and sorted(os.listdir(d)) == ["labels.gz"]
    # output_dir gets what the program wrote, not the inputs
    assert (out / "data" / "generated.npy").read_text() == "gen"
    assert not (out / "data" / "adult.data").exists() and not (out / "data" / "mnist_raw").exists()
    assert (out / "main.py").exists()


def test_multiprocessing_pool_and_threads_work(host):
    """Legitimate parallel code (sklearn n_jobs, multiprocessing) runs: /dev/shm semaphores, fork, threads."""
    code = ("import multiprocessing as mp, threading\n"
            "def sq(x):\n    return x * x\n"
            "if __name__ == '__main__':\n"
            "    with mp.Pool(2) as pool:\n        print(sum(pool.map(sq, range(100))))\n"
            "    ts = [threading.Thread(target=sq, args=(i,)) for i in range(8)]\n"
            "    [t.start() for t in ts]; [t.join() for t in ts]\n"
            "    print('threads ok')\n")
    r = _run(code, host, limits=SandboxLimits(wall_s=60, memory_mb=1024))
    assert r.exit_code == 0, r
    assert r.stdout == "328350\nthreads ok\n" and r.limit_hit is None


ADULT = (REPO.parent / "shared" / "data" / "sgibench" / "evaluation" / "task_3_dry_experiment" / "data"
         / "SGI_DryExperiment_0200" / "adult.data")


@pytest.mark.skipif(not ADULT.is_file(), reason="SGI reference data not in ../shared")
def test_external_dataset_bound_like_upstream(host):
    """Item 0200's truncated Adult file (spec §7) appears at data/adult.data, byte-identical and read-only."""
    code = ("import hashlib\n"
            "print(hashlib.sha256(open('data/adult.data', 'rb').read()).hexdigest())\n"
            "try:\n    open('data/adult.data', 'ab').write(b'x')\nexcept OSError as e:\n    print('read-only')\n")
    r = _run(code, host, inputs={"data/adult.data": ADULT})
    assert r.stdout.split() == ["839d2e476d7eb1cc99f9d6ad9abd1819ec7f9cefe69c6ccf64f5311f1407fae7", "read-only"], r


def test_data_generation_then_main_like_upstream(host, tmp_path):
    """Spec §3.3: data_en.py materialises data/ (10 min limit), then main runs against it (300 s limit)."""
    gen = ("import json, os\nos.makedirs('data', exist_ok=True)\n"
           "json.dump([1, 2, 3], open('data/d.json', 'w'))\nprint('generated')\n")
    unit = tmp_path / "unit_test_0"
    r1 = _run(gen, host, filename="data_en.py", limits=SandboxLimits.data_generation(), output_dir=unit)
    assert r1.ok and (unit / "data" / "d.json").is_file()
    main = "import json\nprint('[Final Output]')\nprint(sum(json.load(open('data/d.json'))))\n"
    r2 = _run(main, host, filename="main_[model].py", inputs={"data": unit / "data"})
    assert r2.ok and r2.output == "[Final Output]\n6"


def test_filename_and_args(host):
    r = _run("import sys\nprint(sys.argv)\n", host, filename="main_[model].py", args=["--seed", "1"])
    assert r.stdout.strip() == "['main_[model].py', '--seed', '1']"


def test_bad_paths_are_rejected(host, tmp_path):
    from sciprobe.sandbox.runner import SandboxError

    _require_sandbox()
    with pytest.raises(SandboxError):
        run_python("print(1)", inputs={"../escape": tmp_path})
    with pytest.raises(SandboxError):
        run_python("print(1)", inputs={"/abs": tmp_path})
    with pytest.raises(SandboxError):
        run_python("print(1)", inputs={"x": tmp_path / "missing"})


def test_interpreter_with_a_too_wide_prefix_is_refused(host, tmp_path):
    from sciprobe.sandbox.runner import SandboxError

    _require_sandbox()
    fake = tmp_path / "python"
    fake.write_text("#!/bin/sh\necho '[\"/\", \"/\", \"/\", \"/\"]'\n")
    fake.chmod(0o755)
    with pytest.raises(SandboxError, match="too much of the host"):
        run_python("print(1)", python=fake)


class _Barrier:
    """A unix socket on the host, bound read-only into each sandbox: every program connects and blocks until
    ``parties`` have connected, then all are released. Programs that did not run at the same time never get
    through (they end at their wall limit)."""

    PROGRAM = ("import socket, sys\ns = socket.socket(socket.AF_UNIX)\ns.connect('barrier.sock')\n"
               "s.sendall(b'1')\nprint(s.recv(2).decode(), sys.argv[1])\n")

    def __init__(self, path: Path, parties: int) -> None:
        self.path, self.parties, self.arrived = path, parties, 0
        self.sock = socket.socket(socket.AF_UNIX)
        self.sock.bind(str(path))
        os.chmod(path, 0o777)  # root mode: the program runs under a fresh uid
        self.sock.listen(parties)
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        conns = []
        while len(conns) < self.parties:
            try:
                conn, _ = self.sock.accept()
            except OSError:  # closed: nobody else is coming
                return
            conn.recv(1)
            conns.append(conn)
            self.arrived = len(conns)
        for conn in conns:
            conn.sendall(b"go")
            conn.close()

    def close(self) -> None:
        self.sock.close()


def test_run_many_runs_in_parallel(host, tmp_path):
    """4 programs that each block until all 4 have started all finish: run_many ran them at the same time."""
    _require_sandbox()
    barrier = _Barrier(tmp_path / "barrier.sock", 4)
    try:
        specs = [RunSpec(_Barrier.PROGRAM, args=[str(i)], inputs={"barrier.sock": barrier.path},
                         limits=SandboxLimits(wall_s=120), env={MARKER_ENV: host["marker"]}) for i in range(4)]
        results = run_many(specs, workers=4)
    finally:
        barrier.close()
    assert [r.stdout for r in results] == [f"go {i}\n" for i in range(4)], results
    assert all(r.sandboxed and r.ok for r in results) and barrier.arrived == 4


def test_run_many_keeps_input_order(host):
    _require_sandbox()
    specs = [RunSpec(f"print({i})\n", env={MARKER_ENV: host["marker"]}) for i in range(6)]
    results = run_many(specs, workers=3)
    assert [r.stdout.strip() for r in results] == [str(i) for i in range(6)]
    assert all(r.sandboxed and r.exit_code == 0 for r in results)
    plain = run_many(["print('a')", "print('b')"])
    assert [r.stdout for r in plain] == ["a\n", "b\n"]


def _wait_until(condition, seconds: float = 60.0) -> bool:
    """Poll ``condition`` with a generous deadline (for processes to appear or vanish; never a timing claim)."""
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.05)
    return True


def _kill_caller_mid_run(host: dict, program: str, extra_env: dict[str, str] | None = None) -> None:
    """Start run_python in a child process, wait until the program runs, SIGKILL the child."""
    script = (f"import sys; sys.path.insert(0, {str(REPO)!r})\n"
              "from sciprobe.sandbox.runner import run_python\n"
              "print('started', flush=True)\n"
              f"run_python({program!r}, allow_unsandboxed=True, env={{{MARKER_ENV!r}: {host['marker']!r}}})\n")
    caller = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True,
                              env={**os.environ, **(extra_env or {})})
    assert caller.stdout is not None and caller.stdout.readline().strip() == "started"
    assert _wait_until(lambda: len(_procs_with(host["marker"])) >= 2), "the program did not start"
    caller.kill()
    caller.wait()


def test_caller_killed_mid_run_leaves_nothing(host):
    """SIGKILL the process that called run_python: the sandbox dies with it (--die-with-parent), and with it the
    tmpfs holding the work dir: nothing is left on the host, not even for a later cleanup."""
    _require_sandbox()
    _kill_caller_mid_run(host, "import os, time\nos.fork()\nopen('data.bin', 'wb').write(b'x' * 4096)\n"
                               "print(1, flush=True)\ntime.sleep(600)")
    assert _wait_until(lambda: not _procs_with(host["marker"]))
    assert list(host["tmp_root"].iterdir()) == []


def test_stale_unsandboxed_run_dir_is_reclaimed_without_its_owner_file(host, tmp_path):
    """Without a sandbox the run dir is on the host disk. A caller killed mid-run leaves it behind; the next run
    reclaims it although the program deleted everything it could reach (ownership is in the dir's name), made a
    3,000-deep tree and locked it."""
    program = ("import os, shutil, time\n"
               "for name in os.listdir('..'):\n"
               "    if name != 'work':\n"
               "        os.unlink(os.path.join('..', name))\n"
               "top = os.open('.', os.O_RDONLY)\n"
               "for _ in range(3000):\n    os.mkdir('d')\n    os.chdir('d')\n"
               "os.fchdir(top)\nos.chmod('d', 0)\nos.chmod('.', 0o500)\n"
               "if os.fork() == 0:\n    time.sleep(600)\nprint(1, flush=True)\ntime.sleep(600)")
    _kill_caller_mid_run(host, program, {"SCIPROBE_BWRAP": str(tmp_path / "no-such-bwrap")})
    for pid in _procs_with(host["marker"]):  # no sandbox: the orphans outlive their caller; end them by pid
        os.kill(pid, 9)
    assert _wait_until(lambda: not _procs_with(host["marker"]))
    left = list(host["tmp_root"].iterdir())
    assert len(left) == 1 and not (left[0] / "owner").exists()
    from sciprobe.sandbox import host as sandbox_host

    sandbox_host.clean_stale_runs(str(host["tmp_root"]))
    assert list(host["tmp_root"].iterdir()) == []


def test_live_owners_run_dirs_are_kept(tmp_path, monkeypatch):
    from sciprobe.sandbox import host as sandbox_host

    monkeypatch.setenv("SCIPROBE_SANDBOX_TMPDIR", str(tmp_path))
    mine = Path(sandbox_host.new_run_root())
    other_ns = tmp_path / "sciprobe-sbx-1-123-999-abcdefgh"  # another pid namespace: not ours to judge
    other_ns.mkdir()
    foreign = tmp_path / "unrelated-dir"
    foreign.mkdir()
    sandbox_host.clean_stale_runs(str(tmp_path))
    assert mine.is_dir() and other_ns.is_dir() and foreign.is_dir()
    assert sandbox_host.remove_run_root(str(mine)) is None and not mine.exists()


def test_a_zombie_is_told_from_a_live_process():
    """The end-of-run backstop waits for the sandbox's live processes only: a zombie (in user-namespace mode the
    sandbox's pid 1, left to the host's init to reap) can do nothing and is not the run's to reap."""
    from sciprobe.sandbox import host as sandbox_host

    child = subprocess.Popen([sys.executable, "-c", "pass"])
    try:
        assert not sandbox_host.is_zombie(os.getpid())
        assert _wait_until(lambda: sandbox_host.is_zombie(child.pid)), "the child did not exit"
    finally:
        child.wait()
    assert not sandbox_host.is_zombie(child.pid)  # reaped: gone


def test_a_failed_cleanup_loses_no_result(host, tmp_path, monkeypatch):
    """Cleanup that fails for one run of a batch becomes a warning on that run; every result comes back, and the
    run dir is removed by the next run."""
    from sciprobe.sandbox import host as sandbox_host

    monkeypatch.setenv("SCIPROBE_BWRAP", str(tmp_path / "no-such-bwrap"))
    real = sandbox_host.remove_tree
    failed: list[str] = []
    stuck = threading.Event()
    stuck.set()

    def flaky(path: str, **kw):
        if not failed and os.path.isdir(os.path.join(path, "work")):
            failed.append(path)
        if failed and path == failed[0] and stuck.is_set():
            return f"could not remove {path}: simulated"
        return real(path, **kw)

    monkeypatch.setattr(sandbox_host, "remove_tree", flaky)
    env = {MARKER_ENV: host["marker"]}
    results = run_many([RunSpec(f"print({i})", env=env) for i in range(4)], workers=2, allow_unsandboxed=True)
    assert [r.stdout for r in results] == [f"{i}\n" for i in range(4)]
    warned = [r for r in results if r.warnings]
    assert len(warned) == 1 and "left for a later cleanup" in warned[0].warnings[0]
    assert [p.name for p in host["tmp_root"].iterdir()] == [os.path.basename(failed[0])]
    stuck.clear()  # whatever blocked the removal is gone: the next run retries it
    run_python("print('next')", allow_unsandboxed=True, env=env)
    assert list(host["tmp_root"].iterdir()) == []


def test_program_never_starts_unless_the_host_says_go(host, tmp_path):
    """The sandbox waits for the host before it starts the program; when the host goes away instead (its stdin
    ends), the program never runs: the barrier it would connect to sees nobody."""
    _require_sandbox()
    from sciprobe.sandbox import supervise as sv

    barrier = _Barrier(tmp_path / "barrier.sock", 1)
    try:
        proc, _, status_r = sv.spawn(
            bwrap_path(), [sys.executable, "main.py", "0"], program=("main.py", _Barrier.PROGRAM.encode()),
            ro_binds=interpreter_prefixes(sys.executable), input_binds={"barrier.sock": str(barrier.path)},
            env={MARKER_ENV: host["marker"]}, limits=SandboxLimits(), host_uid=None)
        _, err = proc.communicate(timeout=120)  # closes stdin at once: the host "went away"
        os.close(status_r)
    finally:
        barrier.close()
    assert proc.returncode == 125, err
    assert barrier.arrived == 0


def test_default_limits_follow_upstream():
    limits = SandboxLimits()
    assert limits.wall_s == 300 and limits.cpu_s == 300
    assert SandboxLimits.data_generation().wall_s == 600
    assert SandboxLimits.data_generation(memory_mb=1024).memory_mb == 1024


# --- refusing to run without a sandbox ---------------------------------------------------------------------------
def test_refuses_without_bwrap_unless_opted_out(tmp_path, monkeypatch):
    monkeypatch.setenv("SCIPROBE_BWRAP", str(tmp_path / "no-such-bwrap"))
    monkeypatch.setenv("SCIPROBE_SANDBOX_TMPDIR", str(tmp_path))
    ok, reason = sandbox_available(refresh=True)
    assert not ok and "not found" in reason
    with pytest.raises(SandboxUnavailableError) as err:
        run_python("print('should not run')")
    msg = str(err.value)
    assert "\n" not in msg and "refusing" in msg and "allow_unsandboxed" in msg
    with pytest.raises(SandboxUnavailableError):
        run_many(["print(1)"])
    r = run_python("import os\nprint('ran', os.environ.get('SCIPROBE_TEST_SECRET_X'))", allow_unsandboxed=True,
                   env={"A": "1"})
    assert r.exit_code == 0 and r.stdout == "ran None\n" and r.sandboxed is False
    r = run_python("import time\ntime.sleep(300)", allow_unsandboxed=True, limits=SandboxLimits(wall_s=1))
    assert r.timed_out and r.limit_hit == "wall" and r.exit_code == -9
    assert [p.name for p in tmp_path.iterdir()] == ["no-such-bwrap"] or list(tmp_path.iterdir()) == []


def test_probe_detects_broken_bwrap(tmp_path, monkeypatch):
    fake = tmp_path / "bwrap"
    fake.write_text("#!/bin/sh\nif [ \"$1\" = --version ]; then echo 'bubblewrap 0.8.0'; exit 0; fi\n"
                    "echo 'bwrap: No permissions to creating new namespace' >&2\nexit 1\n")
    fake.chmod(0o755)
    monkeypatch.setenv("SCIPROBE_BWRAP", str(fake))
    ok, reason = sandbox_available(refresh=True)
    assert not ok and "probe failed" in reason and "\n" not in reason
    with pytest.raises(SandboxUnavailableError):
        run_python("print(1)")


def test_probe_rejects_old_bwrap(tmp_path, monkeypatch):
    fake = tmp_path / "bwrap"
    fake.write_text("#!/bin/sh\necho 'bubblewrap 0.6.1'\n")
    fake.chmod(0o755)
    monkeypatch.setenv("SCIPROBE_BWRAP", str(fake))
    ok, reason = sandbox_available(refresh=True)
    assert not ok and "0.8.0 needed, found 0.6.1" in reason


def test_limits_are_validated():
    from sciprobe.sandbox.runner import SandboxError

    with pytest.raises(SandboxError):
        SandboxLimits(wall_s=0)
    with pytest.raises(SandboxError):
        SandboxLimits(memory_mb=-1)


def test_seccomp_filter_shape():
    prog = bw.seccomp_filter("x86_64")
    assert prog is not None and len(prog) % 8 == 0 and len(prog) // 8 < 64
    assert bw.seccomp_filter("riscv64") is None


@pytest.mark.slow
@pytest.mark.skipif(os.geteuid() != 0, reason="the suite already runs unprivileged")
def test_unprivileged_user_mode(tmp_path):
    """The same executor run by a normal user (uid 65534): user namespace mode, limits and isolation hold."""
    _require_sandbox()
    py = "/usr/bin/python3"
    if not os.access(py, os.X_OK):
        pytest.skip("no system python3 to run as an unprivileged user")
    probe = subprocess.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--", py, "-c",
                            f"import os; os.listdir({str(REPO / 'sciprobe' / 'sandbox')!r})"],
                           capture_output=True, check=False)
    if probe.returncode != 0:
        pytest.skip("the repository is not readable by an unprivileged user here")
    import tempfile

    work = Path(tempfile.mkdtemp(prefix="sciprobe-sbx-test-"))
    os.chmod(work, 0o777)
    try:
        _unprivileged_checks(py, work)
    finally:
        import shutil

        shutil.rmtree(work, ignore_errors=True)


def _unprivileged_checks(py: str, work: Path) -> None:
    script = f"""
import json, os, sys
sys.path.insert(0, {str(REPO)!r})
os.environ['SCIPROBE_SANDBOX_TMPDIR'] = {str(work)!r}
from sciprobe.sandbox.runner import run_python, sandbox_available, SandboxLimits
ok, reason = sandbox_available()
out = {{'ok': ok, 'reason': reason}}
if ok:
    r = run_python("import os, socket\\nprint(os.getuid())\\ntry:\\n"
                   "    socket.create_connection(('127.0.0.1', 22), 1)\\nexcept OSError as e:\\n"
                   "    print('net', type(e).__name__)\\nprint(sorted(os.listdir('/')))")
    out['hello'] = r.to_dict()
    r = run_python("import os\\nwhile True:\\n    try:\\n        os.fork()\\n    except OSError:\\n        pass",
                   limits=SandboxLimits(wall_s=2, max_procs=16))
    out['bomb'] = r.to_dict()
    r = run_python("x = 0\\nwhile True:\\n    x += 1", limits=SandboxLimits(cpu_s=1, wall_s=20))
    out['cpu'] = r.to_dict()
    r = run_python("import os\\nos.makedirs('a/b')\\nos.chmod('a/b', 0)\\nos.chmod('a', 0)\\nos.chmod('.', 0o500)")
    out['chmod'] = r.to_dict()
print(json.dumps(out))
"""
    proc = subprocess.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--", py, "-c", script],
                          capture_output=True, text=True, timeout=120, cwd="/", env={"PATH": "/usr/bin:/bin"},
                          check=False)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    if not out["ok"]:
        pytest.skip(f"unprivileged user namespaces unavailable: {out['reason']}")
    assert "user namespace" in out["reason"]
    hello = out["hello"]
    assert hello["exit_code"] == 0 and hello["sandboxed"], hello
    assert hello["stdout"].splitlines()[0] == str(bw.SANDBOX_UID)
    assert "net " in hello["stdout"] and "'root'" not in hello["stdout"]
    assert out["bomb"]["timed_out"] and out["bomb"]["limit_hit"] == "wall"
    assert out["cpu"]["limit_hit"] == "cpu" and not out["cpu"]["timed_out"]
    assert out["chmod"]["exit_code"] == 0
    assert list(work.iterdir()) == []


#: Jobs the unprivileged runner runs at once. The suite is mostly waiting (wall limits that must expire, a program
#: sleeping before its exit, sandbox start-up), so more jobs than this machine's 2 cores overlap that waiting, while
#: the tightest limit a finishing case has (wall_s=20 for ~0.2 s of CPU) keeps a wide margin even with 2 CPU
#: burners and another test beside the suite. Per-sandbox limits (RLIMIT_NPROC in the sandbox's own user namespace,
#: RLIMIT_AS per process, the watchdog's summed PSS and tmpfs of that sandbox only) do not see the other jobs.
UNPRIVILEGED_POOL = 4
#: Cases the runner runs one at a time after the pool. fork_bomb keeps up to max_procs tasks spinning for its whole
#: wall limit: beside it, every other job (and infinite_loop, whose verdict rests on the CPU time it was given) would
#: compete with them for 2 cores. (That a fork bomb does not starve one normal program is test_hostile_run_beside_
#: normal_run's claim, not something the other cases should lean on.)
RUN_ALONE = {"fork_bomb"}

_UNPRIVILEGED_RUNNER = """
import ctypes, json, multiprocessing, os, signal, sys
sys.path.insert(0, {repo!r})
from sciprobe.sandbox.runner import SandboxLimits, run_python
from sciprobe.sandbox.tree import list_tree


def die_with_runner(runner):
    # a worker outlives a SIGKILL-ed runner (an interrupted test kills it) unless told to die with it; its sandbox
    # then dies with the worker (--die-with-parent)
    ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    if os.getppid() != runner:
        os._exit(1)


def run_job(job):
    # per process: every pool worker runs one job at a time, so the environment is the job's own
    os.environ["SCIPROBE_SANDBOX_TMPDIR"] = job["tmp_root"]
    if job["unsandboxed"]:
        os.environ["SCIPROBE_BWRAP"] = "/nonexistent/bwrap"
    else:
        os.environ.pop("SCIPROBE_BWRAP", None)
    r = run_python(job["code"], limits=SandboxLimits(**job["limits"]), env=job["env"], allow_unsandboxed=True,
                   output_dir=job["out_dir"])
    listed = list_tree(job["out_dir"]) if job["out_dir"] else None
    out = {{rel: [st.st_mode, st.st_blocks] for rel, st in listed.items()}} if listed is not None else None
    return {{"id": job["id"], "result": r.to_dict(), "outputs": out}}


jobs = [json.loads(line) for line in sys.stdin]
# longest first, so that no long job starts last: the jobs that wait out their wall limit, then the larger wall
# limits (a case's limit reflects the work it does: building and copying thousands of files has 60 s, a probe 20 s)
shared = sorted((j for j in jobs if not j["alone"]), key=lambda j: (not j["waits_out_wall"], -j["limits"]["wall_s"]))
done = {{}}
with multiprocessing.get_context("fork").Pool({pool}, die_with_runner, (os.getpid(),)) as pool:  # no thread yet
    for d in pool.imap_unordered(run_job, shared):
        done[d["id"]] = d
for job in jobs:
    if job["alone"]:
        done[job["id"]] = run_job(job)
for job in jobs:  # in the suite's order, whatever order the pool finished in
    print(json.dumps(done[job["id"]]), flush=True)
"""


@pytest.mark.slow
@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to become an unprivileged user")
def test_hostile_suite_unprivileged(tmp_path):
    """The whole hostile suite run by a normal user (uid 65534): user-namespace mode, where the host side has no
    privilege over what the program locks, plus the unsandboxed cleanup cases as that user."""
    _require_sandbox()
    py = "/usr/bin/python3"
    if not os.access(py, os.X_OK):
        pytest.skip("no system python3 to run as an unprivileged user")
    import tempfile

    work = Path(tempfile.mkdtemp(prefix="sciprobe-sbx-unpriv-"))
    os.chmod(work, 0o777)
    server = _Server()
    marker = f"sbxmark{uuid.uuid4().hex[:12]}"
    secret = tmp_path / "secret.txt"
    secret.write_text("sk-host-secret-unprivileged")
    jobs, expected = [], {}
    try:
        for case in HOSTILE:
            expect, must, code = _load_case(case)
            for unsandboxed in (False, True) if expect.get("unsandboxed_too") else (False,):
                job_id = f"{case.stem}{'-unsandboxed' if unsandboxed else ''}"
                tmp_root = work / job_id
                tmp_root.mkdir()
                os.chmod(tmp_root, 0o777)
                values = {"__PORT__": str(server.port), "__SECRET_FILE__": str(secret), "__MARKER__": marker,
                          "__REPO__": str(REPO), "__TMP_ROOT__": str(tmp_root)}
                filled = json.loads(_fill(json.dumps(expect), values))
                out_dir = str(tmp_root / "outputs") if expect.get("output_dir") else None
                jobs.append({"id": job_id, "code": _fill(code, values), "limits": filled["limits"],
                             "env": {MARKER_ENV: marker}, "tmp_root": str(tmp_root), "out_dir": out_dir,
                             "unsandboxed": unsandboxed, "alone": case.stem in RUN_ALONE,
                             "waits_out_wall": bool(filled.get("timed_out"))})
                expected[job_id] = (filled, must, tmp_root, out_dir)
        proc = subprocess.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--", py, "-c",
                               _UNPRIVILEGED_RUNNER.format(repo=str(REPO), pool=UNPRIVILEGED_POOL)],
                              input="".join(json.dumps(j) + "\n" for j in jobs), capture_output=True, text=True,
                              timeout=3600, cwd="/", env={"PATH": "/usr/bin:/bin"}, check=False)
        assert proc.returncode == 0, proc.stderr[-3000:]
        done = [json.loads(line) for line in proc.stdout.splitlines()]
        assert [d["id"] for d in done] == [j["id"] for j in jobs]
        assert server.connections == 0
        assert _wait_until(lambda: not _procs_with(marker)), "a process of the suite survived"
        failures = []
        for d in done:
            filled, must, tmp_root, out_dir = expected[d["id"]]
            r = d["result"]
            info = f"{d['id']} ({must}): {json.dumps(r)[:2000]}"
            try:
                assert r["sandboxed"] is not d["id"].endswith("-unsandboxed"), info
                _check_case(filled, r, SandboxLimits(**filled["limits"]), Path(out_dir) if out_dir else None,
                            d["outputs"], info)
                assert sorted(p.name for p in tmp_root.iterdir()) == (["outputs"] if out_dir else []), info
            except AssertionError as exc:
                failures.append(str(exc).splitlines()[0])
        assert not failures, "\n".join(failures)
    finally:
        server.close()
        for pid in _procs_with(marker):
            os.kill(pid, 9)
        # not shutil.rmtree: an interrupted run can leave deep_tree_3000's 3,000 levels, beyond its recursion
        remove_tree(str(work))


# --- the pinned interpreter ---------------------------------------------------------------------------------------
def test_dryexp_requirements_match_spec():
    reqs = sandbox_env.dryexp_requirements()
    for pin in ("numpy==1.24.3", "pandas==2.0.3", "scipy==1.11.4", "scikit-learn==1.3.2", "statsmodels==0.14.0",
                "xgboost==1.7.6", "rdkit==2023.9.5"):
        assert pin in reqs
    for name in ("netCDF4", "xarray", "h5py", "scikit-image", "matplotlib", "seaborn", "PyWavelets"):
        assert name in reqs
    assert not any(r.startswith("torch") for r in reqs)


def test_create_env_checks_the_python_version(tmp_path):
    with pytest.raises(SciprobeError, match="needs 3.10"):
        sandbox_env.create_env(tmp_path / "env", python=sys.executable)
    py310 = sandbox_env.find_python310()
    if py310 is None:
        pytest.skip("no Python 3.10 here")
    target = sandbox_env.create_env(tmp_path / "env", python=py310, dry_run=True)
    assert target == tmp_path / "env" / "bin" / "python" and not target.exists()
    precious = tmp_path / "not-a-venv"
    precious.mkdir()
    (precious / "keep.txt").write_text("x")
    with pytest.raises(SciprobeError, match="not a virtual environment"):
        sandbox_env.create_env(precious, python=py310, force=True)
    assert (precious / "keep.txt").read_text() == "x"


@pytest.mark.slow
@pytest.mark.skipif(not os.environ.get("SCIPROBE_DRYEXP_ENV"), reason="set SCIPROBE_DRYEXP_ENV to a created env")
def test_pinned_env_runs_in_the_sandbox(host):
    py = sandbox_env.env_python(os.environ["SCIPROBE_DRYEXP_ENV"])
    r = _run("import numpy, scipy, pandas, sklearn\nprint(numpy.__version__, scipy.__version__, pandas.__version__,"
             " sklearn.__version__)\n", host, python=py)
    assert r.stdout.split() == ["1.24.3", "1.11.4", "2.0.3", "1.3.2"], r
