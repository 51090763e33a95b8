"""What every tool handler needs, in one place, so handlers take a single argument."""

from __future__ import annotations

import attrs

from retrieval_mcp.actors.orchestrator import Pipeline
from retrieval_mcp.backends.protocol import RetrievalBackend
from retrieval_mcp.errors import UnknownSource
from retrieval_mcp.reload_hub import ReloadHub
from retrieval_mcp.settings import Settings
from retrieval_mcp.tools.caller import Caller


@attrs.frozen
class ToolContext:
    backend: RetrievalBackend
    pipeline: Pipeline
    settings: Settings
    hub: ReloadHub = attrs.field(factory=ReloadHub)

    async def check_sources(self, requested: tuple[str, ...], caller: Caller) -> None:
        """Raise UnknownSource naming the valid ones; called only when a scoped call found
        nothing, so the hot path never pays for it. Only sources ``caller`` may read are
        named, so the remedy never reveals another scope's sources."""
        known = {s.name for s in await self.backend.sources() if caller.may_read(s.name)}
        unknown = [s for s in requested if s not in known]
        if unknown:
            raise UnknownSource(
                f"unknown source(s): {', '.join(unknown)}",
                remedy=(
                    f"Use one of: {', '.join(sorted(known))} (see list_sources)."
                    if known
                    else "The index is empty; ask the operator to ingest documents."
                ),
            )
