"""Command-line, worker and app processes forked from one interpreter that has already imported the product.

Why: a fresh `python -m santa_core review` or `worker` spends about 3 s of CPU importing the SDKs, the storage
and the method before it does anything; the crash, worker and outage tests start dozens. Here one helper
process per test process (the "zygote", started on first use) imports all that once; each command is then a
`fork()` of it: a real OS process with its own pid, environment, working folder, standard streams, session,
signals and exit code, that runs the very code `python -m santa_core ...`, the `santa` script or `python -c`
runs after its imports. Tests kill it, signal it and read its claims by pid exactly as before.

What it does not cover is the interpreter's start and the imports themselves: tests/cli/test_entrypoints.py
starts `review` through both entry points as fresh interpreters, and tests/workers/test_screen_worker.py starts
its worker as one (`start_worker(..., fresh=True)`), so every entry point still has a real process start.

Protocol: a SEQPACKET socket pair. A request carries the argv, environment, folder and session choice, with
the three standard-stream file descriptors attached; the zygote answers with the child's pid, and later with
its wait status when it ends (the zygote is its parent and reaps it).
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import IO, Any

REPO = Path(__file__).resolve().parents[2]
SANTA_SCRIPT = Path(sys.executable).with_name("santa")
PRELOAD = (
    "anthropic",
    "openai",
    "desk.cli",
    "desk.wiring",
    "desk.workers",
    "desk.connection",
    "desk.clients",
    "desk.task_engine",
    "desk.outage",
    "santa_core.reviewers.anthropic",
    "santa_core.reviewers.openai_compat",
)
"""What a command or worker process imports before its first line of work (the rest is imported lazily, as in
a fresh process)."""

SETTINGS = ("SANTA_", "DATABASE_", "ANTHROPIC_", "OPENAI_")
"""Environment variables the product reads: the helper notes which of them its imports read."""


def _reread_outage_hold() -> None:
    from desk.outage import OUTAGE, hold_s

    OUTAGE.hold_s = hold_s()


READ_AT_IMPORT: dict[str, Callable[[], None]] = {"SANTA_OUTAGE_HOLD_S": _reread_outage_hold}
"""Settings the product reads while it is imported, and how a child reads them again from its own environment
(`desk.outage.OUTAGE` is built at import). A child whose environment differs from the helper's in any other setting
read at import (IMPORT_READS) ends at once with exit code 70, saying which: it must be started fresh."""
IMPORT_READS: dict[str, str | None] = {}
"""Settings (SETTINGS) the helper's imports read, with the value they saw (None: unset)."""

# --- the zygote (runs in the helper process) ---------------------------------------------------------------


def serve(fd: int) -> None:
    """Import the product, then fork one child per request until the test process closes its end."""
    import gc
    import importlib
    import select

    original = os._Environ.__getitem__  # what os.environ[...], .get and os.getenv all go through

    def noting(self: Any, key: Any) -> Any:
        if isinstance(key, str) and key.startswith(SETTINGS):
            try:
                IMPORT_READS[key] = original(self, key)
            except KeyError:
                IMPORT_READS[key] = None
        return original(self, key)

    os._Environ.__getitem__ = noting  # type: ignore[method-assign]
    try:
        for name in PRELOAD:
            importlib.import_module(name)
    finally:
        os._Environ.__getitem__ = original  # type: ignore[method-assign]
    gc.collect()
    gc.freeze()  # the children share these pages instead of copying them on the collector's first pass
    control = socket.socket(fileno=fd)
    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_w, False)
    signal.set_wakeup_fd(wake_w)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    control.send(b"ready")
    while True:
        ready, _, _ = select.select([control, wake_r], [], [])
        if wake_r in ready:
            os.read(wake_r, 4096)
            report_exits(control)
        if control not in ready:
            continue
        message, fds, _, _ = socket.recv_fds(control, 1 << 20, 3)
        if not message:
            return  # the test process is gone
        request = json.loads(message)
        pid = os.fork()
        if pid == 0:
            control.close()
            os.close(wake_r)
            os.close(wake_w)
            become(request, fds)  # raises SystemExit: the interpreter ends as a fresh one would
        for received in fds:
            os.close(received)
        control.send(json.dumps({"spawned": pid}).encode())
        report_exits(control)


def report_exits(control: socket.socket) -> None:
    """Reap every ended child and tell the test process its wait status."""
    while True:
        try:
            pid, status, usage = os.wait4(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        cpu = usage.ru_utime + usage.ru_stime
        control.send(json.dumps({"exited": pid, "code": os.waitstatus_to_exitcode(status), "cpu": cpu}).encode())


def become(request: dict[str, Any], fds: list[int]) -> None:
    """In the forked child: take the request's streams, session, folder and environment, then run it."""
    signal.set_wakeup_fd(-1)
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    if request["new_session"]:
        os.setsid()
    for target, received in enumerate(fds):
        os.dup2(received, target)
        os.close(received)
    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(request["env"])
    for key, seen in IMPORT_READS.items():
        if key in READ_AT_IMPORT:
            READ_AT_IMPORT[key]()
        elif os.environ.get(key) != seen:  # the SDKs read a few (ANTHROPIC_LOG, OPENAI_API_TYPE...): none set here
            sys.stderr.write(f"forked: {key} was read at import with another value; start this process fresh\n")
            os._exit(70)
    kind, args = request["kind"], request["args"]
    if kind == "code":  # python -c CODE ARGS...
        sys.argv = ["-c", *args[1:]]
        sys.path[0] = ""
        exec(compile(args[0], "<string>", "exec"), {"__name__": "__main__", "__builtins__": __builtins__})
        raise SystemExit(0)
    if kind == "script":  # the `santa` console script, as its own file says
        sys.argv = [str(SANTA_SCRIPT), *args]
        sys.path[0] = str(SANTA_SCRIPT.parent)
        code = compile(SANTA_SCRIPT.read_text(encoding="utf-8"), str(SANTA_SCRIPT), "exec")
        exec(code, {"__name__": "__main__", "__file__": str(SANTA_SCRIPT), "__builtins__": __builtins__})
        raise SystemExit(0)
    from santa_core.__main__ import main  # python -m santa_core ARGS...

    sys.argv = [str(REPO / "santa_core" / "__main__.py"), *args]
    sys.path[0] = os.getcwd()
    raise SystemExit(main())


# --- the test process's side ---------------------------------------------------------------------------------


class Zygote:
    """The helper process and a thread reading its answers."""

    def __init__(self) -> None:
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        env = {k: v for k, v in os.environ.items() if not k.startswith(("SANTA_", "ANTHROPIC_", "OPENAI_"))}
        env.pop("DATABASE_URL", None)
        env["PYTHONPATH"] = str(REPO)
        code = f"from tests.support.forked import serve; serve({theirs.fileno()})"
        self.proc = subprocess.Popen(
            [sys.executable, "-c", code],
            env=env,
            cwd=REPO,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,  # not a terminal, as the pipes and files the commands write to
            pass_fds=[theirs.fileno()],
        )
        theirs.close()
        self.control = ours
        self.lock = threading.Lock()
        self.changed = threading.Condition()
        self.spawned: list[int] = []
        self.exits: dict[int, int] = {}
        self.gone = False
        self.cpu_s = 0.0
        """CPU seconds (user + system) of the children that ended: they are not this process's children, so
        `resource.getrusage(RUSAGE_CHILDREN)` counts them only once the helper itself is waited for."""
        if self.control.recv(64) != b"ready":
            raise RuntimeError("the fork helper did not start")
        threading.Thread(target=self.read, name="zygote-reader", daemon=True).start()

    def read(self) -> None:
        while True:
            try:
                message = self.control.recv(1 << 16)
            except OSError:
                message = b""
            if not message:  # the helper is gone: no child it started can be waited for any more
                with self.changed:
                    self.gone = True
                    self.changed.notify_all()
                return
            answer = json.loads(message)
            with self.changed:
                if "spawned" in answer:
                    self.spawned.append(answer["spawned"])
                else:
                    self.exits[answer["exited"]] = answer["code"]
                    self.cpu_s += answer["cpu"]
                self.changed.notify_all()

    def spawn(
        self, kind: str, args: Sequence[str], env: dict[str, str], cwd: Path | str, fds: list[int], new_session: bool
    ) -> int:
        request = {"kind": kind, "args": list(args), "env": env, "cwd": str(cwd), "new_session": new_session}
        with self.lock:
            socket.send_fds(self.control, [json.dumps(request).encode()], fds)
            with self.changed:
                if not self.changed.wait_for(lambda: self.spawned or self.gone, timeout=60) or self.gone:
                    raise RuntimeError("the fork helper did not answer")
                return self.spawned.pop(0)

    def wait(self, pid: int, timeout: float | None) -> int | None:
        with self.changed:
            self.changed.wait_for(lambda: pid in self.exits or self.gone, timeout=timeout)
            if pid not in self.exits and self.gone:
                raise RuntimeError(f"the fork helper ended before its child {pid}")
            return self.exits.get(pid)

    def close(self) -> None:
        self.control.shutdown(socket.SHUT_WR)  # the helper reads its end and leaves
        try:
            self.proc.wait(30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(10)


_zygote: Zygote | None = None
_zygote_lock = threading.Lock()


def zygote() -> Zygote:
    """This test process's helper, started on first use."""
    global _zygote
    with _zygote_lock:
        if _zygote is None or _zygote.proc.poll() is not None:
            _zygote = Zygote()
            import atexit

            atexit.register(_zygote.close)
        return _zygote


Stream = int | IO[Any] | None


class Forked:
    """What `subprocess.Popen` offers the tests (pid, poll, wait, signals, pipes, communicate) for a forked child."""

    def __init__(
        self,
        kind: str,
        args: Sequence[str | Path],
        env: dict[str, str],
        cwd: Path | str,
        stdin: Stream = None,
        stdout: Stream = None,
        stderr: Stream = None,
        text: bool = False,
        start_new_session: bool = False,
    ) -> None:
        self.args = [str(a) for a in args]
        self.returncode: int | None = None
        self.stdin: IO[Any] | None = None
        self.stdout: IO[Any] | None = None
        self.stderr: IO[Any] | None = None
        theirs: list[int] = []
        to_close: list[int] = []
        for n, (choice, name) in enumerate(((stdin, "stdin"), (stdout, "stdout"), (stderr, "stderr"))):
            if choice is None:
                theirs.append(n)
            elif choice == subprocess.DEVNULL:
                fd = os.open(os.devnull, os.O_RDWR)
                theirs.append(fd)
                to_close.append(fd)
            elif choice == subprocess.PIPE:
                r, w = os.pipe()
                mine, child = (w, r) if n == 0 else (r, w)
                theirs.append(child)
                to_close.append(child)
                mode = ("w" if n == 0 else "r") + ("" if text else "b")
                setattr(self, name, open(mine, mode, buffering=-1 if text or n else 0))
            elif choice == subprocess.STDOUT:
                theirs.append(theirs[1])
            elif isinstance(choice, int):
                theirs.append(choice)
            else:
                theirs.append(choice.fileno())
        self.zygote = zygote()
        try:
            self.pid = self.zygote.spawn(kind, self.args, env, cwd, theirs, start_new_session)
        finally:
            for fd in to_close:
                os.close(fd)

    def poll(self) -> int | None:
        if self.returncode is None:
            self.returncode = self.zygote.wait(self.pid, 0)
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        if self.returncode is None:
            self.returncode = self.zygote.wait(self.pid, timeout)
        if self.returncode is None:
            raise subprocess.TimeoutExpired(self.args, timeout or 0)
        return self.returncode

    def send_signal(self, sig: int) -> None:
        if self.poll() is None:
            try:
                os.kill(self.pid, sig)
            except ProcessLookupError:
                pass

    def terminate(self) -> None:
        self.send_signal(signal.SIGTERM)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)

    def communicate(self, input: str | bytes | None = None, timeout: float | None = None) -> tuple[Any, Any]:
        """Read both pipes to their end (each on a thread, as `Popen.communicate` does), then wait."""
        results: dict[str, Any] = {}

        def drain(name: str, stream: IO[Any]) -> None:
            results[name] = stream.read()
            stream.close()

        readers = [
            threading.Thread(target=drain, args=(name, stream), daemon=True)
            for name, stream in (("out", self.stdout), ("err", self.stderr))
            if stream is not None
        ]
        for reader in readers:
            reader.start()
        if self.stdin is not None:
            if input:
                self.stdin.write(input)
            self.stdin.close()
        for reader in readers:
            reader.join(timeout)
            if reader.is_alive():
                raise subprocess.TimeoutExpired(self.args, timeout or 0)
        self.wait(timeout)
        return results.get("out"), results.get("err")

    def __enter__(self) -> Forked:
        return self

    def __exit__(self, *exc: object) -> None:
        for stream in (self.stdin, self.stdout, self.stderr):
            if stream is not None:
                stream.close()
        self.wait()


def santa(args: Sequence[str | Path], **kwargs: Any) -> Forked:
    """`python -m santa_core *args`, forked (keyword arguments as `subprocess.Popen` takes them)."""
    return Forked("module", args, **kwargs)


def santa_script(args: Sequence[str | Path], **kwargs: Any) -> Forked:
    """The `santa` console script with `args`, forked."""
    return Forked("script", args, **kwargs)


def python_code(code: str, args: Sequence[str | Path] = (), **kwargs: Any) -> Forked:
    """`python -c code *args`, forked."""
    return Forked("code", [code, *args], **kwargs)


def run(
    forked: Forked,
    timeout: float | None = None,
    input: str | bytes | None = None,
) -> subprocess.CompletedProcess:
    """Wait for `forked` as `subprocess.run(..., capture_output=True)` does; kill it when it overstays."""
    try:
        out, err = forked.communicate(input, timeout)
    except subprocess.TimeoutExpired:
        forked.kill()
        forked.wait(30)
        raise
    return subprocess.CompletedProcess(forked.args, forked.wait(), out, err)


def capture(text: bool) -> dict[str, Any]:
    """The keyword arguments of `capture_output=True`."""
    return {"stdout": subprocess.PIPE, "stderr": subprocess.PIPE, "text": text}
