"""Collapse a chunk ranking to a document ranking: the best chunk stands for its document.

Asked for ten results, an agent wants ten sources, not four documents' chunks. The
fused ranking is read deeper than ``top_k`` (``COLLAPSE_DEPTH`` times; once more,
``COLLAPSE_DEPTH`` times deeper again, when one long document filled it) and each
document's best-ranked chunk keeps its place; the document's other chunks in that
depth are counted beside it, so the agent knows there is more to read there. Fusion
runs in this process over several legs, so an engine's own group-by (Qdrant's
``query_points_groups``) could group only one leg; collapsing after fusion is the one
place where every leg's evidence is in.
"""

from __future__ import annotations

from collections.abc import Sequence

import attrs

from retrieval_mcp.records import Hit

#: How much deeper than ``top_k`` the fused ranking is read before collapsing. Chunks
#: of one document rarely take more than three of the top places (measured on Cranfield:
#: see bench/RESULTS.md, "Collapse by document").
COLLAPSE_DEPTH = 4


@attrs.frozen
class Collapsed:
    hit: Hit
    other_chunks: int  # further chunks of the same document in the ranking read


def collapse_by_document(hits: Sequence[Hit], limit: int) -> list[Collapsed]:
    """The first ``limit`` distinct documents of ``hits`` (in rank order), each with the
    number of its other chunks anywhere in ``hits``."""
    best: dict[tuple[str, str], int] = {}
    others: list[int] = []
    order: list[Hit] = []
    for hit in hits:
        p = hit.chunk.provenance
        key = (p.source, p.doc_id)
        slot = best.get(key)
        if slot is None:
            best[key] = len(order)
            order.append(hit)
            others.append(0)
        else:
            others[slot] += 1
    return [Collapsed(hit=h, other_chunks=n) for h, n in zip(order, others, strict=True)][:limit]
