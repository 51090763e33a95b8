"""Structured logs: one JSON object per line, to a rotating file and (on a terminal) stderr.

Every line — ours through structlog, and the libraries' through stdlib ``logging`` (the
MCP SDK, Hypercorn) — is rendered by ``json.dumps``, which escapes newlines and quotes,
so no value a client sends can start a second line or forge a field: log injection is
impossible by construction (``tests/hardening/test_logs.py`` proves it with a hostile
query).

What is never logged:

- secrets: values under ``token``/``secret``/``authorization``/``password`` keys are
  replaced; anything shaped like an ``lrm_`` secret is masked wherever it appears
  (event text, exception messages); and the *value* of every credential the settings
  load (backend API keys, PATs, client secrets, passwords: ``SecretRef.read`` calls
  ``register_secret``) is masked wherever it appears — under any key, nested, in an
  exception message, in an object's repr — always, whatever ``log_content`` says;
- content: query text, tool arguments and retrieved text (keys in ``CONTENT_KEYS``) are
  replaced by their length unless ``logging.log_content`` is on (debugging only); so
  are exception messages in tracebacks (they may quote a value), which keep their
  exception types and stack frames.

``configure_logging`` is process-wide (the CLI calls it once); ``log_file`` attaches the
rotating file for as long as a server runs.
"""

from __future__ import annotations

import logging
import logging.handlers
import os
import re
import sys
import traceback
from collections.abc import Iterator, MutableMapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Literal
from urllib.parse import quote, quote_plus

import structlog
from structlog.typing import Processor

_LEVELS = {
    "debug": logging.DEBUG,
    "info": logging.INFO,
    "warning": logging.WARNING,
    "error": logging.ERROR,
}
#: Keys whose values are agent content: redacted unless ``log_content`` is on.
CONTENT_KEYS = frozenset(
    {"query", "text", "arguments", "snippet", "passages", "hits", "chunks", "body"}
)
#: Keys whose values are secrets: redacted always.
SECRET_KEYS = frozenset({"token", "secret", "authorization", "password", "bearer"})
SECRET_PATTERN = re.compile(r"lrm_[A-Za-z0-9_\-]{6,}")
_CONTENT_TYPES = (str, bytes, list, tuple, dict)
_HANDLER_TAG = "_retrieval_mcp_handler"

_configured = False


#: Shorter values are not registered: masking "abc" everywhere would garble the log and
#: a secret that short is no secret. (Settings refuse empty credentials already.)
MIN_SECRET_CHARS = 6
_secret_values: set[str] = set()
_secret_pattern: re.Pattern[str] | None = None


def register_secret(value: str) -> None:
    """Mask ``value`` (and its URL-encoded form) in every log line from now on.

    Called where a credential is read, so no caller can forget it. Process-wide: a
    secret once read stays masked for the life of the process."""
    global _secret_pattern
    value = value.strip()
    if len(value) < MIN_SECRET_CHARS:
        return
    variants = {value, quote(value, safe=""), quote_plus(value)}
    if variants <= _secret_values:
        return
    _secret_values.update(variants)
    # Longest first, so a secret that contains another is masked whole.
    ordered = sorted(_secret_values, key=len, reverse=True)
    _secret_pattern = re.compile("|".join(re.escape(v) for v in ordered))


def _mask_text(text: str) -> str:
    text = SECRET_PATTERN.sub("lrm_[redacted]", text)
    pattern = _secret_pattern
    return pattern.sub("[redacted]", text) if pattern is not None else text


def _mask(value: Any) -> Any:
    if isinstance(value, str):
        return _mask_text(value)
    if value is None or isinstance(value, bool | int | float):
        return value
    if isinstance(value, dict):
        return {_mask(k) if isinstance(k, str) else k: _mask(v) for k, v in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        return [_mask(v) for v in value]
    # Anything else would be rendered by repr() after this processor: render it here,
    # so a secret inside an object's repr (or bytes) is masked too.
    return _mask_text(repr(value))


def redactor(log_content: bool) -> Processor:
    """A processor that removes secrets always and content unless ``log_content``."""

    def redact(_: Any, __: str, event: MutableMapping[str, Any]) -> MutableMapping[str, Any]:
        for key, value in list(event.items()):
            if key in SECRET_KEYS:
                event[key] = "[redacted]"
            elif key in CONTENT_KEYS and not log_content and isinstance(value, _CONTENT_TYPES):
                event[key] = f"[redacted: {len(value)}]"  # counts stay, content goes
            else:
                event[key] = _mask(value)
        return event

    return redact


def _traceback_without_messages(error: BaseException) -> str:
    """A traceback with every frame and exception type, and no exception message."""
    parts: list[str] = []

    def walk(exc: traceback.TracebackException) -> None:
        if exc.__cause__ is not None:
            walk(exc.__cause__)
            parts.append("\nThe above exception was the direct cause of the following:\n\n")
        elif exc.__context__ is not None and not exc.__suppress_context__:
            walk(exc.__context__)
            parts.append("\nDuring handling of the above exception, another occurred:\n\n")
        parts.append("Traceback (most recent call last):\n")
        parts.extend(exc.stack.format())
        name = exc.exc_type.__qualname__ if exc.exc_type is not None else "Exception"
        parts.append(f"{name}: [message redacted]\n")

    walk(traceback.TracebackException.from_exception(error))
    return "".join(parts).rstrip("\n")


def _redact_exception(_: Any, __: str, event: MutableMapping[str, Any]) -> MutableMapping[str, Any]:
    info = event.pop("exc_info", None)
    if info is True:
        info = sys.exc_info()
    if isinstance(info, tuple):
        info = info[1]
    if isinstance(info, BaseException):
        event["exception"] = _traceback_without_messages(info)
    return event


def _formatter(log_content: bool) -> structlog.stdlib.ProcessorFormatter:
    return structlog.stdlib.ProcessorFormatter(
        foreign_pre_chain=[
            structlog.stdlib.add_log_level,
            structlog.stdlib.add_logger_name,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
        ],
        processors=[
            structlog.stdlib.ProcessorFormatter.remove_processors_meta,
            structlog.processors.format_exc_info if log_content else _redact_exception,
            redactor(log_content),
            structlog.processors.JSONRenderer(),
        ],
    )


def _tagged(handler: logging.Handler, tag: str) -> logging.Handler:
    setattr(handler, _HANDLER_TAG, tag)
    return handler


def _remove_handlers(tag: str) -> None:
    root = logging.getLogger()
    for handler in list(root.handlers):
        if getattr(handler, _HANDLER_TAG, None) == tag:
            root.removeHandler(handler)
            handler.close()


def configure_logging(
    level: str = "info",
    *,
    stderr: Literal["auto", "always", "never"] = "always",
    log_content: bool = False,
) -> None:
    """Route structlog and stdlib logging into JSON lines; ``stderr`` says whether they
    also go to stderr ("auto": only when it is a terminal). Safe to call again."""
    global _configured
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            structlog.stdlib.add_log_level,
            structlog.stdlib.add_logger_name,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            structlog.stdlib.ProcessorFormatter.wrap_for_formatter,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(_LEVELS[level]),
        logger_factory=structlog.stdlib.LoggerFactory(),
        cache_logger_on_first_use=False,
    )
    # Our records are filtered by structlog above; the root level gates the libraries'.
    logging.getLogger("retrieval_mcp").setLevel(logging.DEBUG)
    root = logging.getLogger()
    root.setLevel(max(_LEVELS[level], logging.WARNING))
    _remove_handlers("stderr")
    if stderr == "always" or (stderr == "auto" and sys.stderr.isatty()):
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(_formatter(log_content))
        root.addHandler(_tagged(handler, "stderr"))
    _configured = True


def stop_stderr_logging() -> None:
    """Send nothing more to stderr (the CLI's last words are its own one line)."""
    _remove_handlers("stderr")


class PrivateRotatingFileHandler(logging.handlers.RotatingFileHandler):
    """A RotatingFileHandler whose files are created 0600, rotated ones included.

    The stdlib handler formats every record twice (``shouldRollover`` measures the line,
    ``emit`` writes it) and stats the path twice per record; with our formatter (a record
    copy, the redactor, JSON) that was a third of a ``tool_call`` line's cost on the hot
    path. Here a record is formatted once per handler, and whether the path is a regular
    file (bpo-45401: never rotate ``/dev/null``) is asked when the file is opened.
    """

    _regular_file = True

    def _open(self) -> Any:
        path = self.baseFilename
        self._regular_file = not os.path.exists(path) or os.path.isfile(path)
        return open(
            path,
            self.mode,
            encoding=self.encoding,
            errors=self.errors,
            opener=lambda path, flags: os.open(path, flags, 0o600),
        )

    def format(self, record: logging.LogRecord) -> str:
        key = f"_lrm_line_{id(self)}"
        line = record.__dict__.get(key)
        if not isinstance(line, str):
            line = super().format(record)
            record.__dict__[key] = line
        return line

    def shouldRollover(self, record: logging.LogRecord) -> bool:
        if self.stream is None:  # opened lazily (delay=True) or closed by a rollover
            self.stream = self._open()
        if self.maxBytes <= 0 or not self._regular_file:
            return False
        line = self.format(record)
        self.stream.seek(0, 2)  # the end, wherever another process's appends left it
        return self.stream.tell() + len(line) + 1 >= self.maxBytes


@contextmanager
def log_file(
    path: Path,
    *,
    level: str = "info",
    max_bytes: int = 10 * 1024 * 1024,
    backups: int = 5,
    log_content: bool = False,
) -> Iterator[Path]:
    """Write JSON log lines to ``path`` (rotated at ``max_bytes``, ``backups`` kept) until
    the block exits. The directory is created 0700. If logging was never configured in
    this process (a library or test caller), it is configured now, without stderr and
    with structlog passing every level so that the handlers' levels decide."""
    if not _configured:
        configure_logging("debug", stderr="never")
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    handler = PrivateRotatingFileHandler(
        path, maxBytes=max_bytes, backupCount=backups, encoding="utf-8"
    )
    handler.setLevel(_LEVELS[level])
    handler.setFormatter(_formatter(log_content))
    tag = f"file:{path}"
    root = logging.getLogger()
    root.addHandler(_tagged(handler, tag))
    try:
        yield path
    finally:
        root.removeHandler(handler)
        handler.close()
