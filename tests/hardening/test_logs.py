"""The log pipeline as a unit: one JSON object per line, secrets masked, content redacted."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import structlog

from retrieval_mcp.logs import log_file, redactor

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
