"""The sparse and multivector legs of a remote Qdrant collection: which named vector
each uses, how its query is made, and the schema check at open.

A leg's query comes from Qdrant's own inference (a ``Document`` object,
``{"text": …, "model": …}``: Qdrant Cloud inference, or ``qdrant/bm25`` on any server)
or from a TEI-shaped endpoint (``tei_query_endpoints``). Scoring is the engine's: dot
product with the collection's IDF modifier for sparse vectors, MaxSim for multivectors.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from contextlib import AsyncExitStack, asynccontextmanager
from typing import Any

import attrs

from retrieval_mcp.backends.tei_query_endpoints import (
    MultivectorQueryEndpoint,
    SparseQueryEndpoint,
    matrix_width,
)
from retrieval_mcp.errors import ConfigError
from retrieval_mcp.settings import QdrantLegSettings, QdrantRemoteSettings

Json = dict[str, Any]


@attrs.frozen
class VectorLeg:
    """One leg over one named vector; owns ``encoder`` (closed by the adapter)."""

    kind: str  # "sparse" | "multivector"
    vector: str
    model: str = ""
    encoder: SparseQueryEndpoint | MultivectorQueryEndpoint | None = None
    size: int = 0  # multivector: the token vector size the collection holds

    async def query(self, text: str) -> Any | None:
        """The ``query`` of a points/query request; None when there is nothing to match."""
        if self.model:
            return {"text": text, "model": self.model}
        if isinstance(self.encoder, SparseQueryEndpoint):
            sparse = await self.encoder.encode(text)
            return sparse.to_json() if sparse.indices else None
        assert isinstance(self.encoder, MultivectorQueryEndpoint)
        matrix = await self.encoder.encode(text)
        if self.size and matrix_width(matrix) != self.size:
            raise self.width_mismatch(matrix_width(matrix))
        return matrix

    def width_mismatch(self, width: int) -> ConfigError:
        return ConfigError(
            f"the multivector endpoint makes {width}-d token vectors; the collection's "
            f"multivector {self.vector!r} holds {self.size}-d ones",
            remedy="Point backend.qdrant_remote.multivector_leg.endpoint at the model that "
            "built the collection.",
        )

    def statistics(self) -> dict[str, Any]:
        source = f"qdrant inference {self.model}" if self.model else "endpoint"
        stats: dict[str, Any] = {"vector": self.vector, "query": source}
        if self.encoder is not None:
            stats["cache"] = self.encoder.statistics()
        return stats

    async def aclose(self) -> None:
        if self.encoder is not None:
            await self.encoder.aclose()


def build_legs(
    settings: QdrantRemoteSettings, *, cache_size: int
) -> tuple[VectorLeg | None, VectorLeg | None]:
    """(sparse, multivector) legs from config; the caller owns (closes) what is returned.
    Every check runs before any client is built, so a failure leaves nothing to close."""
    checked: list[tuple[str, QdrantLegSettings, str | None] | None] = []
    for kind, leg in (("sparse", settings.sparse_leg), ("multivector", settings.multivector_leg)):
        if not leg.vector:
            checked.append(None)
            continue
        key = None
        if not leg.model:
            key = leg.api_key.read(f"backend.qdrant_remote.{kind}_leg.api_key")
            if not leg.endpoint.startswith(("http://", "https://")):
                raise ConfigError(
                    f"backend.qdrant_remote.{kind}_leg.endpoint {leg.endpoint!r} is not an "
                    "http(s) URL",
                    remedy="Set it to the encoder's base URL, e.g. http://127.0.0.1:8080.",
                )
        checked.append((kind, leg, key))

    def build(spec: tuple[str, QdrantLegSettings, str | None] | None) -> VectorLeg | None:
        if spec is None:
            return None
        kind, leg, key = spec
        if leg.model:
            return VectorLeg(kind, leg.vector, model=leg.model)
        cls = SparseQueryEndpoint if kind == "sparse" else MultivectorQueryEndpoint
        encoder = cls(leg.endpoint, api_key=key, timeout_s=leg.timeout_s, cache_size=cache_size)
        return VectorLeg(kind, leg.vector, encoder=encoder)

    return build(checked[0]), build(checked[1])


@asynccontextmanager
async def open_query_legs(
    settings: QdrantRemoteSettings, *, cache_size: int
) -> AsyncIterator[tuple[VectorLeg | None, VectorLeg | None]]:
    """The configured (sparse, multivector) legs; their encoder clients are closed
    (shielded, bounded) when the block ends."""
    async with AsyncExitStack() as stack:
        legs = build_legs(settings, cache_size=cache_size)
        for leg in legs:
            if leg is not None:
                stack.push_async_callback(leg.aclose)
        yield legs


def is_multivector(params: Mapping[str, Any]) -> bool:
    return bool(params.get("multivector_config"))


def check_legs(
    collection: str,
    vectors: Mapping[str, Any],
    sparse_vectors: Mapping[str, Any],
    legs: tuple[VectorLeg | None, VectorLeg | None],
) -> VectorLeg | None:
    """Refuse a leg whose vector the collection lacks (or has as another kind), naming
    what it has; returns the multivector leg with the collection's token size set."""
    sparse, multi = legs
    if sparse is not None and sparse.vector not in sparse_vectors:
        raise ConfigError(
            f"Qdrant collection {collection!r} has no sparse vector named {sparse.vector!r} "
            f"(it has: {', '.join(sparse_vectors) or 'none'})",
            remedy="Set backend.qdrant_remote.sparse_leg.vector to one of those, or to '' "
            "to run without the sparse leg.",
        )
    if multi is None:
        return None
    found = vectors.get(multi.vector) if "size" not in vectors else None
    multivectors = [n for n, p in vectors.items() if isinstance(p, Mapping) and is_multivector(p)]
    if not isinstance(found, Mapping) or not is_multivector(found):
        raise ConfigError(
            f"Qdrant collection {collection!r} has no multivector named {multi.vector!r} "
            f"(its multivectors: {', '.join(multivectors) or 'none'})",
            remedy="Set backend.qdrant_remote.multivector_leg.vector to one of those, or "
            "to '' to run without the multivector leg.",
        )
    size = int(found["size"])
    if multi.size and multi.size != size:
        raise ConfigError(
            f"Qdrant collections disagree on the size of multivector {multi.vector!r} "
            f"({multi.size} and {size})"
        )
    return attrs.evolve(multi, size=size)
