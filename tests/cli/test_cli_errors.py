"""Every command ends in one line and an exit code, never a traceback."""

from __future__ import annotations

import argparse
import importlib
import json
import os
from pathlib import Path

import pytest

from retrieval_mcp.cli import main

# The package re-exports ``main``, which shadows the module of the same name.
cli_main = importlib.import_module("retrieval_mcp.cli.main")


def copy_dir(root: Path, text: str) -> Path:
    directory = root / "copy"
    directory.mkdir(mode=0o755)
    directory.chmod(0o755)
    (directory / "copy.toml").write_text(text)
    (directory / "copy.toml").chmod(0o644)
    return directory


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ("tools = 5\n", "tools: expected a table, got an integer"),
        ("[tools.search]\nname = { a = 1 }\n", "tools.search.name: expected a string, got a table"),
        ("[tools.search]\nparams = 5\n", "tools.search.params: expected a table, got an integer"),
        ("[tools.search\n", "not valid UTF-8 TOML"),
    ],
)
def test_config_check_prints_one_line_naming_file_and_field(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str, needle: str
) -> None:
    directory = copy_dir(tmp_path, text)
    code = main(["config", "check", str(directory), "--state-dir", str(tmp_path / "st")])
    out, err = capsys.readouterr()
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith("error [copy_rejected]: ")
    assert str((directory / "copy.toml").resolve()) in err and needle in err
    assert "Traceback" not in err


def test_config_check_accepts_a_good_directory(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    directory = copy_dir(tmp_path, '[tools.search]\nname = "search_docs"\n')
    assert main(["config", "check", str(directory), "--state-dir", str(tmp_path / "st")]) == 0
    assert capsys.readouterr().out.startswith("ok: 6 tools, hash ")


def test_a_bad_settings_file_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    settings = tmp_path / "server.toml"
    for content in [b"\xff\xfe", b"[server]\nport = { a = 1 }\n", b"a = " + b"[" * 5000]:
        settings.write_bytes(content)
        code = main(["token", "list", "--config", str(settings), "--state-dir", str(tmp_path)])
        err = capsys.readouterr().err
        assert code == 2 and err.count("\n") == 1 and "Traceback" not in err, err
        assert str(settings) in err or "invalid settings" in err


def test_an_unexpected_error_is_one_line_naming_the_log(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(args: argparse.Namespace) -> int:
        raise ExceptionGroup("nursery", [ZeroDivisionError("secret lrm_abcdefghijkl in here")])

    monkeypatch.setattr(cli_main, "cmd_status", broken)
    state = tmp_path / "st"
    code = main(["status", "--state-dir", str(state)])
    err = capsys.readouterr().err
    log = state / "logs" / "cli.log"
    assert code == 1 and err.count("\n") == 1 and "Traceback" not in err
    assert err.startswith("error [internal_error]: unexpected ZeroDivisionError in 'status'")
    assert str(log) in err
    assert oct(os.stat(state).st_mode & 0o777) == "0o700"
    [line] = [json.loads(raw) for raw in log.read_text().splitlines()]
    assert line["event"] == "command_crashed" and "ZeroDivisionError" in line["exception"]
    assert "lrm_abcdefghijkl" not in log.read_text()


def test_interrupts_exit_130(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def interrupted(args: argparse.Namespace) -> int:
        raise BaseExceptionGroup("nursery", [KeyboardInterrupt()])

    monkeypatch.setattr(cli_main, "cmd_status", interrupted)
    assert main(["status", "--state-dir", str(tmp_path)]) == 130
