"""A proposed field map for a store someone else built, and its rendering as settings.

The per-kind readers (``suggest_postgres``, ``suggest_qdrant``, ``suggest_azure``,
``suggest_databricks``) look at a store's schema and return a ``Suggestion``: the
settings tables that would map it, settings that need a choice only the operator can
make (commented out), the legs the map would declare, and notes on what stands in the
way (no vector index, another embedding dimension, a field nobody can filter on).
``render_toml`` prints suggestions as a settings snippet; ``doctor --suggest`` and
``config suggest`` print the same thing.

The name heuristics here are guesses ranked by how other tools name things
(LangChain, LlamaIndex, Haystack, the memory server of seed 002); every guess is
checked again by the adapter at start.
"""

from __future__ import annotations

import json
import textwrap
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import attrs

#: Ranked candidate names per role (matched case-insensitively, first hit wins).
ID_NAMES = ("id", "chunk_id", "uuid", "point_id", "pk", "key", "node_id", "doc_chunk_id")
TEXT_NAMES = (
    "text",
    "content",
    "chunk",
    "chunk_text",
    "body",
    "value",
    "page_content",
    "passage",
    "document",
    "contents",
)
TITLE_NAMES = ("title", "heading", "headline", "subject", "name", "section")
DOC_ID_NAMES = (
    "doc_id",
    "document_id",
    "parent_id",
    "source_id",
    "file_id",
    "ref_doc_id",
    "doc",
    "document",
    "file",
    "file_name",
    "path",
)
ORDINAL_NAMES = (
    "ordinal",
    "position",
    "chunk_index",
    "chunk_idx",
    "chunk_number",
    "chunk_id_in_doc",
    "seq",
    "idx",
    "part",
)
TENANT_NAMES = (
    "namespace",
    "tenant",
    "tenant_id",
    "project",
    "project_id",
    "org_id",
    "workspace",
    "collection",
    "collection_id",
    "source",
    "corpus",
)
URI_NAMES = ("uri", "url", "link", "href", "source_url")
METADATA_NAMES = ("metadata", "meta", "cmetadata", "metadata_", "attributes", "properties")
EMBEDDING_NAMES = ("embedding", "embeddings", "vector", "emb", "dense", "text_vector")

#: At most this many scalar fields are proposed as filterable metadata.
MAX_METADATA_FIELDS = 8


def pick(names: Iterable[str], candidates: Sequence[str], *, taken: Iterable[str] = ()) -> str:
    """The first of ``candidates`` (ranked) present in ``names``, not already taken; ""."""
    available = {n.lower(): n for n in names if n not in set(taken)}
    for candidate in candidates:
        if candidate in available:
            return available[candidate]
    return ""


@attrs.frozen
class Choice:
    """A setting only the operator can complete; rendered commented out."""

    section: str
    key: str
    value: Any
    why: str


@attrs.frozen
class Suggestion:
    kind: str  # backend.kind
    target: str  # the relation, collection or index looked at
    tables: tuple[tuple[str, Mapping[str, Any]], ...]  # (section, values), in order
    legs: tuple[str, ...] = ()
    features: tuple[str, ...] = ()  # filter, neighbors, similar, vectors
    notes: tuple[str, ...] = ()
    optional: tuple[Choice, ...] = ()

    def to_json(self) -> dict[str, Any]:
        """Plain data, for callers that are not printing TOML (``doctor --suggest``)."""
        return {
            "kind": self.kind,
            "target": self.target,
            "settings": {section: dict(values) for section, values in self.tables},
            "legs": list(self.legs),
            "features": list(self.features),
            "notes": list(self.notes),
            "optional": [attrs.asdict(o) for o in self.optional],
        }


def toml_value(value: Any) -> str:
    """One TOML value. Strings use JSON escapes (a subset of TOML's basic strings)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, Mapping):
        inner = ", ".join(f"{_key(k)} = {toml_value(v)}" for k, v in value.items())
        return "{ " + inner + " }" if inner else "{}"
    if isinstance(value, list | tuple):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    raise TypeError(f"no TOML form for {type(value).__name__}")


def _key(key: str) -> str:
    return key if key.replace("_", "").replace("-", "").isalnum() else json.dumps(key)


def _render_one(suggestion: Suggestion, *, commented: bool) -> list[str]:
    prefix = "# " if commented else ""
    lines = [f"# --- {suggestion.kind}: {suggestion.target}"]
    legs = ", ".join(suggestion.legs) or "none"
    features = ", ".join(suggestion.features) or "none"
    lines.append(f"# legs: {legs}; features: {features}")
    for note in suggestion.notes:
        lines += textwrap.wrap(note, 96, initial_indent="# note: ", subsequent_indent="#   ")
    for section, values in suggestion.tables:
        lines.append(f"{prefix}[{section}]")
        lines += [f"{prefix}{_key(k)} = {toml_value(v)}" for k, v in values.items()]
        extra = [o for o in suggestion.optional if o.section == section]
        for option in extra:
            lines.append(f"# {_key(option.key)} = {toml_value(option.value)}  # {option.why}")
        lines.append("")
    for option in suggestion.optional:
        if option.section not in {s for s, _ in suggestion.tables}:
            lines.append(f"# [{option.section}]")
            lines.append(f"# {_key(option.key)} = {toml_value(option.value)}  # {option.why}")
            lines.append("")
    return lines


def render_toml(suggestions: Sequence[Suggestion]) -> str:
    """A settings snippet: the first suggestion active, any others commented out."""
    if not suggestions:
        return "# nothing to suggest: no table, collection or index was found\n"
    lines = [
        "# Proposed by `latence-retrieval-mcp config suggest`: check every guess, then",
        "# paste it over the [backend] part of your settings file. The server checks the",
        "# map again at start and refuses, naming the field, what cannot work.",
        "",
    ]
    for i, suggestion in enumerate(suggestions):
        if i == 1:
            lines.append("# Other candidates (uncomment one instead of the above):")
        lines += _render_one(suggestion, commented=i > 0)
    return "\n".join(lines).rstrip() + "\n"
