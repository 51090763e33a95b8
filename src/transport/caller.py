"""Who is calling a tool, and which sources their token may read.

The transport authenticates a request and hands the dispatcher a ``Caller``; every tool
receives it and narrows what it reads to the caller's scope. Scope is enforced twice:
the query to the backend names only in-scope sources, and whatever comes back is
filtered again by each chunk's own ``provenance.source``, so a backend that ignored a
filter still cannot leak another source. A chunk outside the scope is treated exactly
like a chunk that does not exist, so ids cannot be used to probe other sources.
"""

from __future__ import annotations

from collections.abc import Iterable

import attrs

from retrieval_mcp.errors import SourceOutOfScope
from retrieval_mcp.records import Chunk

#: Where the transport leaves the authenticated caller in the ASGI scope's state.
CALLER_STATE_KEY = "retrieval_mcp.caller"
#: What a token may do: call MCP (the default), scrape /metrics, ingest through the
#: operator channel (Unix socket only, ADR 0037), or a combination.
MCP_SCOPE = "mcp"
METRICS_SCOPE = "metrics"
INGEST_SCOPE = "ingest"
TOKEN_SCOPES = (MCP_SCOPE, METRICS_SCOPE, INGEST_SCOPE)


@attrs.frozen
class Caller:
    token_name: str
    sources: frozenset[str] | None = None  # None: every source
    scopes: frozenset[str] = frozenset({MCP_SCOPE})

    @property
    def scoped(self) -> bool:
        return self.sources is not None

    def may_read(self, source: str) -> bool:
        return self.sources is None or source in self.sources

    def scope_sources(self, requested: tuple[str, ...]) -> tuple[str, ...]:
        """The sources to search. Unscoped: as requested (empty = all). Scoped: the
        requested ones if every one is in scope, or the whole scope when none were
        requested; anything outside raises SourceOutOfScope (not data, not a hint of
        whether that source exists)."""
        if self.sources is None:
            return requested
        if not requested:
            return tuple(sorted(self.sources))
        outside = [s for s in requested if s not in self.sources]
        if outside:
            raise SourceOutOfScope(
                f"this token ({self.token_name}) may not read source(s): {', '.join(outside)}"
            )
        return requested

    def readable(self, chunks: Iterable[Chunk]) -> list[Chunk]:
        return [c for c in chunks if self.may_read(c.provenance.source)]


#: The caller of every request when ``server.require_auth`` is false.
ANONYMOUS = Caller(token_name="anonymous")
