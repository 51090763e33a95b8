"""Records: typed, versioned, round-trip through cattrs and JSON; no text unless asked."""

from __future__ import annotations

import json

import pytest

from retrieval_mcp.records import Chunk, Provenance
from retrieval_mcp.wal.wal_records import (
    FORMAT_VERSION,
    Applied,
    RecordFormatError,
    SessionRecord,
    arguments_digest,
    decode_payload,
    delete_documents,
    encode_payload,
    ingest_batch,
    publish_documents,
    rename_documents,
    session_record,
    stage_batch,
)


def chunk(i: int, **metadata: object) -> Chunk:
    return Chunk(
        id=f"00000000-0000-0000-0000-{i:012d}",
        text=f"text {i} — ünïcode",
        provenance=Provenance("s", "d", "Title", i, 0, 10, doc_chunks=3, uri="file:///d"),
        doc_hash="h",
        metadata=dict(metadata),
    )


def test_every_kind_round_trips() -> None:
    session = session_record(
        at=1.5,
        request_id="r",
        token_name="alice",
        tool="search",
        arguments={"query": "secret plans", "top_k": 5},
        hit_ids=["a", "b"],
        hit_texts=["A text", "B text"],
        legs_used=["dense"],
        legs_dropped=[("bm25", "timeout")],
        latency_ms=3.25,
        outcome="ok",
        log_content=True,
    )
    for payload in (
        ingest_batch([chunk(1, lang="en", n=[1, 2]), chunk(2)]),
        delete_documents("s", ["d1", "d2"]),
        stage_batch([chunk(3), chunk(4, lang="fr")]),
        publish_documents("s", {"d1": "h1", "d2": "h2"}),
        rename_documents("s", [("old.md", "new/old.md", "h", "file:///new/old.md")]),
        Applied(seqs=(3, 4)),
        session,
    ):
        raw = encode_payload(payload)
        raw.decode("ascii")  # ASCII only: the frame marker can never occur in a payload
        assert decode_payload(raw) == payload


def test_version_and_kind_are_checked() -> None:
    raw = json.loads(encode_payload(Applied(seqs=(1,))))
    assert raw["v"] == FORMAT_VERSION and raw["kind"] == "applied"
    with pytest.raises(RecordFormatError, match="version 2 is not supported"):
        decode_payload(json.dumps({**raw, "v": 2}).encode())
    with pytest.raises(RecordFormatError, match="unknown record kind 'nope'"):
        decode_payload(json.dumps({**raw, "kind": "nope"}).encode())
    with pytest.raises(RecordFormatError, match="does not match its schema"):
        decode_payload(json.dumps({**raw, "data": {"seqs": "x"}}).encode())
    with pytest.raises(RecordFormatError, match="not JSON"):
        decode_payload(b"\xff{")


def test_idempotency_keys_are_content_derived() -> None:
    assert ingest_batch([chunk(1)]).idempotency_key == ingest_batch([chunk(1)]).idempotency_key
    assert ingest_batch([chunk(1)]).idempotency_key != ingest_batch([chunk(2)]).idempotency_key
    assert delete_documents("s", ["a"]) == delete_documents("s", ["a"])
    assert (
        delete_documents("s", ["a"]).idempotency_key != delete_documents("t", ["a"]).idempotency_key
    )


def test_session_record_keeps_no_text_unless_asked() -> None:
    arguments = {"query": "what is the secret", "top_k": 5}
    record = session_record(
        at=0.0,
        request_id="r",
        token_name="t",
        tool="search",
        arguments=arguments,
        hit_ids=["a"],
        hit_texts=["the secret is 42"],
        latency_ms=1.0,
        outcome="ok",
        log_content=False,
    )
    assert isinstance(record, SessionRecord) and record.content is None
    raw = encode_payload(record).decode()
    assert "secret" not in raw and "42" not in raw
    assert record.arguments_digest == arguments_digest({"top_k": 5, "query": "what is the secret"})
