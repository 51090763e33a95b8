"""What ``doctor`` knows about the collection's shape, and ``doctor --suggest``'s snippet.

SEAM (issue 14 ↔ issue 17). Per-kind collection introspection (Qdrant vector and
sparse names and payload keys seen in a sample; Postgres table, columns and index;
Azure index fields) and a ``config suggest`` command are being written on branch
issue-17-stores. Until they land on main, these two functions say what every backend
already reports and print the settings now in force with the mapping keys to check,
marked as not inferred. When ``config suggest`` exists, ``suggest_settings`` calls it
and ``collection_shape`` calls the introspection; nothing else in doctor changes.
"""

from __future__ import annotations

import json
from typing import Any

from retrieval_mcp.backends.protocol import RetrievalBackend
from retrieval_mcp.settings import Settings

_SECTION = {
    "postgres": "postgres",
    "qdrant-remote": "qdrant_remote",
    "databricks": "databricks",
    "azure-search": "azure_search",
}


def collection_shape(settings: Settings, backend: RetrievalBackend) -> str:
    """One line on the collection's shape beyond the declared capabilities ("" if none)."""
    if settings.backend.kind == "qdrant-embedded":
        return "the embedded store is this server's own (its fields match by construction)"
    return "field mapping not introspected yet (needs config suggest)"


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return str(value)
    if isinstance(value, list | tuple):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    return json.dumps(str(value))


async def suggest_settings(settings: Settings) -> str:
    """A settings snippet for the configured backend's collection."""
    kind = settings.backend.kind
    if kind == "qdrant-embedded":
        return (
            "# backend.kind = 'qdrant-embedded': the store is this server's own, nothing to map.\n"
            "# To search an existing collection, set [backend] kind to postgres, qdrant-remote,\n"
            "# databricks or azure-search (config/examples/ has one file per kind) and run\n"
            "# latence-retrieval-mcp doctor --suggest --config that-file.toml\n"
        )
    section = _SECTION[kind]
    current = getattr(settings.backend, section).model_dump(mode="json", exclude={"fields"})
    fields = getattr(settings.backend, section).fields.model_dump(mode="json")
    lines = [
        "# NOT inferred from the collection yet (introspection arrives with `config suggest`):",
        "# these are the settings in force; check each field name against your collection.",
        "[backend]",
        f'kind = "{kind}"',
        "",
        f"[backend.{section}]",
    ]
    for key, value in current.items():
        if isinstance(value, dict):
            if value and all(isinstance(v, str) for v in value.values()):
                lines.append(
                    f"{key} = {{ "
                    + ", ".join(f"{k} = {_toml_value(v)}" for k, v in value.items())
                    + " }"
                )
            continue
        lines.append(f"{key} = {_toml_value(value)}")
    lines += ["", f"[backend.{section}.fields]"]
    lines += [f"{key} = {_toml_value(value)}" for key, value in fields.items()]
    return "\n".join(lines) + "\n"
