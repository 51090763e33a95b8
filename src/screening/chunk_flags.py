"""A chunk's screen flags: stored at ingest, or computed on read for foreign stores."""

from __future__ import annotations

from pathlib import Path

from retrieval_mcp.records import Chunk
from retrieval_mcp.screening.injection_screen import screen
from retrieval_mcp.screening.learned_screen import shipped
from retrieval_mcp.screening.sanitize import sanitise
from retrieval_mcp.screening.verdict_cache import VerdictCache

#: Verdicts for foreign chunks, process-wide; ``persist_verdicts`` puts it on disk.
VERDICTS = VerdictCache(version=shipped().version)
VERDICTS_FILE = "screen-verdicts.jsonl"


def _screen_flags(text: str) -> tuple[str, ...]:
    return screen(text).flags


def chunk_flags(chunk: Chunk) -> tuple[str, ...]:
    """Flags stored with the chunk; a chunk from a store this server did not write
    (``flags is None``) is screened on its raw text, as ingest would have, once per
    distinct text (``VERDICTS``)."""
    if chunk.flags is not None:
        return chunk.flags
    return VERDICTS.flags(chunk.text, _screen_flags)


def persist_verdicts(state_dir: Path) -> None:
    """Keep on-read verdicts in ``state_dir`` across restarts (called at start-up)."""
    VERDICTS.persist_to(state_dir / VERDICTS_FILE)


def clean_text(chunk: Chunk) -> str:
    """Text safe to show: our stores hold it sanitised already; foreign ones may not."""
    return chunk.text if chunk.flags is not None else sanitise(chunk.text)
