"""A change to a document's metadata alone re-ingests it (design/decisions/0036)."""

from __future__ import annotations

from pathlib import Path

from retrieval_mcp.backends.protocol import Capability, LegQuery
from retrieval_mcp.backends.qdrant_embedded import QdrantEmbeddedBackend
from retrieval_mcp.encoders.minilm import MiniLMEncoder
from retrieval_mcp.ingest.loaders import Document, load_documents
from retrieval_mcp.ingest.runner import ingest_documents

TEXT = "Basalt columns form when a thick lava flow cools and contracts."


async def stored_metadata(backend: QdrantEmbeddedBackend) -> list[dict[str, object]]:
    hits = await backend.search(LegQuery(Capability.DENSE, "basalt", 10, sources=("m",)))
    return [h.chunk.metadata for h in hits]


async def test_metadata_change_alone_replaces_the_document(
    tmp_path: Path, encoder: MiniLMEncoder
) -> None:
    backend = await QdrantEmbeddedBackend.open(tmp_path / "store", encoder)
    try:

        async def ingest(metadata: dict[str, object]) -> tuple[int, int, int]:
            doc = Document("rocks.csv#c1", "Basalt", TEXT, metadata=metadata)
            report = await ingest_documents(
                backend, [doc], source="m", chunk_chars=1000, overlap_chars=0
            )
            return report.documents_written, report.documents_unchanged, report.chunks_written

        assert await ingest({"region": "north", "tags": ["a", "b"]}) == (1, 0, 1)
        # The same metadata in another key order is the same document.
        assert await ingest({"tags": ["a", "b"], "region": "north"}) == (0, 1, 0)
        assert await ingest({"region": "south", "tags": ["a", "b"]}) == (1, 0, 1)
        assert await stored_metadata(backend) == [{"region": "south", "tags": ["a", "b"]}]
    finally:
        await backend.aclose()


async def test_a_csv_cell_edited_in_a_metadata_column_is_re_ingested(
    tmp_path: Path, encoder: MiniLMEncoder
) -> None:
    csv = tmp_path / "rows" / "rocks.csv"
    csv.parent.mkdir()
    backend = await QdrantEmbeddedBackend.open(tmp_path / "store", encoder)
    try:

        async def ingest(region: str) -> int:
            csv.write_text(f'id,text,region\nc1,"{TEXT}",{region}\n')
            docs = list(load_documents(csv.parent, errors=[]))
            report = await ingest_documents(
                backend, docs, source="m", chunk_chars=1000, overlap_chars=0
            )
            return report.documents_replaced

        assert await ingest("north") == 0
        assert await ingest("north") == 0
        assert await ingest("south") == 1
        assert await stored_metadata(backend) == [{"region": "south"}]
    finally:
        await backend.aclose()
