"""The write-ahead log's settings: a frozen pydantic model, validated at the edge.

``settings.py`` embeds this as ``Settings.wal``; nothing in ``wal/`` reads the
environment or a file.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

MIB = 1024 * 1024


class WalSettings(BaseModel):
    """How the WAL rotates, group-commits and retains its segments.

    ``segment_bytes``: a segment is closed and a new one started before the first
    batch that would begin past this size (a batch is never split, so a segment can
    exceed it by one batch). ``group_commit_max_records``: most records in one
    write + fsync. ``group_commit_max_delay_s``: how long the writer may hold a batch
    open for more records after the first one was queued (0 commits whatever is
    queued at once). ``unacknowledged_max_delay_s``: the same bound for a batch that
    holds only records nobody waits for (session records, applied markers): they are
    audit, not acknowledged writes (ADR 0008), so they are written and fsynced together
    about once per this interval instead of once per tool call; an acknowledged append
    that arrives meanwhile still waits at most ``group_commit_max_delay_s``.
    ``queue_size``: appends waiting for the writer before producers
    block. Session records are kept while younger than ``session_retention_days`` and
    while the log holds less than ``retention_bytes``; segments with unapplied ingest
    records are never retired.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    # Empty means "<state_dir>/wal".
    path: str = ""
    segment_bytes: int = Field(16 * MIB, ge=4096, le=1024 * MIB)
    group_commit_max_records: int = Field(512, ge=1, le=65_536)
    group_commit_max_delay_s: float = Field(0.002, ge=0.0, le=1.0)
    unacknowledged_max_delay_s: float = Field(1.0, ge=0.0, le=60.0)
    queue_size: int = Field(1024, ge=1, le=1_000_000)
    session_retention_days: float = Field(30.0, ge=0.0, le=3650.0)
    retention_bytes: int = Field(256 * MIB, ge=0)
    log_content: bool = False
