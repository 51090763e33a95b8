"""The failures every remote adapter can meet, as ``errors.BackendError`` subclasses.

Adapters raise these (or the base classes in ``retrieval_mcp.errors``) from the
lowest layer that sees a library error, so the pipeline and the tools never meet an
``httpx`` or ``psycopg`` exception. Each carries a stable ``code`` and a remedy that
tells the operator where to look.
"""

from __future__ import annotations

from retrieval_mcp.errors import BackendError, BackendUnavailable


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
