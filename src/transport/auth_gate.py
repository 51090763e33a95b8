"""The auth gate actor: who is calling, and is a failing caller failing too often?

``check`` runs in-line for every MCP request, synchronously, against an immutable
``TokenVerifier`` snapshot (SHA-256 of the presented secret, constant-time compare with
every live digest). The actor's ``run`` task keeps that snapshot fresh: it polls the
token file's identity (inode, size, mtime, ctime) every ``auth.reload_poll_s`` seconds
and rebuilds the verifier when it changes; ``reload`` does the same at once and is the
``tokens`` part of the SIGHUP ``ReloadHub``. Both go through the hub, so a reload that
fails for any reason keeps the previous snapshot, is counted and shown in
``index_status``, and never stops the watcher.

Failures are charged to the failer. Every presented credential is checked — a valid
one is admitted whatever other clients, or the same address, did before — and only
*failing* attempts are throttled, keyed by the presented credential's fingerprint and
by the client address: after ``failures_before_backoff`` failures a key waits 1, 2, 4 …
``backoff_max_s`` seconds, and a failure while its key waits is answered 429 with the
wait instead of 401 (and not counted again, so hammering does not push the wait out).
One stale agent retrying a revoked token therefore slows itself, not the other agents
that share its loopback address. A missing header is never counted: browsers cannot
add one cross-site, so a web page cannot push the address into backoff.
"""

from __future__ import annotations

import hashlib
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
from retrieval_mcp.reload_hub import ReloadHub
from retrieval_mcp.settings import AuthSettings
from retrieval_mcp.transport.bearer_tokens import TokenVerifier, load_tokens
from retrieval_mcp.transport.caller import ANONYMOUS, Caller
from retrieval_mcp.transport.refusal_log import RefusalLog
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
    """429: a failing attempt whose credential or address failed too often; the client
    may try again after ``retry_after_s`` (a valid credential is admitted at any time)."""

    retry_after_s: float
    reason: str = "auth_backoff"


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


#: Failure records kept at once (fingerprints and addresses). A flood of distinct wrong
#: credentials is capped by the per-address bucket; this bounds memory whatever comes.
MAX_FAILURE_RECORDS = 4096

FailureKey = tuple[str, str]  # ("address", key) or ("credential", fingerprint)


def fingerprint(value: bytes) -> str:
    """A short, non-reversible name for a presented credential (never logged whole)."""
    return hashlib.sha256(value).hexdigest()[:16]


class AuthGate:
    """Verifies bearer tokens and throttles failing ones. ``verifier`` None: auth is off.

    ``hub`` is where reloads are run and their outcomes kept; the gate registers its
    ``reload`` there as the ``tokens`` part (a private hub when none is given)."""

    name = "auth-gate"

    def __init__(
        self,
        token_path: Path,
        settings: AuthSettings,
        *,
        require_auth: bool = True,
        wall_clock: Callable[[], float] = time.time,
        hub: ReloadHub | None = None,
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
        self._failures: dict[FailureKey, FailureRecord] = {}
        self._warnings = RefusalLog()
        self._identity: FileIdentity | None = None
        self._hub = hub if hub is not None else ReloadHub()
        self._hub.register("tokens", self.reload)
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
        its client address key. Never raises; never logs the credential.

        A valid credential is admitted without looking at any failure record; only a
        failing attempt consults (and feeds) the backoff of its fingerprint and address.
        """
        verifier = self.verifier
        if not self._require or verifier is None:
            return Admitted(ANONYMOUS)
        in_url = credential_in_url(query_string)
        if not authorization and not in_url:
            return self._refuse("missing")
        keys: list[FailureKey] = [("address", address)]
        if authorization:
            keys.append(("credential", fingerprint(b"\n".join(authorization))))
        if in_url:
            self._note_url_credential(verifier, query_string)
            return self._fail(keys, "token_in_url")
        if len(authorization) != 1 or len(authorization[0]) > MAX_AUTH_HEADER:
            return self._fail(keys, "malformed")
        scheme, space, token = authorization[0].decode("latin-1").partition(" ")
        token = token.strip()
        if scheme.lower() != "bearer" or not space or not token or " " in token:
            return self._fail(keys, "malformed")
        caller = verifier.verify(token, self._wall_clock())
        if caller is None:
            return self._fail(keys, "invalid")
        self.counts["admitted"] += 1
        return Admitted(caller)

    def _refuse(self, reason: str) -> Refused:
        self.counts["refused"] += 1
        return Refused(reason)

    def _fail(self, keys: list[FailureKey], reason: str) -> Refused | Throttled:
        """A failed attempt: 429 while any of its keys waits (not counted again, so the
        wait does not grow by hammering), else counted against every key and 401."""
        now = trio.current_time()
        wait = max(blocked_for(self._failures.get(key), now) for key in keys)
        if wait > 0:
            self.counts["throttled"] += 1
            return Throttled(retry_after_s=wait)
        for key in keys:
            record = record_failure(self._failures.get(key), self._policy, now)
            self._remember(key, record, now)
            if record.blocked_until > now:
                self._warnings.note(
                    "auth_backoff",
                    reason,
                    f"{key[0]}:{key[1]}",
                    level="warning",
                    failures=record.failures,
                    wait_s=round(record.blocked_until - now, 3),
                )
        return self._refuse(reason)

    def _remember(self, key: FailureKey, record: FailureRecord, now: float) -> None:
        if key not in self._failures and len(self._failures) >= MAX_FAILURE_RECORDS:
            self.forget_quiet(now)
            if len(self._failures) >= MAX_FAILURE_RECORDS:
                # Still full: a flood of fresh credentials. Their records go first; the
                # addresses' records (few, and what slows a flood) stay.
                for stale in [k for k in self._failures if k[0] == "credential"]:
                    del self._failures[stale]
        self._failures[key] = record

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
        tokens = load_tokens(self._path)  # ConfigError, and only that, for any bad file
        self.verifier = TokenVerifier(tokens)
        self._identity = identity
        return len(tokens.tokens)

    async def reload(self) -> dict[str, Any]:
        """Re-read the token file now (the hub's ``tokens`` part). Raises ConfigError
        and keeps the previous tokens when the file is unreadable, invalid or not
        private."""
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
        """Reload through the hub when the file's identity changed since the last load.
        Never raises: a refusal is the hub's to log and count."""
        identity = _file_identity(self._path)
        if identity == self._identity:
            return False
        outcome = await self._hub.reload_part("tokens", trigger="file_change")
        if not outcome.ok:
            # Remember the bad identity so one bad write is refused (and logged) once,
            # not at every poll.
            self._identity = identity
        return outcome.ok

    def forget_quiet(self, now: float) -> None:
        quiet = [k for k, r in self._failures.items() if forgotten(r, self._policy, now)]
        for key in quiet:
            del self._failures[key]

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
            self.forget_quiet(trio.current_time())

    def statistics(self) -> dict[str, Any]:
        now = trio.current_time()
        waiting = [k for k, r in self._failures.items() if blocked_for(r, now) > 0]
        return {
            "restarts": self.restarts,
            "tokens": len(self.verifier) if self.verifier is not None else 0,
            "reloads": self.reloads,
            "last_reload_error": self.last_error,
            "failure_records": len(self._failures),
            "addresses_backing_off": sum(1 for k in waiting if k[0] == "address"),
            "credentials_backing_off": sum(1 for k in waiting if k[0] == "credential"),
            "warnings_skipped": self._warnings.skipped,
            **self.counts,
        }
