"""Re-exports: the remote adapters' errors live in ``retrieval_mcp.errors`` (one module)."""

from retrieval_mcp.errors import BackendAuthFailed, BackendBadResponse, BackendTimeout

__all__ = ["BackendAuthFailed", "BackendBadResponse", "BackendTimeout"]
