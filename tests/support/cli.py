"""The command line run in this process: the same `main` the `santa` script calls, with the environment,
working folder and standard streams of a real call, and its exit code.

Why in process: each real call starts Python and imports the SDK and the storage (about 3 s of CPU);
the suite makes hundreds. tests/cli/test_entrypoints.py, test_crash.py and a few others keep real
processes (both entry points, signals, kills), so the process boundary stays covered; most of those are forked
from a helper that has the product imported (tests/support/forked.py), `review` starts fresh through both.
"""

from __future__ import annotations

import io
import os
import subprocess
from collections.abc import Sequence
from contextlib import chdir, redirect_stderr, redirect_stdout
from pathlib import Path
from unittest import mock

from desk.cli import main


def santa_in_process(
    args: Sequence[str | Path], env: dict[str, str], cwd: Path | str, binary: bool = False
) -> subprocess.CompletedProcess:
    """`python -m santa_core *args` with exactly `env` as the environment, in `cwd`; output as text (or bytes)."""
    out, err = io.TextIOWrapper(io.BytesIO(), encoding="utf-8"), io.StringIO()
    argv = [str(a) for a in args]
    with mock.patch.dict(os.environ, env, clear=True), chdir(cwd), redirect_stdout(out), redirect_stderr(err):
        try:
            code = main(argv)
        except SystemExit as exc:  # argparse's --help
            code = exc.code if isinstance(exc.code, int) else 0
        out.flush()
    stdout = out.buffer.getvalue()
    stderr = err.getvalue()
    if binary:
        return subprocess.CompletedProcess(["santa", *argv], code, stdout, stderr.encode("utf-8"))
    return subprocess.CompletedProcess(["santa", *argv], code, stdout.decode("utf-8"), stderr)
