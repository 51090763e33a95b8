"""The auth gate actor: who is calling, and may they try at all right now?

``check`` runs in-line for every MCP request, synchronously, against an immutable
``TokenVerifier`` snapshot (SHA-256 of the presented secret, constant-time compare with
every live digest). The actor's ``run`` task keeps that snapshot fresh: it polls the
token file's identity (inode, size, mtime, ctime) every ``auth.reload_poll_s`` seconds
and rebuilds the verifier when it changes; ``reload`` does the same at once and is the
``tokens`` part of the SIGHUP ``ReloadHub``. A reload that fails (unreadable file, bad
JSON, group-readable mode) keeps the previous snapshot and says why in the log.

Failed-auth backoff is per client address: after ``failures_before_backoff`` wrong
credentials, an address waits 1, 2, 4 … ``backoff_max_s`` seconds between guesses.
While it waits, requests from it that carry a credential get 429 without being
checked, so waiting is not optional; requests without one get the usual 401. A
missing header is never counted: browsers cannot add one cross-site, so a web page
cannot push the address into backoff.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl

import attrs
import structlog
import trio

from retrieval_mcp.errors import ConfigError
from retrieval_mcp.settings import AuthSettings
from retrieval_mcp.transport.bearer_tokens import TokenVerifier, load_tokens
from retrieval_mcp.transport.caller import ANONYMOUS, Caller
from retrieval_mcp.transport.token_bucket import (
    BackoffPolicy,
    FailureRecord,
    blocked_for,
    forgotten,
    record_failure,
)

log = structlog.get_logger(__name__)

MAX_AUTH_HEADER = 512
#: Query parameters that carry credentials in other APIs; never accepted here.
_URL_CREDENTIAL_KEYS = frozenset(
    {"access_token", "token", "auth", "authorization", "bearer", "api_key", "apikey", "key"}
)

FileIdentity = tuple[int, int, int, int]


@attrs.frozen
class Admitted:
    caller: Caller


@attrs.frozen
class Refused:
    """401. ``reason`` is for the log only; the client always sees the same answer."""

    reason: str


@attrs.frozen
class Throttled:
    """429: this address failed too often; try again after ``retry_after_s``."""

    retry_after_s: float


AuthOutcome = Admitted | Refused | Throttled


def _file_identity(path: Path) -> FileIdentity | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def credential_in_url(query_string: bytes) -> bool:
    """True when the URL carries something that looks like a credential."""
    if not query_string:
        return False
    text = query_string.decode("latin-1")
    pairs = parse_qsl(text, keep_blank_values=True)
    return "lrm_" in text or any(
        key.lower() in _URL_CREDENTIAL_KEYS or "lrm_" in value for key, value in pairs
    )


class AuthGate:
    """Verifies bearer tokens and throttles guessing. ``verifier`` None: auth is off."""

    name = "auth-gate"

    def __init__(
        self,
        token_path: Path,
        settings: AuthSettings,
        *,
        require_auth: bool = True,
        wall_clock: Callable[[], float] = time.time,
    ) -> None:
        self._path = token_path
        self._settings = settings
        self._require = require_auth
        self._wall_clock = wall_clock
        self._policy = BackoffPolicy(
            free=settings.failures_before_backoff,
            initial_s=settings.backoff_initial_s,
            max_s=settings.backoff_max_s,
            forget_after_s=settings.backoff_max_s,
        )
        self._failures: dict[str, FailureRecord] = {}
        self._identity: FileIdentity | None = None
        self.verifier: TokenVerifier | None = None
        self.restarts = 0
        self.reloads = 0
        self.last_error = ""
        self.counts: dict[str, int] = {"admitted": 0, "refused": 0, "throttled": 0}
        if require_auth:
            self._load()

    # -- the hot path ---------------------------------------------------------------

    def check(
        self, authorization: Sequence[bytes], query_string: bytes, address: str
    ) -> AuthOutcome:
        """Decide one request from its Authorization header values, its query string and
        its client address key. Never raises; never logs the credential."""
        verifier = self.verifier
        if not self._require or verifier is None:
            return Admitted(ANONYMOUS)
        in_url = credential_in_url(query_string)
        if not authorization and not in_url:
            return self._refuse("missing")
        now = trio.current_time()
        wait = blocked_for(self._failures.get(address), now)
        if wait > 0:
            self.counts["throttled"] += 1
            return Throttled(retry_after_s=wait)
        if in_url:
            self._note_url_credential(verifier, query_string)
            return self._fail(address, now, "token_in_url")
        if len(authorization) != 1 or len(authorization[0]) > MAX_AUTH_HEADER:
            return self._fail(address, now, "malformed")
        scheme, space, token = authorization[0].decode("latin-1").partition(" ")
        token = token.strip()
        if scheme.lower() != "bearer" or not space or not token or " " in token:
            return self._fail(address, now, "malformed")
        caller = verifier.verify(token, self._wall_clock())
        if caller is None:
            return self._fail(address, now, "invalid")
        self.counts["admitted"] += 1
        return Admitted(caller)

    def _refuse(self, reason: str) -> Refused:
        self.counts["refused"] += 1
        return Refused(reason)

    def _fail(self, address: str, now: float, reason: str) -> Refused:
        record = record_failure(self._failures.get(address), self._policy, now)
        self._failures[address] = record
        if record.blocked_until > now:
            log.warning(
                "auth_backoff",
                client=address,
                failures=record.failures,
                wait_s=round(record.blocked_until - now, 3),
            )
        return self._refuse(reason)

    def _note_url_credential(self, verifier: TokenVerifier, query_string: bytes) -> None:
        """A real secret in a URL is now in shell history and proxy logs: say which
        token needs rotating (by name, never the secret)."""
        for _, value in parse_qsl(query_string.decode("latin-1"), keep_blank_values=True):
            caller = verifier.verify(value, self._wall_clock())
            if caller is not None:
                log.warning("token_exposed_in_url", token_name=caller.token_name, advice="rotate")

    # -- reload ---------------------------------------------------------------------

    def _load(self) -> int:
        identity = _file_identity(self._path)
        try:
            tokens = load_tokens(self._path)
        except OSError as exc:
            raise ConfigError(f"cannot read the token file {self._path}: {exc.strerror}") from exc
        self.verifier = TokenVerifier(tokens)
        self._identity = identity
        return len(tokens.tokens)

    async def reload(self) -> dict[str, Any]:
        """Re-read the token file now (SIGHUP). Raises ConfigError and keeps the
        previous tokens when the file is unreadable, invalid or not private."""
        await trio.lowlevel.checkpoint()
        if not self._require:
            return {"tokens": 0, "auth": "off"}
        try:
            count = self._load()
        except ConfigError as exc:
            self.last_error = exc.message
            raise
        self.reloads += 1
        self.last_error = ""
        return {"tokens": count}

    async def reload_if_changed(self) -> bool:
        """Reload when the file's identity changed since the last load; log, never raise."""
        if _file_identity(self._path) == self._identity:
            return False
        previous = self._identity
        try:
            detail = await self.reload()
        except ConfigError as exc:
            # Remember the bad identity so one bad write is logged once, not every poll.
            self._identity = _file_identity(self._path)
            if self._identity != previous:
                log.error("token_reload_failed", error=exc.message, remedy=exc.remedy)
            return False
        log.info("tokens_reloaded", trigger="file_change", **detail)
        return True

    def forget_quiet_addresses(self, now: float) -> None:
        quiet = [a for a, r in self._failures.items() if forgotten(r, self._policy, now)]
        for address in quiet:
            del self._failures[address]

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        """Watch the token file until cancelled.

        Polling a stat every few seconds costs microseconds, needs no dependency
        (inotify would) and sees every kind of change, including the atomic rename the
        ``token`` commands do and a chmod that makes the file unsafe.
        """
        task_status.started()
        if not self._require:
            await trio.sleep_forever()
        while True:
            await trio.sleep(self._settings.reload_poll_s)
            await self.reload_if_changed()
            self.forget_quiet_addresses(trio.current_time())

    def statistics(self) -> dict[str, Any]:
        return {
            "restarts": self.restarts,
            "tokens": len(self.verifier) if self.verifier is not None else 0,
            "reloads": self.reloads,
            "last_reload_error": self.last_error,
            "addresses_backing_off": len(self._failures),
            **self.counts,
        }
