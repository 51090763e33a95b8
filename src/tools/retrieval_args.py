"""Arguments shared by the retrieval tools, validated once, converted once."""

from __future__ import annotations

import re
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictInt, StrictStr

from retrieval_mcp.backends.protocol import Capability, SearchFilter
from retrieval_mcp.errors import InvalidArgument
from retrieval_mcp.settings import SearchSettings

FilterScalar = Annotated[StrictStr, Field(max_length=256)] | StrictInt | StrictBool
SourceName = Annotated[StrictStr, Field(min_length=1, max_length=256)]
ChunkId = Annotated[StrictStr, Field(min_length=1, max_length=64)]
_FILTER_KEY = re.compile(r"^[A-Za-z0-9_]{1,64}(\.[A-Za-z0-9_]{1,64}){0,3}$")


class ScopeArgs(BaseModel):
    """``sources`` and ``filter``: where to look."""

    model_config = ConfigDict(extra="forbid")

    sources: list[SourceName] | None = Field(default=None, max_length=32)
    filter: dict[str, FilterScalar | list[FilterScalar]] | None = Field(default=None, max_length=16)


def check_query(query: str, settings: SearchSettings) -> str:
    text = query.strip()
    if not text:
        raise InvalidArgument("query is blank", remedy="Pass a non-empty query string.")
    if len(text) > settings.max_query_chars:
        raise InvalidArgument(
            f"query is {len(text)} characters; the limit is {settings.max_query_chars}",
            remedy="Shorten the query to its key terms or question.",
        )
    return text


def check_top_k(top_k: int | None, settings: SearchSettings) -> int:
    value = settings.default_top_k if top_k is None else top_k
    if not 1 <= value <= settings.max_top_k:
        raise InvalidArgument(
            f"top_k={value} is outside 1..{settings.max_top_k}",
            remedy=f"Pass top_k between 1 and {settings.max_top_k}.",
        )
    return value


def scope_of(
    args: ScopeArgs, capabilities: frozenset[Capability]
) -> tuple[tuple[str, ...], SearchFilter | None]:
    sources = tuple(dict.fromkeys(args.sources or ()))
    if not args.filter:
        return sources, None
    if Capability.FILTER not in capabilities:
        raise InvalidArgument(
            "this server's backend does not support metadata filters",
            remedy="Call the tool without the filter argument.",
        )
    equals: dict[str, tuple[str | int | bool, ...]] = {}
    for key, value in args.filter.items():
        if not _FILTER_KEY.match(key):
            raise InvalidArgument(
                f"filter key {key!r} is not a valid field name",
                remedy="Use letters, digits and underscores, dotted for nesting.",
            )
        values = tuple(value) if isinstance(value, list) else (value,)
        if not values:
            raise InvalidArgument(
                f"filter[{key!r}] is an empty list", remedy="Give at least one allowed value."
            )
        equals[key] = values
    return sources, SearchFilter(equals=equals)
