"""Cited passages as MCP resources: ``resources/list``, ``templates/list`` and ``read``.

URIs are the project's own scheme (``tools/result_types.py`` builds them):

* ``lrm://chunk/{chunk_id}`` — one chunk, as every hit and chunk view cites it.
* ``lrm://document/{chunk_id}`` — the whole document that holds that chunk, in reading
  order, overlapping chunks merged (as ``get_context`` packs them); every packed
  passage cites its document this way.
* ``lrm://source/{name}`` — one source (collection): what ``resources/list`` lists,
  a page at a time. Chunks are never listed: a store can hold millions.

Every read runs as the authenticated caller and honours its source scope exactly as
the tools do: a chunk, document or source outside the scope gets the same answer as
one that does not exist, so ids cannot probe other sources. Retrieved text leaves
sanitised and wrapped in the untrusted-data markers, with the screen's flags and the
provenance in ``_meta``.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Callable
from typing import Any, cast
from urllib.parse import quote, unquote

import mcp_types as types
from mcp.shared.exceptions import MCPError

from retrieval_mcp.backends.protocol import (
    Capability,
    NeighborsBackend,
    RetrievalBackend,
    SourceInfo,
)
from retrieval_mcp.errors import Unauthenticated
from retrieval_mcp.pipeline.packing import merge_passages
from retrieval_mcp.records import Chunk, Hit
from retrieval_mcp.screening.chunk_flags import chunk_flags, clean_text
from retrieval_mcp.screening.wrap import wrap, wrap_sanitised
from retrieval_mcp.tools.result_types import (
    CHUNK_URI_PREFIX,
    DOCUMENT_URI_PREFIX,
    chunk_uri,
    passage_provenance_view,
    provenance_view,
)
from retrieval_mcp.transport.caller import Caller

SOURCE_URI_PREFIX = "lrm://source/"
TEXT = "text/plain"
#: Sources per ``resources/list`` page.
PAGE_SIZE = 50
#: At most this many chunks of one document are read (a document is a bounded read).
MAX_DOCUMENT_CHUNKS = 500

CallerOf = Callable[[Any], Caller | None]

TEMPLATES = (
    types.ResourceTemplate(
        uri_template=CHUNK_URI_PREFIX + "{chunk_id}",
        name="chunk",
        title="A cited chunk",
        description="One chunk by id (the id of any search, expand_neighbors, "
        "more_like_this or get_context result), with its provenance.",
        mime_type=TEXT,
    ),
    types.ResourceTemplate(
        uri_template=DOCUMENT_URI_PREFIX + "{chunk_id}",
        name="document",
        title="The document around a chunk",
        description="The whole document that holds a chunk, in reading order.",
        mime_type=TEXT,
    ),
    types.ResourceTemplate(
        uri_template=SOURCE_URI_PREFIX + "{name}",
        name="source",
        title="A source",
        description="One searchable collection: its size and capabilities.",
        mime_type=TEXT,
    ),
)


def not_found(uri: str) -> MCPError:
    """One answer for "no such resource" and "not yours to read"."""
    return MCPError(
        code=types.INVALID_PARAMS,
        message=f"no resource at {uri}",
        data={
            "uri": uri,
            "remedy": "Use a resource_uri from a tool result, or resources/list for sources.",
        },
    )


def _encode_cursor(offset: int) -> str:
    return base64.urlsafe_b64encode(f"sources:{offset}".encode()).decode("ascii")


def _decode_cursor(cursor: str | None) -> int:
    if not cursor:
        return 0
    try:
        kind, _, offset = base64.urlsafe_b64decode(cursor.encode("ascii")).decode().partition(":")
        if kind != "sources" or not offset.isdigit():
            raise ValueError(cursor)
        return int(offset)
    except (ValueError, UnicodeError, binascii.Error):
        raise MCPError(
            code=types.INVALID_PARAMS,
            message="invalid cursor",
            data={"remedy": "Pass the nextCursor of the previous page, or no cursor."},
        ) from None


def source_uri(name: str) -> str:
    return SOURCE_URI_PREFIX + quote(name, safe="")


class ResourceReader:
    """Serves the three resource requests from ``backend`` as each request's caller."""

    def __init__(self, backend: RetrievalBackend, caller_of: CallerOf) -> None:
        self._backend = backend
        self._caller_of = caller_of

    def _caller(self, ctx: Any) -> Caller:
        caller = self._caller_of(ctx)
        if caller is None:  # a transport that forgot to authenticate fails closed
            raise MCPError(code=types.INVALID_REQUEST, message=Unauthenticated.remedy)
        return caller

    async def _sources(self, caller: Caller) -> list[SourceInfo]:
        return [s for s in await self._backend.sources() if caller.may_read(s.name)]

    async def list_resources(
        self, ctx: Any, params: types.PaginatedRequestParams | None
    ) -> types.ListResourcesResult:
        caller = self._caller(ctx)
        offset = _decode_cursor(params.cursor if params is not None else None)
        sources = await self._sources(caller)
        page = sources[offset : offset + PAGE_SIZE]
        more = offset + PAGE_SIZE < len(sources)
        return types.ListResourcesResult(
            resources=[
                types.Resource(
                    uri=source_uri(s.name),
                    name=s.name,
                    title=f"Source {s.name}",
                    description=f"{s.chunks} chunks; search it, then read cited chunks "
                    f"({CHUNK_URI_PREFIX}{{id}}) or their documents.",
                    mime_type=TEXT,
                )
                for s in page
            ],
            next_cursor=_encode_cursor(offset + PAGE_SIZE) if more else None,
        )

    async def list_templates(
        self, ctx: Any, params: types.PaginatedRequestParams | None
    ) -> types.ListResourceTemplatesResult:
        self._caller(ctx)
        return types.ListResourceTemplatesResult(resource_templates=list(TEMPLATES))

    async def read(
        self, ctx: Any, params: types.ReadResourceRequestParams
    ) -> types.ReadResourceResult:
        caller = self._caller(ctx)
        uri = params.uri
        if uri.startswith(CHUNK_URI_PREFIX):
            chunk = await self._chunk(uri, uri.removeprefix(CHUNK_URI_PREFIX), caller)
            return types.ReadResourceResult(contents=[_chunk_contents(chunk)])
        if uri.startswith(DOCUMENT_URI_PREFIX):
            anchor = await self._chunk(uri, uri.removeprefix(DOCUMENT_URI_PREFIX), caller)
            return types.ReadResourceResult(contents=await self._document(uri, anchor, caller))
        if uri.startswith(SOURCE_URI_PREFIX):
            name = unquote(uri.removeprefix(SOURCE_URI_PREFIX))
            for s in await self._sources(caller):
                if s.name == name:
                    return types.ReadResourceResult(contents=[self._source_contents(uri, s)])
        raise not_found(uri)

    async def _chunk(self, uri: str, chunk_id: str, caller: Caller) -> Chunk:
        if not chunk_id or len(chunk_id) > 64 or "/" in chunk_id:
            raise not_found(uri)
        found = caller.readable(await self._backend.fetch([chunk_id]))
        if not found:
            raise not_found(uri)
        return found[0]

    async def _document(
        self, uri: str, anchor: Chunk, caller: Caller
    ) -> list[types.TextResourceContents | types.BlobResourceContents]:
        chunks = [anchor]
        p = anchor.provenance
        if Capability.NEIGHBORS in self._backend.capabilities():
            after = max(p.doc_chunks - p.ordinal, 0) or MAX_DOCUMENT_CHUNKS
            around = await cast(NeighborsBackend, self._backend).neighbors(
                anchor,
                before=min(p.ordinal, MAX_DOCUMENT_CHUNKS),
                after=min(after, MAX_DOCUMENT_CHUNKS),
            )
            chunks += around
        chunks = caller.readable(chunks)
        chunks.sort(key=lambda c: c.provenance.ordinal)
        chunks = chunks[:MAX_DOCUMENT_CHUNKS]
        hits = [Hit(chunk=c, score=1.0, legs={}) for c in chunks]
        passages = merge_passages(hits)
        flags = {c.id: list(chunk_flags(c)) for c in chunks}
        contents: list[types.TextResourceContents | types.BlobResourceContents] = []
        for passage in sorted(passages, key=lambda q: q.char_start):
            passage_flags = sorted({f for cid in passage.chunk_ids for f in flags.get(cid, [])})
            contents.append(
                types.TextResourceContents(
                    uri=uri,
                    mime_type=TEXT,
                    text=wrap(passage.text),
                    meta={
                        "provenance": dict(passage_provenance_view(passage)),
                        "flags": passage_flags,
                        "complete": p.doc_chunks == 0 or len(chunks) >= p.doc_chunks,
                    },
                )
            )
        return contents

    def _source_contents(self, uri: str, source: SourceInfo) -> types.TextResourceContents:
        capabilities = ", ".join(sorted(c.value for c in self._backend.capabilities()))
        return types.TextResourceContents(
            uri=uri,
            mime_type=TEXT,
            text=f"Source {source.name}: {source.chunks} chunks. Capabilities: {capabilities}.",
            meta={"name": source.name, "chunks": source.chunks},
        )


def _chunk_contents(chunk: Chunk) -> types.TextResourceContents:
    return types.TextResourceContents(
        uri=chunk_uri(chunk.id),
        mime_type=TEXT,
        text=wrap_sanitised(clean_text(chunk)),
        meta={
            "provenance": dict(provenance_view(chunk.provenance)),
            "flags": list(chunk_flags(chunk)),
            "metadata": chunk.metadata,
        },
    )
