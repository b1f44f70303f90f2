"""Service processes forked from the supervisor, which imported their code once.

Each service is a Python process of its own (a crash or a ``kill -9`` takes one replica, and
the supervisor restarts it), but importing a service's code costs 1–2 s of CPU (FastStream,
redis-py with its OpenTelemetry metrics, pydantic models, numpy for the FAQ's index): nine
processes started with ``python -m`` spend most of ``orquestra up``'s start-up importing the
same modules nine times. So the supervisor imports every service once (``preload``) while it
has no thread and no event loop, and forks each replica from itself (``fork``), as gunicorn's
``--preload`` and Celery's prefork pool do: a replica starts with its modules loaded and shares
their memory with the others until it writes to it.

A forked replica is set up as ``subprocess.Popen(start_new_session=True)`` would leave it: a
session of its own, default signal handlers, no descriptor of the supervisor's but the three
standard ones, the environment it is given, and its process title (``ps``, ``/proc/PID/cmdline``)
the module it runs (``services.triage``). What the supervisor's own calls cached from the
environment (settings, packs) is forgotten, so the replica reads its own.
"""

from __future__ import annotations

import importlib
import os
import runpy
import signal
import subprocess
import sys
import time
import traceback
from collections.abc import Iterable

from setproctitle import setproctitle

from shared.pack import load_pack
from shared.settings import get_settings

# Signals the supervisor handles itself; a replica gets the default handlers back.
SUPERVISOR_SIGNALS = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)


def preload(modules: Iterable[str]) -> None:
    """Import ``modules`` in this process, for every replica forked after to share."""
    for module in modules:
        importlib.import_module(module)


class Forked:
    """A replica forked by ``fork``, handled as ``subprocess.Popen`` is (``poll``, ``wait``,
    ``terminate``, ``kill``), so the supervisor treats both alike."""

    def __init__(self, pid: int, args: list[str]) -> None:
        self.pid = pid
        self.args = args
        self.returncode: int | None = None

    def poll(self) -> int | None:
        if self.returncode is None:
            pid, status = os.waitpid(self.pid, os.WNOHANG)
            if pid:
                self.returncode = os.waitstatus_to_exitcode(status)
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        deadline = None if timeout is None else time.monotonic() + timeout
        while (code := self.poll()) is None:
            if deadline is not None and time.monotonic() > deadline:
                raise subprocess.TimeoutExpired(self.args, timeout or 0.0)
            time.sleep(0.02)
        return code

    def send_signal(self, signum: int) -> None:
        if self.poll() is None:
            os.kill(self.pid, signum)

    def terminate(self) -> None:
        self.send_signal(signal.SIGTERM)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)


def service_of(cmdline: bytes) -> str | None:
    """The service a process runs, from its ``/proc/PID/cmdline``: "python -m services.triage"
    (a process started on its own) or a forked replica's title "services.triage --port P";
    "a+b" for services run together ("services a b", "services.a --with b")."""
    words = [word.decode() for word in cmdline.replace(b"\0", b" ").split()]
    for i, word in enumerate(words):
        if word.startswith("services."):
            rest = words[i + 1 :]
            together = rest[rest.index("--with") + 1].split(",") if "--with" in rest[:-1] else []
            return "+".join([word.removeprefix("services."), *together])
        if word == "services" and words[i + 1 :]:
            return "+".join(words[i + 1 :])
    return None


def fork(module: str, argv: list[str], env: dict[str, str]) -> Forked:
    """Run ``python -m module *argv`` as a forked replica with environment ``env``."""
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid:
        return Forked(pid, [module, *argv])
    code: int = 1
    try:
        # First: the title takes the memory of the process's arguments and environment, which
        # it can find only while the environment is still the one the process started with.
        setproctitle(" ".join([module, *argv]))
        os.setsid()
        for signum in SUPERVISOR_SIGNALS:
            signal.signal(signum, signal.SIG_DFL)
        os.closerange(3, os.sysconf("SC_OPEN_MAX"))
        os.environ.clear()
        os.environ.update(env)
        get_settings.cache_clear()
        load_pack.cache_clear()
        sys.argv = [module, *argv]
        runpy.run_module(module, run_name="__main__", alter_sys=True)
        code = 0
    except SystemExit as stop:
        if isinstance(stop.code, int) or stop.code is None:
            code = stop.code or 0
        else:
            print(stop.code, file=sys.stderr)
    except BaseException:  # a replica crashed: its traceback, then exit code 1
        traceback.print_exc()
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
