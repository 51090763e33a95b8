"""What can go wrong with the write-ahead log.

Subclasses of the project's ``RetrievalMCPError``, so the envelope and the CLI report
them with a code and a remedy like any other error.
"""

from __future__ import annotations

from pathlib import Path

from retrieval_mcp.errors import RetrievalMCPError


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
