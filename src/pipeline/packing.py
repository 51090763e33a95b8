"""Pack hits into a token budget as passages ready to quote.

Chunks are chosen whole or not at all (a chunk is never split), in two passes. First
the fused ranking (``ranked``) in rank order, until a chunk does not fit: the pack
never holds less than plain top-k truncated to the budget would, so no step after
fusion (guard, expansion, rerank) can cost the agent a document its ranking had. Then
what is left of the budget goes greedily by score to everything else offered (the
neighbours expansion added, the chunks a reranker preferred, ranked chunks that did
not fit in turn). Overlapping or touching chunks of one document are then merged into
one passage (the overlap is paid for once). Passages are ordered for reading:
documents by their best score, passages within a document by position. Every passage
keeps the provenance of every chunk in it.

Counting tokens is the pack's main cost (a tokenizer pass per chunk offered, most of
which cannot fit what is left), so a counter may come with a cheap lower bound
(``floor``): a chunk whose floor exceeds what is left is passed over uncounted. That
changes no choice, since its count would exceed it too.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import attrs

from retrieval_mcp.records import Chunk, Hit

TokenCounter = Callable[[str], int]
PassageCounter = Callable[[list[Hit], str], int]


@attrs.frozen
class Passage:
    source: str
    doc_id: str
    title: str
    uri: str
    char_start: int
    char_end: int
    text: str
    chunk_ids: tuple[str, ...]
    ordinals: tuple[int, ...]
    score: float
    tokens: int


@attrs.frozen
class PackResult:
    passages: tuple[Passage, ...]
    tokens_used: int
    budget_tokens: int
    chunks_packed: int
    chunks_over_budget: int


def _mergeable(hit_end: int, nxt: Hit) -> bool:
    p = nxt.chunk.provenance
    return p.char_end > p.char_start and p.char_start <= hit_end


def pack(
    hits: Sequence[Hit],
    *,
    budget_tokens: int,
    count_tokens: TokenCounter,
    ranked: Sequence[Hit] = (),
    floor: TokenCounter | None = None,
) -> PackResult:
    if budget_tokens < 1:
        raise ValueError("budget_tokens must be >= 1")
    costs: dict[str, int] = {}

    def fits(chunk: Chunk, remaining: int) -> bool:
        """Whether ``chunk`` fits ``remaining``; its cost is remembered when counted.
        A count stored at ingest is taken when it is at least the floor (a store
        cannot shrink its chunks' cost below what the text must cost)."""
        stored = chunk.tokens
        if stored is not None and stored > remaining:
            return False  # as stated: an understated count is smaller still than the truth
        low = floor(chunk.text) if floor is not None else 0
        if stored is not None and stored >= low:
            costs[chunk.id] = stored
        elif low > remaining:
            return False
        else:
            costs[chunk.id] = count_tokens(chunk.text)
        return costs[chunk.id] <= remaining

    seen: set[str] = set()
    chosen: list[Hit] = []
    remaining = budget_tokens
    over_budget = 0
    for hit in ranked:  # the ranking's prefix that fits, in rank order
        if hit.chunk.id in seen:
            continue
        if not fits(hit.chunk, remaining):
            break
        seen.add(hit.chunk.id)
        chosen.append(hit)
        remaining -= costs[hit.chunk.id]
    for hit in sorted([*hits, *ranked], key=lambda h: -h.score):
        if hit.chunk.id in seen:
            continue
        seen.add(hit.chunk.id)
        if not fits(hit.chunk, remaining):
            over_budget += 1
            continue
        chosen.append(hit)
        remaining -= costs[hit.chunk.id]

    passages = _merge(chosen, lambda run, text: _tokens(run, text, costs, count_tokens))
    # Merging only removes text, but make the budget a guarantee, not a hope.
    while passages and sum(p.tokens for p in passages) > budget_tokens:
        weakest = min(passages, key=lambda p: p.score)
        passages.remove(weakest)
        over_budget += len(weakest.chunk_ids)
    best_by_doc: dict[tuple[str, str], float] = {}
    for p in passages:
        key = (p.source, p.doc_id)
        best_by_doc[key] = max(best_by_doc.get(key, float("-inf")), p.score)
    passages.sort(
        key=lambda p: (-best_by_doc[(p.source, p.doc_id)], p.source, p.doc_id, p.char_start)
    )
    return PackResult(
        passages=tuple(passages),
        tokens_used=sum(p.tokens for p in passages),
        budget_tokens=budget_tokens,
        chunks_packed=sum(len(p.chunk_ids) for p in passages),
        chunks_over_budget=over_budget,
    )


def merge_passages(hits: Sequence[Hit]) -> list[Passage]:
    """``hits`` merged into passages as a pack merges them, with no budget and no token
    counts (``tokens`` 0): a whole document read back as a resource."""
    return _merge(list(hits), lambda _run, _text: 0)


def _merge(chosen: list[Hit], tokens_of: PassageCounter) -> list[Passage]:
    by_doc: dict[tuple[str, str], list[Hit]] = {}
    for hit in chosen:
        p = hit.chunk.provenance
        by_doc.setdefault((p.source, p.doc_id), []).append(hit)
    passages: list[Passage] = []
    for group in by_doc.values():
        group.sort(key=lambda h: (h.chunk.provenance.char_start, h.chunk.provenance.ordinal))
        run = [group[0]]
        text = group[0].chunk.text
        end = group[0].chunk.provenance.char_end
        for hit in group[1:]:
            p = hit.chunk.provenance
            if _mergeable(end, hit) and len(text) == end - run[0].chunk.provenance.char_start:
                if p.char_end > end:
                    text += hit.chunk.text[end - p.char_start :]
                    end = p.char_end
                run.append(hit)
                continue
            passages.append(_passage(run, text, end, tokens_of))
            run, text, end = [hit], hit.chunk.text, p.char_end
        passages.append(_passage(run, text, end, tokens_of))
    return passages


def _passage(run: list[Hit], text: str, end: int, tokens_of: PassageCounter) -> Passage:
    first = run[0].chunk.provenance
    return Passage(
        source=first.source,
        doc_id=first.doc_id,
        title=first.title,
        uri=first.uri,
        char_start=first.char_start,
        char_end=end,
        text=text,
        chunk_ids=tuple(h.chunk.id for h in run),
        ordinals=tuple(h.chunk.provenance.ordinal for h in run),
        score=max(h.score for h in run),
        tokens=tokens_of(run, text),
    )


def _tokens(run: list[Hit], text: str, costs: dict[str, int], count_tokens: TokenCounter) -> int:
    """A passage's tokens: its one chunk's cost when the text is that chunk's, else a count."""
    first = run[0].chunk
    if text == first.text and first.id in costs:
        return costs[first.id]
    return count_tokens(text)
