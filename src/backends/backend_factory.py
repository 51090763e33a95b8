"""Build the configured adapter (every kind but the embedded store) from settings.

``services.open_backend`` keeps the embedded default path itself and comes here for
``backend.kind`` = ``postgres``, ``qdrant-remote``, ``databricks`` or ``azure-search``.
Credentials are read here, once, through ``SecretRef`` (environment variable or 0600
file); the encoder is built only when the adapter encodes on our side.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import trio

from retrieval_mcp.backends.azure_ai_search import AzureAISearchBackend
from retrieval_mcp.backends.databricks_vector_search import (
    DatabricksOAuth,
    DatabricksVectorSearchBackend,
)
from retrieval_mcp.backends.field_map import FieldMap
from retrieval_mcp.backends.protocol import RetrievalBackend
from retrieval_mcp.backends.qdrant_query_legs import build_legs
from retrieval_mcp.backends.qdrant_remote import QdrantRemoteBackend
from retrieval_mcp.encoders.embedding_provider import BundledMiniLM, EmbeddingProvider
from retrieval_mcp.encoders.minilm import MiniLMEncoder
from retrieval_mcp.encoders.openai_compatible import OpenAICompatibleEmbeddings
from retrieval_mcp.errors import ConfigError
from retrieval_mcp.json_http import HeaderSource, JsonHttp
from retrieval_mcp.settings import Settings

MiniLMLoader = Callable[[], Awaitable[MiniLMEncoder]]


def check_encoder_choice(settings: Settings) -> None:
    """The embedded store always uses the bundled model: refuse a config that says otherwise."""
    if settings.backend.kind == "qdrant-embedded" and settings.encoder.kind != "minilm-onnx":
        raise ConfigError(
            "encoder.kind = 'openai-compatible' needs another backend: the embedded store "
            "uses the bundled model",
            remedy="Set encoder.kind = 'minilm-onnx', or choose backend.kind = 'postgres'.",
        )


async def build_embedder(settings: Settings, load_minilm: MiniLMLoader) -> EmbeddingProvider:
    """The configured encoder as an EmbeddingProvider; the caller owns (closes) it."""
    encoder = settings.encoder
    if encoder.kind == "minilm-onnx":
        return BundledMiniLM(await load_minilm())
    o = encoder.openai
    provider = OpenAICompatibleEmbeddings(
        o.base_url,
        o.model,
        dimension=o.dimension,
        api_key=o.api_key.read("encoder.openai.api_key"),
        batch_size=o.batch_size,
        timeout_s=o.timeout_s,
    )
    if provider.dimension == 0:
        try:
            await provider.probe()
        except BaseException:
            await provider.aclose()
            raise
    return provider


async def open_adapter(settings: Settings, load_minilm: MiniLMLoader) -> RetrievalBackend:
    """Open the adapter named by ``settings.backend.kind``; the caller owns and closes it."""
    backend = settings.backend
    cache = settings.encoder.query_cache_size
    if backend.kind == "postgres":
        try:
            from retrieval_mcp.backends.pgvector import PgvectorBackend
        except ImportError as exc:
            raise ConfigError(
                f"backend.kind = 'postgres' needs psycopg: {exc}",
                remedy="pip install 'latence-retrieval-mcp[postgres]'",
            ) from exc
        pg = backend.postgres
        password = pg.password.read("backend.postgres.password")
        if pg.map.relation:  # an existing table or view, read-only
            from retrieval_mcp.backends.pgvector_mapped import MappedPgBackend

            mapped_embedder = (
                await build_embedder(settings, load_minilm) if pg.map.embedding else None
            )
            return await MappedPgBackend.open(
                pg, mapped_embedder, password=password, query_cache_size=cache
            )
        pg_embedder = await build_embedder(settings, load_minilm)
        return await PgvectorBackend.open(
            pg, pg_embedder, password=password, query_cache_size=cache
        )
    if backend.kind == "qdrant-remote":
        qd = backend.qdrant_remote
        api_key = qd.api_key.read("backend.qdrant_remote.api_key")
        headers = {"api-key": api_key} if api_key else {}

        async def qdrant_headers() -> dict[str, str]:
            return headers

        url = _require(qd.url, "backend.qdrant_remote.url")
        embedder: EmbeddingProvider | None = (
            await build_embedder(settings, load_minilm) if qd.dense else None
        )
        http = await _http_or_close(embedder, "Qdrant", url, qd.timeout_s, qdrant_headers)
        try:
            sparse_leg, multivector_leg = build_legs(qd, cache_size=cache)
        except BaseException:
            await _close_all(http, embedder)
            raise
        return await QdrantRemoteBackend.open(
            http,
            embedder=embedder,
            fields=FieldMap.from_settings(qd.fields),
            collection=qd.collection,
            collections=qd.collections,
            dense=qd.dense,
            dense_vector=qd.dense_vector,
            sparse_vector=qd.sparse_vector,
            sparse_model=qd.sparse_model,
            sparse_leg=sparse_leg,
            multivector_leg=multivector_leg,
            hnsw_ef=qd.hnsw_ef,
            query_cache_size=cache,
        )
    if backend.kind == "databricks":
        db = backend.databricks
        url = _require(db.workspace_url, "backend.databricks.workspace_url")
        oauth: DatabricksOAuth | None = None
        if db.auth == "oauth-m2m":
            secret = db.client_secret.read("backend.databricks.client_secret")
            if not db.client_id or not secret:
                raise ConfigError(
                    "backend.databricks.auth = 'oauth-m2m' needs client_id and client_secret"
                )
            oauth = DatabricksOAuth(
                JsonHttp("Databricks OAuth", url, timeout_s=db.timeout_s), db.client_id, secret
            )
            headers_source = oauth.headers
        else:
            token = db.token.read("backend.databricks.token")
            if not token:
                raise ConfigError(
                    "backend.databricks.token names no environment variable or file",
                    remedy='Set backend.databricks.token = {env = "DATABRICKS_TOKEN"}.',
                )
            bearer = {"Authorization": f"Bearer {token}"}

            async def pat_headers() -> dict[str, str]:
                return bearer

            headers_source = pat_headers
        try:
            db_embedder = (
                await build_embedder(settings, load_minilm) if db.query == "vector" else None
            )
        except BaseException:
            await _close_all(None, None, oauth)
            raise
        http = await _http_or_close(
            db_embedder, "Databricks Vector Search", url, db.timeout_s, headers_source, oauth
        )
        try:
            databricks = DatabricksVectorSearchBackend(
                http,
                indexes=db.indexes,
                fields=FieldMap.from_settings(db.fields),
                embedder=db_embedder,
                query=db.query,
                dense_query_type=db.dense_query_type,
                keyword_leg=db.keyword_leg,
                oauth=oauth,
                query_cache_size=cache,
            )
            await databricks.check_indexes()  # refuse a map the indexes cannot serve
            return databricks
        except BaseException:
            await _close_all(http, db_embedder, oauth)
            raise
    if backend.kind == "azure-search":
        az = backend.azure_search
        url = _require(az.endpoint, "backend.azure_search.endpoint")
        key = az.api_key.read("backend.azure_search.api_key")
        if not key:
            raise ConfigError(
                "backend.azure_search.api_key names no environment variable or file",
                remedy='Set backend.azure_search.api_key = {env = "AZURE_SEARCH_API_KEY"}.',
            )
        key_header = {"api-key": key}

        async def azure_headers() -> dict[str, str]:
            return key_header

        needs_embedder = bool(az.vector_field) and az.vector_query == "vector"
        az_embedder = await build_embedder(settings, load_minilm) if needs_embedder else None
        http = await _http_or_close(
            az_embedder, "Azure AI Search", url, az.timeout_s, azure_headers
        )
        try:
            azure = AzureAISearchBackend(
                http,
                index=az.index,
                api_version=az.api_version,
                fields=FieldMap.from_settings(az.fields),
                source_name=az.source_name,
                vector_field=az.vector_field,
                vector_query=az.vector_query,
                keyword=az.keyword,
                semantic_configuration=az.semantic_configuration,
                embedder=az_embedder,
                query_cache_size=cache,
            )
            await azure.check_index()  # refuse a field map the index cannot serve
            return azure
        except BaseException:
            await _close_all(http, az_embedder)
            raise
    raise ConfigError(f"backend.kind {backend.kind!r} is not built by the adapter factory")


async def _http_or_close(
    embedder: EmbeddingProvider | None,
    service: str,
    url: str,
    timeout_s: float,
    headers: HeaderSource,
    oauth: DatabricksOAuth | None = None,
) -> JsonHttp:
    """A JsonHttp for ``url``; if the URL is refused, close what was already built."""
    try:
        return JsonHttp(service, url, timeout_s=timeout_s, headers=headers)
    except BaseException:
        await _close_all(None, embedder, oauth)
        raise


async def _close_all(
    http: JsonHttp | None, embedder: EmbeddingProvider | None, oauth: DatabricksOAuth | None = None
) -> None:
    with trio.CancelScope(shield=True):
        for resource in (http, embedder, oauth):
            if resource is not None:
                await resource.aclose()


def _require(value: str, name: str) -> str:
    if not value:
        raise ConfigError(f"{name} is empty", remedy=f"Set {name} in the server config.")
    return value
