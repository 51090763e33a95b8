"""kill -9 a real server while it applies an ingest handed to it over the operator
channel: after each restart every acknowledged ("published") document is stored whole
in the version that was acknowledged, no document is stored twice or in two versions,
and a search sees exactly one version of each document, even mid-replacement."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx2
import pytest
import trio

from retrieval_mcp.actors.wal_writer import open_wal_writer
from retrieval_mcp.backends.protocol import Capability, LegQuery
from retrieval_mcp.backends.qdrant_embedded import QdrantEmbeddedBackend
from retrieval_mcp.encoders.minilm import MiniLMEncoder
from retrieval_mcp.ingest.chunk_builder import document_hash
from retrieval_mcp.ingest.durable_ingest import DurableIngestTarget
from retrieval_mcp.ingest.loaders import load_documents
from retrieval_mcp.settings import load_settings
from retrieval_mcp.transport.bearer_tokens import ensure_state_dir, ensure_token_file
from retrieval_mcp.transport.token_admin import create_token

REPO = Path(__file__).resolve().parents[2]
SOURCE = "pumps"
DOCS = 200  # one chunk each: a publish every 64 documents


def write_corpus(folder: Path, edition: int) -> dict[str, str]:
    """The corpus in ``edition``; returns doc id -> the hash its version must have."""
    folder.mkdir(parents=True, exist_ok=True)
    for i in range(DOCS):
        (folder / f"pump-{i:03}.md").write_text(
            f"# Pump {i}\n\nPump {i} edition {edition}: prime the pump, check seal {i}.\n"
        )
    settings = load_settings(state_dir=folder.parent / "unused")
    return {
        d.doc_id: document_hash(
            d,
            chunk_chars=settings.chunking.chunk_chars,
            overlap_chars=settings.chunking.overlap_chars,
        )
        for d in load_documents(folder)
    }


async def serve_and_ingest(
    state: Path, corpus: Path, secret: str, kill_after: int | None
) -> set[str]:
    """Start a server, hand it the ingest, SIGKILL it after ``kill_after`` published
    events (None: let it finish); return the documents it acknowledged."""
    process = await trio.lowlevel.open_process(
        [sys.executable, "-m", "retrieval_mcp", "serve", "--state-dir", str(state),
         "--port", "0", "--no-demo"],
        stdout=subprocess.DEVNULL,
        cwd=REPO,
    )  # fmt: skip
    socket = state / "server.sock"
    acked: set[str] = set()
    published = 0
    try:
        transport = httpx2.AsyncHTTPTransport(uds=str(socket))
        async with httpx2.AsyncClient(transport=transport, timeout=60) as client:
            with trio.fail_after(120):  # a guard against a hung server, not a synchroniser
                while True:  # poll until it serves
                    try:
                        if (await client.get("http://localhost/healthz")).status_code == 200:
                            break
                    except httpx2.TransportError:
                        pass
                    await trio.sleep(0.05)
                body = {"path": str(corpus), "source": SOURCE}
                headers = {"authorization": f"Bearer {secret}"}
                try:
                    async with client.stream(
                        "POST", "http://localhost/operator/ingest", json=body, headers=headers
                    ) as response:
                        assert response.status_code == 200
                        async for line in response.aiter_lines():
                            event = ndjson(line)
                            if event is None:
                                continue
                            assert event["event"] != "error", event
                            if event["event"] == "published":
                                acked.update(event["doc_ids"])
                                published += 1
                                if published == kill_after:
                                    process.send_signal(signal.SIGKILL)
                            if event["event"] == "done":
                                assert kill_after is None, "finished before the kill"
                                break
                except httpx2.TransportError:
                    assert kill_after is not None and published >= kill_after
    finally:
        if process.returncode is None:
            process.send_signal(signal.SIGKILL if kill_after else signal.SIGTERM)
        with trio.CancelScope(shield=True):
            await process.wait()
    return acked


def ndjson(line: str) -> dict[str, Any] | None:
    return json.loads(line) if line.strip() else None


async def stored_versions(
    state: Path, encoder: MiniLMEncoder
) -> tuple[dict[str, str], dict[str, set[str]]]:
    """After recovery: document_hashes, and per document the versions a search sees."""
    settings = load_settings(state_dir=state)
    backend = await QdrantEmbeddedBackend.open(settings.store_path, encoder)
    try:
        async with open_wal_writer(settings.wal_path, settings.wal) as writer:
            await DurableIngestTarget(backend, writer).recover()
        hashes = await backend.document_hashes(SOURCE)
        seen: dict[str, set[str]] = {}
        for leg in (Capability.DENSE, Capability.BM25):
            hits = await backend.search(
                LegQuery(leg, "pump seal edition", 10_000, sources=(SOURCE,))
            )
            ids = [h.chunk.id for h in hits]
            assert len(ids) == len(set(ids))  # nothing duplicated
            for hit in hits:
                seen.setdefault(hit.chunk.provenance.doc_id, set()).add(hit.chunk.doc_hash)
        return hashes, seen
    finally:
        await backend.aclose()


@pytest.mark.slow
async def test_kill_9_mid_operator_ingest_loses_no_acknowledged_document(
    tmp_path: Path, short_dir: Path, encoder: MiniLMEncoder
) -> None:
    state = short_dir / "state"
    ensure_state_dir(state)
    ensure_token_file(state / "tokens.json")
    secret = create_token(state / "tokens.json", "operator", scopes=["ingest"])
    corpus = tmp_path / "corpus"

    first = write_corpus(corpus, 1)
    acked = await serve_and_ingest(state, corpus, secret, kill_after=2)
    hashes, seen = await stored_versions(state, encoder)
    assert acked and all(hashes[d] == first[d] for d in acked)
    assert all(len(v) == 1 for v in seen.values())

    await serve_and_ingest(state, corpus, secret, kill_after=None)  # resume: finishes
    hashes, seen = await stored_versions(state, encoder)
    assert hashes == first and {d: v.pop() for d, v in seen.items()} == first

    second = write_corpus(corpus, 2)  # every document changes: a replacement each
    acked = await serve_and_ingest(state, corpus, secret, kill_after=1)
    hashes, seen = await stored_versions(state, encoder)
    assert acked and all(hashes[d] == second[d] and seen[d] == {second[d]} for d in acked)
    for doc_id, versions in seen.items():  # mid-replacement: old or new, whole, never both
        assert len(versions) == 1 and versions <= {first[doc_id], second[doc_id]}, doc_id
    assert set(seen) == set(first)

    await serve_and_ingest(state, corpus, secret, kill_after=None)
    hashes, seen = await stored_versions(state, encoder)
    assert hashes == second and {d: v.pop() for d, v in seen.items()} == second
