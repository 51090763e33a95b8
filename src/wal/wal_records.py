"""What the log holds: typed records (frozen attrs), serialised with cattrs as JSON.

Every payload is ``{"v": 1, "kind": "<kind>", "data": {…}}``. ``v`` is the record
format version: a reader refuses a version it does not know instead of guessing. The
sequence number lives in the frame header (``framing.py``), not in the payload.

Kinds:

``ingest_batch``      chunks to upsert (content-derived ids), with an idempotency key
``delete_documents``  documents of one source to delete (replacements and prunes)
``stage_batch``       chunks of new document versions, stored hidden from searches
``publish_documents`` make these staged versions current, dropping every other version
                      (the document-level atomic swap, design/decisions/0038)
``rename_documents``  give stored documents new ids (a renamed file), chunk ids kept
``applied``           the store holds the effect of these records durably
``session``           one tool call: who, which tool, a digest of the arguments, hit
                      ids, legs, latency, outcome; query and hit text only when
                      ``log_content`` is on
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Final

import attrs
import cattrs

from retrieval_mcp.records import Chunk

FORMAT_VERSION: Final = 1


@attrs.frozen
class IngestBatch:
    """Chunks to upsert. Re-applying is harmless: upserts are idempotent by chunk id."""

    idempotency_key: str
    chunks: tuple[Chunk, ...]


@attrs.frozen
class DeleteDocuments:
    """Delete every chunk of these documents of ``source``."""

    idempotency_key: str
    source: str
    doc_ids: tuple[str, ...]


@attrs.frozen
class StageBatch:
    """Chunks to upsert hidden (staged): searches do not see them until published.
    Re-applying is harmless, as for ``IngestBatch``."""

    idempotency_key: str
    chunks: tuple[Chunk, ...]


@attrs.frozen
class PublishDocuments:
    """Make version ``doc_hash`` of each ``(doc_id, doc_hash)`` current and delete every
    other version of those documents of ``source``. Re-applying is harmless."""

    idempotency_key: str
    source: str
    versions: tuple[tuple[str, str], ...]


@attrs.frozen
class RenameDocuments:
    """Move version ``doc_hash`` of ``old_id`` to ``new_id`` (and ``uri``), keeping its
    chunks and their ids: a file renamed with its content unchanged. Re-applying is
    harmless (nothing is stored under ``old_id`` with that version any more)."""

    idempotency_key: str
    source: str
    renames: tuple[tuple[str, str, str, str], ...]  # (old_id, new_id, doc_hash, uri)


@attrs.frozen
class Applied:
    """The records with these sequence numbers are applied and durable in the store."""

    seqs: tuple[int, ...]


@attrs.frozen
class SessionContent:
    """What the agent asked and saw; recorded only when ``log_content`` is on."""

    arguments: dict[str, Any]
    hit_texts: tuple[str, ...] = ()


@attrs.frozen
class SessionRecord:
    """One tool call, enough to answer "what did this agent see?" without the text."""

    at: float
    request_id: str
    token_name: str
    tool: str
    arguments_digest: str
    hit_ids: tuple[str, ...]
    legs_used: tuple[str, ...]
    legs_dropped: tuple[tuple[str, str], ...]
    latency_ms: float
    outcome: str
    content: SessionContent | None = None


DataRecord = IngestBatch | DeleteDocuments | StageBatch | PublishDocuments | RenameDocuments
Payload = DataRecord | Applied | SessionRecord

_KINDS: Final[dict[str, type[Payload]]] = {
    "ingest_batch": IngestBatch,
    "delete_documents": DeleteDocuments,
    "stage_batch": StageBatch,
    "publish_documents": PublishDocuments,
    "rename_documents": RenameDocuments,
    "applied": Applied,
    "session": SessionRecord,
}
_KIND_OF: Final[dict[type[Payload], str]] = {cls: kind for kind, cls in _KINDS.items()}


@attrs.frozen
class WalRecord:
    """A payload with the sequence number the log gave it."""

    seq: int
    payload: Payload


class RecordFormatError(ValueError):
    """A payload that passed its checksum but is not a record this build can read."""


converter = cattrs.Converter()


def encode_payload(payload: Payload) -> bytes:
    """The bytes stored in a frame: compact, ASCII-only JSON."""
    document = {
        "v": FORMAT_VERSION,
        "kind": _KIND_OF[type(payload)],
        "data": converter.unstructure(payload),
    }
    return json.dumps(document, ensure_ascii=True, separators=(",", ":")).encode("ascii")


def decode_payload(raw: bytes) -> Payload:
    """The record in ``raw``; RecordFormatError saying why if it is not one."""
    try:
        document = json.loads(raw)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise RecordFormatError(f"payload is not JSON ({exc})") from exc
    if not isinstance(document, dict):
        raise RecordFormatError("payload is not a JSON object")
    version = document.get("v")
    if version != FORMAT_VERSION:
        raise RecordFormatError(
            f"record format version {version!r} is not supported "
            f"(this build reads version {FORMAT_VERSION})"
        )
    kind = document.get("kind")
    cls = _KINDS.get(kind) if isinstance(kind, str) else None
    if cls is None:
        raise RecordFormatError(f"unknown record kind {kind!r}")
    try:
        payload: Payload = converter.structure(document.get("data"), cls)
    except (cattrs.BaseValidationError, TypeError, ValueError, KeyError) as exc:
        raise RecordFormatError(f"{kind} record does not match its schema ({exc})") from exc
    return payload


def _digest(parts: Iterable[str]) -> str:
    digest = hashlib.sha256()
    for part in parts:
        digest.update(part.encode("utf-8"))
        digest.update(b"\x00")
    return digest.hexdigest()[:32]


def ingest_batch(chunks: Sequence[Chunk]) -> IngestBatch:
    """An IngestBatch whose key is derived from its content: the same chunks (ids and
    document hashes) always give the same key, so a repeated batch is recognisable."""
    key = _digest(["ingest_batch", *(f"{c.id}:{c.doc_hash}" for c in chunks)])
    return IngestBatch(idempotency_key=key, chunks=tuple(chunks))


def delete_documents(source: str, doc_ids: Sequence[str]) -> DeleteDocuments:
    """A DeleteDocuments with a content-derived idempotency key."""
    ids = tuple(doc_ids)
    return DeleteDocuments(
        idempotency_key=_digest(["delete_documents", source, *ids]), source=source, doc_ids=ids
    )


def stage_batch(chunks: Sequence[Chunk]) -> StageBatch:
    """A StageBatch with a content-derived idempotency key."""
    key = _digest(["stage_batch", *(f"{c.id}:{c.doc_hash}" for c in chunks)])
    return StageBatch(idempotency_key=key, chunks=tuple(chunks))


def publish_documents(source: str, versions: Mapping[str, str]) -> PublishDocuments:
    """A PublishDocuments with a content-derived idempotency key."""
    pairs = tuple(sorted(versions.items()))
    key = _digest(["publish_documents", source, *(f"{d}:{h}" for d, h in pairs)])
    return PublishDocuments(idempotency_key=key, source=source, versions=pairs)


def rename_documents(source: str, renames: Sequence[tuple[str, str, str, str]]) -> RenameDocuments:
    """A RenameDocuments with a content-derived idempotency key."""
    rows = tuple(renames)
    key = _digest(["rename_documents", source, *("\x1f".join(r) for r in rows)])
    return RenameDocuments(idempotency_key=key, source=source, renames=rows)


def arguments_digest(arguments: Mapping[str, Any]) -> str:
    """A stable digest of tool arguments: equal arguments, equal digests; no text kept."""
    canonical = json.dumps(
        arguments, sort_keys=True, ensure_ascii=True, separators=(",", ":"), default=str
    )
    return hashlib.sha256(canonical.encode("ascii")).hexdigest()


def session_record(
    *,
    at: float,
    request_id: str,
    token_name: str,
    tool: str,
    arguments: Mapping[str, Any],
    hit_ids: Sequence[str],
    hit_texts: Sequence[str] = (),
    legs_used: Sequence[str] = (),
    legs_dropped: Sequence[tuple[str, str]] = (),
    latency_ms: float,
    outcome: str,
    log_content: bool,
) -> SessionRecord:
    """The record of one tool call. The query and hit texts are kept only when
    ``log_content`` is true; otherwise only the arguments' digest and the hit ids."""
    content = (
        SessionContent(
            arguments=json.loads(json.dumps(dict(arguments), default=str)),
            hit_texts=tuple(hit_texts),
        )
        if log_content
        else None
    )
    return SessionRecord(
        at=at,
        request_id=request_id,
        token_name=token_name,
        tool=tool,
        arguments_digest=arguments_digest(arguments),
        hit_ids=tuple(hit_ids),
        legs_used=tuple(legs_used),
        legs_dropped=tuple((str(leg), str(reason)) for leg, reason in legs_dropped),
        latency_ms=latency_ms,
        outcome=outcome,
        content=content,
    )


def is_data_record(payload: Payload) -> bool:
    """True for the records that change the store (and so must be applied)."""
    return isinstance(
        payload, IngestBatch | DeleteDocuments | StageBatch | PublishDocuments | RenameDocuments
    )
