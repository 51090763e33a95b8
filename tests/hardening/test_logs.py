"""The log pipeline as a unit: one JSON object per line, secrets masked, content redacted."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from urllib.parse import quote, quote_plus

import pytest
import structlog

from retrieval_mcp.logs import log_file, redactor
from retrieval_mcp.settings import load_settings

SECRET = "lrm_" + "S3cr3t-_" * 5


def lines(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text("utf-8").splitlines()]


def test_every_value_is_escaped_onto_one_line_and_secrets_are_masked(tmp_path: Path) -> None:
    path = tmp_path / "logs" / "server.log"
    log = structlog.get_logger("retrieval_mcp.test")
    hostile = 'a\nb\r\n{"level": "critical", "event": "forged"}\n\u2028\x00'
    with log_file(path, level="info"):
        log.info("one", note=hostile, token=SECRET, query=hostile, hit_count=3)
        log.warning(f"an event that quotes {SECRET}", detail={"nested": [SECRET]})
        try:
            raise ValueError(f"bad token {SECRET}\nsecond line")
        except ValueError:
            log.exception("crashed")
        logging.getLogger("mcp.server").warning("Invalid Origin header: %s", hostile)
    raw = path.read_text("utf-8")
    assert SECRET not in raw and SECRET[4:] not in raw
    parsed = lines(path)
    assert [p["event"] for p in parsed][:3] == [
        "one",
        "an event that quotes lrm_[redacted]",
        "crashed",
    ]
    first = parsed[0]
    assert first["note"] == hostile  # intact, yet one line
    assert first["token"] == "[redacted]"
    assert first["query"] == f"[redacted: {len(hostile)}]"  # content is off by default
    assert first["hit_count"] == 3  # numbers are not content
    assert parsed[1]["detail"] == {"nested": ["lrm_[redacted]"]}
    crash = str(parsed[2]["exception"])
    assert crash.endswith("\nValueError: [message redacted]")  # the message, not the frames
    assert "test_logs.py" in crash  # the frames stay: the operator can still find the bug
    assert parsed[3]["logger"] == "mcp.server" and parsed[3]["level"] == "warning"
    assert not any(p.get("event") == "forged" for p in parsed)


def test_log_content_keeps_messages_but_never_secrets(tmp_path: Path) -> None:
    path = tmp_path / "debug.log"
    log = structlog.get_logger("retrieval_mcp.test")
    with log_file(path, level="info", log_content=True):
        try:
            try:
                raise KeyError("inner")
            except KeyError as exc:
                raise ValueError(f"outer {SECRET}") from exc
        except ValueError:
            log.exception("crashed", query="boiler")
    [line] = lines(path)
    assert line["query"] == "boiler"
    assert "KeyError: 'inner'" in str(line["exception"])
    assert "ValueError: outer lrm_[redacted]" in str(line["exception"])


def test_redactor_keeps_content_when_asked_but_never_secrets() -> None:
    redact = redactor(log_content=True)
    event = redact(None, "info", {"query": "boiler", "authorization": f"Bearer {SECRET}"})
    assert event == {"query": "boiler", "authorization": "[redacted]"}
    event = redact(None, "info", {"arguments": {"query": SECRET}})
    assert event == {"arguments": {"query": "lrm_[redacted]"}}


class _Credentials:
    """An object whose repr carries a secret, as a client library's might."""

    def __init__(self, key: str) -> None:
        self.key = key

    def __repr__(self) -> str:
        return f"Credentials(key={self.key!r})"


@pytest.mark.parametrize("log_content", [False, True])
def test_every_secret_the_settings_load_is_masked_wherever_it_appears(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, log_content: bool
) -> None:
    """Backend API keys, Databricks PATs and client secrets, Azure keys, Postgres
    passwords and OpenAI-compatible keys, read from the environment and from 0600 files
    the way the adapters read them, then logged in every shape we could think of."""
    tag = "content" if log_content else "quiet"
    values = {
        "databricks_pat": f"dapi{tag}0123456789abcdef",
        "azure_key": f"AzUrE+{tag}/Key==",  # '+', '/', '=': URL-encoding changes it
        "qdrant_key": f"qd-{tag}-secret-key",
        "openai_key": f"sk-{tag}-proj-abcdefghijkl",
    }
    monkeypatch.setenv("DATABRICKS_TOKEN", values["databricks_pat"])
    monkeypatch.setenv("AZURE_SEARCH_API_KEY", values["azure_key"])
    monkeypatch.setenv("LRM_TEST_QDRANT_KEY", values["qdrant_key"])
    monkeypatch.setenv("LRM_TEST_OPENAI_KEY", values["openai_key"])
    files = {"pg_password": f"pg {tag} pässword!", "client_secret": f"dose{tag}ClientSecret9"}
    for name, value in files.items():
        (tmp_path / name).write_text(value + "\n")
        (tmp_path / name).chmod(0o600)
    settings = load_settings(
        state_dir=tmp_path / "st",
        overrides={
            "backend": {
                "databricks": {"client_secret": {"file": str(tmp_path / "client_secret")}},
                "postgres": {"password": {"file": str(tmp_path / "pg_password")}},
                "qdrant_remote": {"api_key": {"env": "LRM_TEST_QDRANT_KEY"}},
            },
            "encoder": {"openai": {"api_key": {"env": "LRM_TEST_OPENAI_KEY"}}},
        },
    )
    backend = settings.backend
    read = [
        backend.databricks.token.read("backend.databricks.token"),
        backend.databricks.client_secret.read("backend.databricks.client_secret"),
        backend.azure_search.api_key.read("backend.azure_search.api_key"),
        backend.postgres.password.read("backend.postgres.password"),
        backend.qdrant_remote.api_key.read("backend.qdrant_remote.api_key"),
        settings.encoder.openai.api_key.read("encoder.openai.api_key"),
    ]
    secrets = [s for s in read if s is not None]
    assert sorted(secrets) == sorted([*values.values(), *files.values()])

    path = tmp_path / "logs" / "server.log"
    log = structlog.get_logger("retrieval_mcp.test")
    stdlib = logging.getLogger("httpx")  # a library's own logger
    with log_file(path, level="debug", log_content=log_content):
        for secret in secrets:
            log.info(f"connecting with {secret}")
            log.info("request", headers={"x-api-key": secret}, args=[("k", secret)])
            log.info("odd", dsn=f"postgresql://app:{quote(secret, safe='')}@db/app")
            log.info("objects", client=_Credentials(secret), raw=secret.encode(), s={secret})
            log.info("keyed", **{f"field_{secret[:3]}": {secret: 1}})
            stdlib.warning("HTTP Request: GET https://x/?key=%s", quote_plus(secret))
            try:
                raise RuntimeError(f"401 from backend for key {secret}")
            except RuntimeError:
                log.exception("backend_failed")
    raw = path.read_text("utf-8")
    assert raw.count("\n") >= len(secrets) * 7  # every line was written...
    for secret in secrets:  # ...and none holds a secret, raw or URL-encoded
        for form in {secret, quote(secret, safe=""), quote_plus(secret)}:
            assert form not in raw, (form, log_content)
    assert "[redacted]" in raw


def test_each_file_renders_a_record_its_own_way_and_still_rotates(tmp_path: Path) -> None:
    """A record is formatted once per handler (ADR 0025's hot path), never once for all:
    a content-logging file and a redacting one given the same record each keep their
    rule, and the size check that rotates a file reads that file's own line."""
    plain, debug = tmp_path / "plain.log", tmp_path / "debug.log"
    log = structlog.get_logger("retrieval_mcp.test")
    with (
        log_file(plain, level="info", max_bytes=4_000, backups=2),
        log_file(debug, level="info", log_content=True),
    ):
        for n in range(80):
            log.info("tool_call", query=f"query number {n} " + "x" * 100, hit_count=n)
    assert str(lines(debug)[0]["query"]).startswith("query number 0 ")
    assert lines(plain)[-1]["query"] == f"[redacted: {len('query number 79 ') + 100}]"
    rotated = sorted(tmp_path.glob("plain.log.*"))
    assert [p.name for p in rotated] == ["plain.log.1", "plain.log.2"]
    for path in (plain, *rotated):
        assert 0 < path.stat().st_size <= 4_000
    assert len(lines(debug)) == 80


def test_a_log_path_that_is_not_a_regular_file_is_never_rotated(tmp_path: Path) -> None:
    """bpo-45401: rotating a device would rename it. Asked once, when the file opens."""
    from retrieval_mcp.logs import PrivateRotatingFileHandler

    handler = PrivateRotatingFileHandler(Path("/dev/null"), maxBytes=10, backupCount=1)
    try:
        record = logging.LogRecord("x", logging.INFO, __file__, 1, "y" * 100, None, None)
        assert handler.shouldRollover(record) is False
        handler.emit(record)  # writes, does not rename /dev/null
        assert Path("/dev/null").exists() and not Path("/dev/null").is_file()
    finally:
        handler.close()
