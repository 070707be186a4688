"""The command line reads `.streamlit/secrets.toml` as the app does: a missing file is none, one that exists but
cannot be read (a parse error, not UTF-8, a folder) is bad input, exit 2 with one line naming the file and why,
before anything is opened or asked."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli.test_review import cli_env, santa  # noqa: F401 - the fixture
from tests.support.secrets_files import ROLES_TYPO as TYPO
from tests.support.secrets_files import toml_error


@pytest.mark.parametrize(
    ("kind", "said"),
    [
        pytest.param("typo", f"is not valid TOML: {toml_error(TYPO)}", id="typo"),
        pytest.param("utf-16", "cannot be read: 'utf-8' codec can't decode byte 0xff", id="not-utf-8"),
        pytest.param("folder", "cannot be read: [Errno 21] Is a directory", id="folder"),
    ],
)
def test_a_secrets_file_that_cannot_be_read_is_bad_input(
    cli_env: dict,  # noqa: F811 - a fixture
    tmp_path: Path,
    kind: str,  # noqa: F811
    said: str,
) -> None:
    project = tmp_path / "project"
    secrets = project / ".streamlit" / "secrets.toml"
    secrets.parent.mkdir(parents=True)
    if kind == "typo":
        secrets.write_text(TYPO, encoding="utf-8")
    elif kind == "utf-16":
        secrets.write_bytes('ANTHROPIC_API_KEY = "x"\n'.encode("utf-16"))
    else:
        secrets.mkdir()
    done = santa(cli_env, tmp_path, "Clean copy.", cwd=project)
    assert done.returncode == 2, done.stderr
    [line] = done.stderr.strip().splitlines()
    assert line.startswith(f"santa: .streamlit/secrets.toml {said}"), line
    assert not (tmp_path / "santa.db").exists()  # nothing was opened
