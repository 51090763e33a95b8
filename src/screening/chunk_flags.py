"""A chunk's screen flags: stored at ingest, or computed on read for foreign stores."""

from __future__ import annotations

from retrieval_mcp.records import Chunk
from retrieval_mcp.screening.injection_screen import screen
from retrieval_mcp.screening.sanitize import sanitise


def chunk_flags(chunk: Chunk) -> tuple[str, ...]:
    """Flags stored with the chunk; a chunk from a store this server did not write
    (``flags is None``) is screened now, on its raw text, as ingest would have."""
    if chunk.flags is not None:
        return chunk.flags
    return screen(chunk.text).flags


def clean_text(chunk: Chunk) -> str:
    """Text safe to show: our stores hold it sanitised already; foreign ones may not."""
    return chunk.text if chunk.flags is not None else sanitise(chunk.text)
