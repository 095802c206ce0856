"""The loopback stub in its own process, for the client benches: it stands in for a remote provider.

A provider's servers do not share the client's CPU; a stub in the client's process would (same GIL), and one
at normal priority on a loaded 2-core machine is slowed by the very load a "busy" run puts on the client. So
the stub gets a process of its own and, where the bench may raise priorities (root), ``STUB_NICE``: the
burners of bench/load.py then load the client, not the stand-in provider. Each bench reports the ceiling of
this setup with no client at all (a bare aiohttp loop) where it matters.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
from collections.abc import Iterator
import json
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
#: Priority of the stub process when the bench may set it (nice -5: ahead of the burners, not of the kernel).
STUB_NICE = -5

_SERVE = """
import json, sys
from sciprobe.testing.stub_server import StubServer
{reply_source}
stub = StubServer(reply={reply_name}, latency_s=float(sys.argv[1]), **json.loads(sys.argv[2])).start()
print(stub.base_url, flush=True)
sys.stdin.read()  # serve until the bench closes our stdin, then report what was seen
print(json.dumps({{"count": stub.count, "count_429": stub.count_429}}), flush=True)
"""


def _raise_priority() -> None:
    with contextlib.suppress(OSError):  # not permitted: stays at the default priority
        os.setpriority(os.PRIO_PROCESS, 0, STUB_NICE)


@dataclass
class Stub:
    url: str
    nice: int
    seen: dict[str, int] = field(default_factory=dict)  # filled on exit: requests and 429s from rpm/tpm limits
    pid: int = 0  # the stub's process (bench/replicas.py kills one mid-run: then ``seen`` stays empty)

    def note(self) -> str:
        return f"stub in its own process at nice {self.nice}"


@contextlib.contextmanager
def stub_process(latency: float, reply_source: str = "", reply_name: str = "None", **options: float) -> Iterator[Stub]:
    """Serve a StubServer (``reply_source`` defines ``reply_name(body) -> str``; ``options`` such as ``rpm`` and
    ``burst`` go to its constructor) in a child process; yields its base URL and priority, stops it on exit and
    then fills ``Stub.seen``."""
    code = _SERVE.format(reply_source=reply_source, reply_name=reply_name)
    proc = subprocess.Popen([sys.executable, "-c", code, str(latency), json.dumps(options)], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True, env={**os.environ, "PYTHONPATH": str(REPO)},
                            preexec_fn=_raise_priority)
    assert proc.stdin is not None and proc.stdout is not None
    try:
        url = proc.stdout.readline().strip()
        if not url.startswith("http://"):
            raise RuntimeError(f"stub did not start (got {url!r})")
        stub = Stub(url, os.getpriority(os.PRIO_PROCESS, proc.pid), pid=proc.pid)
        yield stub
        if proc.poll() is None:
            proc.stdin.close()
            stub.seen = json.loads(proc.stdout.readline())
    finally:
        if not proc.stdin.closed:
            proc.stdin.close()
        proc.terminate()
        proc.wait(timeout=10)
