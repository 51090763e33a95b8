"""Read the configured store's schema and propose the settings that map it.

``suggest_maps(settings, target=…)`` is the one entry point (``config suggest`` and the
later ``doctor --suggest`` call it): it connects with the settings' own connection
details and credentials (read-only, nothing is written), reads the schema of the
configured relation/collection/index (or of ``target``, or of every candidate it can
list), and returns ``Suggestion``s whose settings tables are complete: connection keys
are copied in, secrets only as the references the settings hold (``{env = …}``).
"""

from __future__ import annotations

from collections.abc import Mapping
from contextlib import AsyncExitStack
from typing import Any

import attrs
import trio

from retrieval_mcp.backends.schema_suggestion import Suggestion
from retrieval_mcp.encoders.minilm import DIMENSION as MINILM_DIMENSION
from retrieval_mcp.errors import ConfigError
from retrieval_mcp.json_http import HeaderSource, JsonHttp
from retrieval_mcp.settings import SecretRef, Settings


def configured_dimension(settings: Settings) -> int | None:
    """The query encoder's vector size, when it is known without calling it."""
    if settings.encoder.kind == "minilm-onnx":
        return MINILM_DIMENSION
    return settings.encoder.openai.dimension or None


def _ref(secret: SecretRef) -> dict[str, str] | None:
    dumped = secret.model_dump(exclude_defaults=True)
    return dumped or None


def _with_connection(
    suggestion: Suggestion, section: str, connection: Mapping[str, Any]
) -> Suggestion:
    """Put the connection keys first in ``section`` (adding it before the others if absent)."""
    tables = list(suggestion.tables)
    keep = {k: v for k, v in connection.items() if v not in (None, "", {})}
    for i, (name, values) in enumerate(tables):
        if name == section:
            tables[i] = (name, {**keep, **values})
            break
    else:
        at = next((i for i, (n, _) in enumerate(tables) if n.startswith(section)), len(tables))
        tables.insert(at, (section, keep))
    return attrs.evolve(suggestion, tables=tuple(tables))


async def _headers(values: Mapping[str, str]) -> Mapping[str, str]:
    return values


async def suggest_maps(settings: Settings, *, target: str | None = None) -> list[Suggestion]:
    """Suggestions for the store ``settings.backend`` points at (``target`` overrides the
    relation, collection or index to look at)."""
    backend = settings.backend
    dimension = configured_dimension(settings)
    if backend.kind == "postgres":
        from retrieval_mcp.backends import suggest_postgres

        pg = backend.postgres
        password = pg.password.read("backend.postgres.password")
        found = await trio.to_thread.run_sync(
            lambda: suggest_postgres.read_suggestions(
                pg,
                password=password,
                relation=target or pg.map.relation or None,
                encoder_dimension=dimension,
            )
        )
        connection = {
            "conninfo": pg.conninfo,
            "password": _ref(pg.password),
            "text_search_config": pg.text_search_config,
            "hnsw_ef_search": pg.hnsw_ef_search,
        }
        return [_with_connection(s, "backend.postgres", connection) for s in found]
    if backend.kind == "qdrant-remote":
        from retrieval_mcp.backends import suggest_qdrant

        qd = backend.qdrant_remote
        if not qd.url:
            raise ConfigError("backend.qdrant_remote.url is empty", remedy="Set it in --config.")
        key = qd.api_key.read("backend.qdrant_remote.api_key")
        header = {"api-key": key} if key else {}
        http = JsonHttp("Qdrant", qd.url, timeout_s=qd.timeout_s, headers=lambda: _headers(header))
        try:
            names = [target] if target else [qd.collection] if qd.collection else []
            names = names or list(qd.collections.values())
            found = await suggest_qdrant.read_suggestions(http, names, encoder_dimension=dimension)
        finally:
            await http.aclose()
        connection = {"url": qd.url, "api_key": _ref(qd.api_key)}
        return [_with_connection(s, "backend.qdrant_remote", connection) for s in found]
    if backend.kind == "azure-search":
        from retrieval_mcp.backends import suggest_search_indexes

        az = backend.azure_search
        index = target or az.index
        if not az.endpoint or not index:
            raise ConfigError(
                "backend.azure_search.endpoint and index must be set (or pass --target INDEX)"
            )
        key = az.api_key.read("backend.azure_search.api_key") or ""
        http = JsonHttp(
            "Azure AI Search",
            az.endpoint,
            timeout_s=az.timeout_s,
            headers=lambda: _headers({"api-key": key}),
        )
        try:
            found = await suggest_search_indexes.read_azure(
                http, index, az.api_version, encoder_dimension=dimension
            )
        finally:
            await http.aclose()
        connection = {
            "endpoint": az.endpoint,
            "api_version": az.api_version,
            "api_key": _ref(az.api_key),
        }
        return [_with_connection(s, "backend.azure_search", connection) for s in found]
    if backend.kind == "databricks":
        return await _databricks(settings, target, dimension)
    raise ConfigError(
        f"config suggest reads existing stores; backend.kind = {backend.kind!r} is the "
        "server's own store",
        remedy="Set [backend] kind to postgres, qdrant-remote, azure-search or databricks, "
        "with its connection details, in the file passed with --config.",
    )


async def _databricks(
    settings: Settings, target: str | None, dimension: int | None
) -> list[Suggestion]:
    from retrieval_mcp.backends import suggest_search_indexes
    from retrieval_mcp.backends.databricks_vector_search import DatabricksOAuth

    db = settings.backend.databricks
    if not db.workspace_url:
        raise ConfigError("backend.databricks.workspace_url is empty", remedy="Set it in --config.")
    indexes = [target] if target else list(db.indexes.values())
    if not indexes:
        raise ConfigError(
            "no Databricks index to read", remedy="Pass --target catalog.schema.index."
        )
    async with AsyncExitStack() as stack:
        headers: HeaderSource
        if db.auth == "oauth-m2m":
            secret = db.client_secret.read("backend.databricks.client_secret") or ""
            token_http = await stack.enter_async_context(
                JsonHttp("Databricks OAuth", db.workspace_url, timeout_s=db.timeout_s)
            )
            headers = DatabricksOAuth(token_http, db.client_id, secret).headers
        else:
            token = db.token.read("backend.databricks.token") or ""
            bearer = {"Authorization": f"Bearer {token}"}
            headers = lambda: _headers(bearer)  # noqa: E731
        http = await stack.enter_async_context(
            JsonHttp(
                "Databricks Vector Search",
                db.workspace_url,
                timeout_s=db.timeout_s,
                headers=headers,
            )
        )
        found = await suggest_search_indexes.read_databricks(
            http, indexes, encoder_dimension=dimension
        )
    connection: dict[str, Any] = {"workspace_url": db.workspace_url, "auth": db.auth}
    if db.auth == "oauth-m2m":
        connection |= {"client_id": db.client_id, "client_secret": _ref(db.client_secret)}
    else:
        connection["token"] = _ref(db.token)
    return [_with_connection(s, "backend.databricks", connection) for s in found]
