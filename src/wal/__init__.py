"""The write-ahead log, pure part: record types, framing, segments, recovery.

No Trio and no network here; the writer actor is ``actors/wal_writer.py`` and ingest
through the log is ``ingest/durable_ingest.py``. See design/decisions/0008-wal.md.
"""

from retrieval_mcp.errors import WalClosed, WalCorrupt, WalError, WalFailed, WalLocked
from retrieval_mcp.wal.filesystem import OsFileSystem, WalFileSystem
from retrieval_mcp.wal.recovery import RecoveredLog, RecoveryReport, TornTail, iter_log, recover_log
from retrieval_mcp.wal.segment_log import EncodedRecord, LogStatistics, SegmentLog, encode_record
from retrieval_mcp.wal.wal_records import (
    FORMAT_VERSION,
    Applied,
    DataRecord,
    DeleteDocuments,
    IngestBatch,
    Payload,
    SessionContent,
    SessionRecord,
    WalRecord,
    arguments_digest,
    decode_payload,
    encode_payload,
    session_record,
)
from retrieval_mcp.wal.wal_settings import WalSettings

__all__ = [
    "FORMAT_VERSION",
    "Applied",
    "DataRecord",
    "DeleteDocuments",
    "EncodedRecord",
    "IngestBatch",
    "LogStatistics",
    "OsFileSystem",
    "Payload",
    "RecoveredLog",
    "RecoveryReport",
    "SegmentLog",
    "SessionContent",
    "SessionRecord",
    "TornTail",
    "WalClosed",
    "WalCorrupt",
    "WalError",
    "WalFailed",
    "WalFileSystem",
    "WalLocked",
    "WalRecord",
    "WalSettings",
    "arguments_digest",
    "decode_payload",
    "encode_payload",
    "encode_record",
    "iter_log",
    "recover_log",
    "session_record",
]
