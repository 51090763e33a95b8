"""What ``doctor`` knows about the collection's shape, and ``doctor --suggest``'s snippet.

Both come from the store introspection behind ``latence-retrieval-mcp config suggest``
(``backends/map_suggestions.py``): it reads the Postgres relation, the Qdrant
collection, or the Azure / Databricks index the settings point at and proposes the map.
``doctor`` compares what the store offers with what the configured backend declares;
``--suggest`` prints the same TOML as ``config suggest``. The embedded store is the
server's own: there is nothing to map.
"""

from __future__ import annotations

from retrieval_mcp.backends.map_suggestions import suggest_maps
from retrieval_mcp.backends.protocol import RetrievalBackend
from retrieval_mcp.backends.schema_suggestion import render_toml
from retrieval_mcp.errors import RetrievalMCPError
from retrieval_mcp.settings import Settings

EMBEDDED = "qdrant-embedded"


async def collection_shape(settings: Settings, backend: RetrievalBackend) -> tuple[str, str]:
    """(one line on the collection's shape, a remedy when the map leaves something out)."""
    if settings.backend.kind == EMBEDDED:
        return "the embedded store is this server's own (its fields match by construction)", ""
    try:
        suggestions = await suggest_maps(settings)
    except RetrievalMCPError as exc:
        return f"could not read the store's schema: {exc.message}", exc.remedy
    if not suggestions:
        return "no table, collection or index found to compare with", ""
    found = suggestions[0]
    declared = {c.value for c in backend.capabilities()}
    offered = [*found.legs, *found.features]
    unmapped = [name for name in offered if name not in declared]
    line = f"{found.target} offers {', '.join(offered) or 'nothing searchable'}"
    if unmapped:
        return (
            f"{line}; not mapped: {', '.join(unmapped)}",
            "latence-retrieval-mcp doctor --suggest prints a map that uses them",
        )
    return line, ""


async def suggest_settings(settings: Settings) -> str:
    """A settings snippet for the configured backend's collection."""
    if settings.backend.kind == EMBEDDED:
        return (
            "# backend.kind = 'qdrant-embedded': the store is this server's own, nothing to map.\n"
            "# To search an existing collection, set [backend] kind to postgres, qdrant-remote,\n"
            "# databricks or azure-search (config/examples/ has one file per kind) and run\n"
            "# latence-retrieval-mcp doctor --suggest --config that-file.toml\n"
        )
    return render_toml(await suggest_maps(settings))
