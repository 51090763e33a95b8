"""Every cited hit and passage as a ``resource_link`` content item beside the text.

A client that understands resources can offer the agent (or its user) the passage to
open, and ``resources/read`` answers for it (``resources.py``), under the same scope
as the call that cited it. The links come from the ``resource_uri`` each hit, chunk and
passage view carries, so the structured data and the content items cite the same URIs.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import mcp_types as types

TEXT = "text/plain"


def _link(uri: str, name: str, title: str, description: str) -> types.ResourceLink:
    # Plain construction: measured 3x cheaper than model_construct for this model.
    return types.ResourceLink(
        type="resource_link",
        uri=uri,
        name=name,
        title=title or None,
        description=description,
        mime_type=TEXT,
    )


def _chunk_link(item: Mapping[str, Any]) -> types.ResourceLink:
    prov = item["provenance"]
    where = f"{prov['source']}:{prov['doc_id']}"
    ordinal = int(prov["ordinal"]) + 1
    of = prov.get("doc_chunks") or "?"
    return _link(
        str(item["resource_uri"]),
        f"{where}#{ordinal}",
        str(prov.get("title") or prov["doc_id"]),
        f"chunk {ordinal}/{of} of {where}, chars {prov['char_start']}-{prov['char_end']}",
    )


def _passage_link(item: Mapping[str, Any]) -> types.ResourceLink:
    prov = item["provenance"]
    where = f"{prov['source']}:{prov['doc_id']}"
    return _link(
        str(item["resource_uri"]),
        where,
        str(prov.get("title") or prov["doc_id"]),
        f"the document this passage (chars {prov['char_start']}-{prov['char_end']}) "
        "comes from, in reading order",
    )


def resource_links(data: Mapping[str, object]) -> list[types.ResourceLink]:
    """One link per hit, chunk or passage in a tool's ``data``, in the order given."""
    links: list[types.ResourceLink] = []
    for key in ("hits", "chunks"):
        items = data.get(key)
        if isinstance(items, list):
            links += [_chunk_link(item) for item in items]
    passages = data.get("passages")
    if isinstance(passages, list):
        links += [_passage_link(item) for item in passages]
    return links
