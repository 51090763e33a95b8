"""What every tool handler needs, in one place, so handlers take a single argument."""

from __future__ import annotations

from typing import Any

import attrs

from retrieval_mcp.actors.orchestrator import Pipeline, RetrievalOutcome, RetrievalRequest
from retrieval_mcp.actors.supervisor import Supervisor
from retrieval_mcp.actors.wal_writer import WalWriter
from retrieval_mcp.backends.protocol import RetrievalBackend
from retrieval_mcp.errors import UnknownSource
from retrieval_mcp.ingest.live_ingest import IngestDesk
from retrieval_mcp.reload_hub import ReloadHub
from retrieval_mcp.settings import Settings, StepSettings
from retrieval_mcp.tools.retrieval_args import ScopeArgs, check_query, check_top_k, scope_of
from retrieval_mcp.transport.caller import Caller


@attrs.frozen
class ToolContext:
    backend: RetrievalBackend
    pipeline: Pipeline
    settings: Settings
    hub: ReloadHub = attrs.field(factory=ReloadHub)
    wal: WalWriter | None = None  # for index_status: the log's health
    tree: Supervisor | None = None  # for index_status: the supervision tree's states
    desk: IngestDesk | None = None  # for index_status: per-source live ingest and watches

    async def retrieve(
        self,
        query: str,
        top_k: int | None,
        scope: ScopeArgs,
        caller: Caller,
        steps: StepSettings,
        *,
        depth: int = 1,
        **extra: Any,
    ) -> tuple[str, tuple[str, ...], RetrievalOutcome]:
        """Validate the shared retrieval arguments, narrow them to ``caller``'s scope and
        run the pipeline; returns the cleaned query, the sources asked for and the outcome.
        ``depth`` reads the fused ranking that many times deeper than ``top_k`` (for
        collapsing by document); ``extra`` carries the tool's own request fields
        (budget, quarantine)."""
        text = check_query(query, self.settings.search)
        requested, search_filter = scope_of(scope, self.backend.capabilities())
        outcome = await self.pipeline.retrieve(
            RetrievalRequest(
                text=text,
                top_k=check_top_k(top_k, self.settings.search) * depth,
                sources=caller.scope_sources(requested),
                filter=search_filter,
                expand=steps.expand,
                rerank=steps.rerank,
                **extra,
            )
        )
        return text, requested, outcome

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
