"""Re-exports: the write-ahead log's errors live in ``retrieval_mcp.errors`` (one module)."""

from retrieval_mcp.errors import WalClosed, WalCorrupt, WalError, WalFailed, WalLocked

__all__ = ["WalClosed", "WalCorrupt", "WalError", "WalFailed", "WalLocked"]
