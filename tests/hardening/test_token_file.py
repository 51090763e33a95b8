"""The token file: format 2, migration of format 1, create/rotate/revoke/list, the CLI."""

from __future__ import annotations

import json
import os
import stat
import time
from pathlib import Path

import pytest

from retrieval_mcp.cli import main
from retrieval_mcp.errors import ConfigError
from retrieval_mcp.transport.bearer_tokens import (
    FILE_FORMAT,
    TokenVerifier,
    digest,
    ensure_token_file,
    load_tokens,
)
from retrieval_mcp.transport.caller import Caller
from retrieval_mcp.transport.token_admin import (
    TokenCommandError,
    create_token,
    list_tokens,
    parse_duration,
    revoke_token,
    rotate_token,
)


@pytest.fixture
def token_path(tmp_path: Path) -> Path:
    state = tmp_path / "state"
    state.mkdir(mode=0o700)
    return state / "tokens.json"


def test_format_1_is_read_and_rewritten_as_format_2_by_the_first_change(token_path: Path) -> None:
    secret = "lrm_" + "a" * 43
    token_path.write_text(
        json.dumps(
            {"format": 1, "tokens": [{"name": "default", "sha256": digest(secret), "created": 1.0}]}
        )
    )
    token_path.chmod(0o600)
    tokens = load_tokens(token_path)
    assert TokenVerifier(tokens).verify(secret) == Caller("default")
    assert json.loads(token_path.read_text())["format"] == 1  # reading never writes
    create_token(token_path, "ci", ["docs"])
    data = json.loads(token_path.read_text())
    assert data["format"] == FILE_FORMAT == 2
    assert [t["name"] for t in data["tokens"]] == ["default", "ci"]
    assert TokenVerifier(load_tokens(token_path)).verify(secret) == Caller("default")
    assert stat.S_IMODE(os.stat(token_path).st_mode) == 0o600


@pytest.mark.parametrize(
    "body",
    [
        "not json",
        '{"format": 3, "tokens": []}',
        '{"format": 2}',
        '{"format": 2, "tokens": [{"name": "x", "created": 1, "secrets": []}]}',
        '{"format": 2, "tokens": [{"name": "Bad Name", "created": 1, '
        '"secrets": [{"sha256": "' + "0" * 64 + '", "created": 1}]}]}',
        '{"format": 2, "tokens": [{"name": "x", "created": 1, "extra": 1, '
        '"secrets": [{"sha256": "' + "0" * 64 + '", "created": 1}]}]}',
        '{"format": 2, "tokens": [{"name": "x", "created": 1, "sources": [], '
        '"secrets": [{"sha256": "' + "0" * 64 + '", "created": 1}]}]}',
    ],
)
def test_invalid_files_are_refused_with_a_remedy(token_path: Path, body: str) -> None:
    token_path.write_text(body)
    token_path.chmod(0o600)
    with pytest.raises(ConfigError, match="cannot read the token file") as caught:
        load_tokens(token_path)
    assert caught.value.remedy


def test_a_0644_token_file_or_0755_directory_is_refused(token_path: Path) -> None:
    ensure_token_file(token_path)
    token_path.chmod(0o644)
    with pytest.raises(ConfigError, match="accessible by group or others") as caught:
        load_tokens(token_path)
    assert caught.value.remedy == f"chmod 600 {token_path}"
    token_path.chmod(0o600)
    token_path.parent.chmod(0o755)
    with pytest.raises(ConfigError, match="mode 0755") as caught:
        load_tokens(token_path)
    assert caught.value.remedy == f"chmod 700 {token_path.parent}"


def test_create_scoped_rotate_with_grace_and_revoke(token_path: Path) -> None:
    now = time.time()
    desktop = create_token(token_path, "desktop", now=now)
    ci = create_token(token_path, "ci", ["tiny", "tiny", " docs "], now=now)
    assert desktop.startswith("lrm_") and len(desktop) > 40
    verifier = TokenVerifier(load_tokens(token_path))
    assert verifier.verify(ci) == Caller("ci", frozenset({"tiny", "docs"}))
    assert verifier.verify(desktop, now) == Caller("desktop")
    assert secrets_absent(token_path, desktop, ci)

    new = rotate_token(token_path, "desktop", grace_s=60, now=now)
    verifier = TokenVerifier(load_tokens(token_path))
    assert verifier.verify(new, now) == verifier.verify(desktop, now + 59) == Caller("desktop")
    assert verifier.verify(desktop, now + 60) is None  # the grace period is over
    assert verifier.verify(new, now + 10**6) == Caller("desktop")
    [row] = [r for r in list_tokens(token_path, now=now) if r["name"] == "desktop"]
    assert row["secrets"] == 2 and row["old_secret_expires"] is not None
    assert "sha256" not in json.dumps(list_tokens(token_path))

    newer = rotate_token(token_path, "desktop", grace_s=0, now=now + 1)
    verifier = TokenVerifier(load_tokens(token_path))
    assert verifier.verify(new, now + 1) is None and verifier.verify(newer, now + 1)

    revoke_token(token_path, "ci")
    assert TokenVerifier(load_tokens(token_path)).verify(ci) is None
    assert [r["name"] for r in list_tokens(token_path)] == ["desktop"]


def secrets_absent(path: Path, *secrets: str) -> bool:
    text = path.read_text()
    return not any(s in text or s[4:] in text for s in secrets)


def test_rotation_keeps_a_bounded_number_of_secrets(token_path: Path) -> None:
    create_token(token_path, "cli")
    for _ in range(10):
        rotate_token(token_path, "cli", grace_s=3600)
    [record] = load_tokens(token_path).tokens
    assert len(record.secrets) == 4


def test_command_errors_name_the_fix(token_path: Path) -> None:
    create_token(token_path, "cli")
    with pytest.raises(TokenCommandError, match="exists"):
        create_token(token_path, "cli")
    with pytest.raises(TokenCommandError, match="no token named 'nope'"):
        rotate_token(token_path, "nope", 1)
    with pytest.raises(TokenCommandError, match="no token named"):
        revoke_token(token_path, "nope")
    with pytest.raises(TokenCommandError, match="invalid token name"):
        create_token(token_path, "../evil")
    with pytest.raises(TokenCommandError, match="empty scope"):
        create_token(token_path, "empty", [" ", ""])
    assert [parse_duration(d) for d in ("90", "90s", "15m", "1.5h", "2d")] == [
        90,
        90,
        900,
        5400,
        172800,
    ]
    with pytest.raises(TokenCommandError):
        parse_duration("soon")


def test_token_cli_prints_the_secret_once_and_never_lists_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    state = ["--state-dir", str(tmp_path / "st")]
    assert main(["token", "create", "ci", "--sources", "tiny,docs", *state]) == 0
    out = capsys.readouterr().out
    secret = out.split("Bearer ", 1)[1].split()[0]
    assert secret.startswith("lrm_") and "shown once" in out
    assert stat.S_IMODE(os.stat(tmp_path / "st").st_mode) == 0o700
    assert main(["token", "rotate", "ci", "--grace", "0", *state]) == 0
    rotated = capsys.readouterr().out.split("Bearer ", 1)[1].split()[0]
    assert rotated != secret
    assert main(["token", "list", *state]) == 0
    listing = json.loads(capsys.readouterr().out)
    assert listing["tokens"][0]["name"] == "ci"
    assert listing["tokens"][0]["sources"] == ["tiny", "docs"]
    assert secret not in json.dumps(listing) and rotated not in json.dumps(listing)
    assert main(["token", "revoke", "ci", *state]) == 0
    assert main(["token", "revoke", "ci", *state]) == 2
    assert "token_error" in capsys.readouterr().err
