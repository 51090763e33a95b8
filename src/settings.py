"""Settings: the one place the environment and the configuration file are read.

Precedence, lowest first: the shipped defaults (``config/server.toml``, installed as
``retrieval_mcp.defaults``), an operator file (``--config`` or ``LATENCE_CONFIG``),
then ``LATENCE_STATE_DIR`` and command-line flags. Every value is validated by
pydantic; unknown keys are errors, so a typo never silently falls back to a default.
"""

from __future__ import annotations

import ipaddress
import os
import re
import tomllib
from importlib import resources
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from retrieval_mcp.config_merge import deep_merge
from retrieval_mcp.errors import ConfigError, TransportConfigError
from retrieval_mcp.ingest.formats.format_settings import FormatSettings
from retrieval_mcp.logs import register_secret
from retrieval_mcp.wal.wal_settings import WalSettings

ENV_STATE_DIR = "LATENCE_STATE_DIR"
ENV_CONFIG = "LATENCE_CONFIG"


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ServerSettings(_Strict):
    host: str = "127.0.0.1"
    port: int = Field(8765, ge=0, le=65535)
    # Empty means "<state_dir>/server.sock"; "none" disables the Unix socket.
    unix_socket: str = ""
    allowed_origins: tuple[str, ...] = ()
    # Extra Host values (name:port) to accept besides the loopback names on our port.
    allowed_hosts: tuple[str, ...] = ()
    require_auth: bool = True
    shutdown_grace_s: float = Field(5.0, gt=0, le=120)

    @field_validator("allowed_origins")
    @classmethod
    def _serialised_origins(cls, values: tuple[str, ...]) -> tuple[str, ...]:
        for value in values:
            check_origin(value)
        return values

    @field_validator("host")
    @classmethod
    def _loopback_only(cls, value: str) -> str:
        if not is_loopback_host(value):
            raise ValueError(
                f"{value!r} is not a loopback address; this server binds loopback only "
                "(127.0.0.1, ::1 or localhost). Remote access is a separate transport."
            )
        return value


class QdrantEmbeddedSettings(_Strict):
    # Empty means "<state_dir>/store".
    path: str = ""
    # Search breadth for an HNSW graph of up to 200k points; a store whose largest
    # graph is bigger searches proportionally wider (×2.5 for 500k-point segments).
    hnsw_ef: int = Field(128, ge=4, le=4096)
    # No segment grows past this many points: set when a store is created, and ingest
    # commits (indexes) every this many chunks, so the engine builds bounded HNSW
    # graphs as segments fill, never one over a million points (ADR 0027). Searches
    # widen hnsw_ef with the largest graph's size (ADR 0054).
    max_segment_points: int = Field(500_000, ge=1_000, le=100_000_000)
    # Leg queries run on the event loop, not in a worker thread, while the store holds
    # at most this many points (0, the default: always a thread). The engine holds the
    # GIL while it searches, so a thread buys no parallelism, only the hand-off; but on
    # a busy shared host the extra runnable thread won more calls/s (ADR 0025).
    inline_max_points: int = Field(0, ge=0)
    # Leg queries issued together (one request's legs; under load, many requests')
    # run as one engine batch in one worker thread, instead of a thread hop per leg.
    batch_legs: bool = True
    # A leg batch runs on the event loop when nothing else is runnable there (no other
    # request in progress, no batch in the engine): the engine holds the GIL for the
    # whole call anyway, so the thread hop bought that lone request nothing but its cost.
    # Under load batches still take a worker thread (ADR 0025 amendment 2).
    inline_when_idle: bool = True
    # Threads the engine searches a query's segments with; 0 (the default): one per
    # indexed segment, at most one per usable core, fixed when the store is loaded. The
    # engine's own default (eight here) spins idle threads after every query (ADR 0055).
    search_threads: int = Field(0, ge=0, le=256)
    # Read the store's files into the page cache, up to this many MiB each time; 0 turns
    # it off. ``serve`` reads what the engine's load needs (dense vectors, graphs, id
    # trackers) while Python imports, and after ready the payload storage and payload
    # indexes that load leaves cold and every search reads: about 1.5 + 1.4 GiB per
    # million chunks (ADR 0053). Neither delays readiness; both stop with the server.
    prewarm_max_mib: int = Field(4096, ge=0, le=1_048_576)


_SQL_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,62}(\.[A-Za-z_][A-Za-z0-9_]{0,62})?$")
_URI_PASSWORD = re.compile(r"^[a-z0-9+.-]+://[^/@:]*:[^/@]+@", re.IGNORECASE)
_KV_PASSWORD = re.compile(r"(^|[\s?&])password\s*=", re.IGNORECASE)


class SecretRef(_Strict):
    """Where a credential lives: an environment variable or a 0600 file, never the value."""

    env: str = ""
    file: str = ""

    def read(self, what: str) -> str | None:
        """The secret, None when neither is set; ConfigError naming the fix otherwise.
        The value is registered with the log redactor before it is returned, so it is
        masked in every log line from then on, under any key or inside any message."""
        value = self._read(what)
        if value is not None:
            register_secret(value)
        return value

    def _read(self, what: str) -> str | None:
        if self.env and self.file:
            raise ConfigError(f"{what}: set env or file, not both")
        if self.env:
            value = os.environ.get(self.env, "").strip()
            if not value:
                raise ConfigError(
                    f"{what}: environment variable {self.env} is empty or not set",
                    remedy=f"Export {self.env} before starting the server.",
                )
            return value
        if not self.file:
            return None
        path = Path(self.file).expanduser()
        try:
            mode = path.stat().st_mode
            if mode & 0o077:
                raise ConfigError(
                    f"{what}: {path} is readable or writable by group or others",
                    remedy=f"chmod 600 {path}",
                )
            value = path.read_text("utf-8").strip()
        except OSError as exc:
            raise ConfigError(f"{what}: cannot read {path}: {exc.strerror}") from exc
        except UnicodeDecodeError:
            raise ConfigError(f"{what}: {path} is not UTF-8 text") from None
        if not value:
            raise ConfigError(f"{what}: {path} is empty")
        return value


class FieldMapSettings(_Strict):
    """Which field (column, payload key) of an existing index holds each part of a chunk.
    An empty name means the index has no such field (e.g. no ordinal: no neighbours)."""

    id: str = "id"
    text: str = "text"
    title: str = "title"
    source: str = "source"
    doc_id: str = "doc_id"
    ordinal: str = "ordinal"
    uri: str = "uri"
    metadata: str = ""  # a nested object holding the filterable metadata
    metadata_fields: tuple[str, ...] = ()  # top-level fields exposed as metadata


_SQL_COLUMN = re.compile(r"^[A-Za-z_][A-Za-z0-9_$]{0,62}$")


class PostgresMapSettings(_Strict):
    """An existing table or view the server reads but never writes: which column holds
    each part of a chunk. ``relation`` empty = the server's own table (``table``).
    Column names are matched exactly as the catalog spells them ("" = no such column)."""

    relation: str = ""  # a table, view or materialized view: "name" or "schema.name"
    id: str = "id"
    # "tenant": the id is unique only within a tenant; chunk ids become "<tenant>:<id>".
    id_scope: Literal["relation", "tenant"] = "relation"
    text: str = "text"
    embedding: str = ""  # a vector(d) or halfvec(d) column; "" = no dense leg
    keyword: bool = True  # the full-text leg (websearch_to_tsquery + ts_rank_cd)
    tsvector: str = ""  # an existing tsvector column; "" = to_tsvector(config, text) per query
    title: str = ""
    doc_id: str = ""  # doc_id + ordinal: neighbours (expand_neighbors, get_context's expand)
    ordinal: str = ""
    uri: str = ""
    metadata: str = ""  # a jsonb column of filterable metadata (containment, @>)
    metadata_columns: tuple[str, ...] = ()  # scalar columns exposed (and filterable) as metadata
    tenant: str = ""  # the tenant column: its values are the sources; every query filters on it
    tenants: tuple[str, ...] = ()  # the tenant values this deployment may read; () = every one
    source_name: str = ""  # without a tenant column: the one source's name ("" = relation name)

    @field_validator("relation")
    @classmethod
    def _relation_name(cls, value: str) -> str:
        if value and not _SQL_NAME.match(value):
            raise ValueError(f"{value!r} is not a plain relation name (name or schema.name)")
        return value

    @field_validator(
        "id",
        "text",
        "embedding",
        "tsvector",
        "title",
        "doc_id",
        "ordinal",
        "uri",
        "metadata",
        "tenant",
    )
    @classmethod
    def _column_name(cls, value: str) -> str:
        if value and not _SQL_COLUMN.match(value):
            raise ValueError(f"{value!r} is not a plain column name (letters, digits, _)")
        return value

    @field_validator("metadata_columns")
    @classmethod
    def _column_names(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        for name in value:
            cls._column_name(name)
        return value


class PostgresSettings(_Strict):
    # libpq URI or key=value string, without a password (that goes in `password`).
    conninfo: str = ""
    password: SecretRef = SecretRef()
    table: str = "latence_chunks"
    text_search_config: str = "english"
    hnsw_ef_search: int = Field(100, ge=1, le=1000)
    # The namespace: only these sources are ever read or written; () = every source.
    sources: tuple[str, ...] = ()
    pool_min_size: int = Field(1, ge=0, le=100)
    pool_max_size: int = Field(4, ge=1, le=100)
    connect_timeout_s: float = Field(5.0, gt=0, le=120)
    statement_timeout_s: float = Field(10.0, gt=0, le=600)
    # Set `map.relation` to read an existing table or view instead of our own.
    map: PostgresMapSettings = PostgresMapSettings()

    @model_validator(mode="after")
    def _mapped_namespace(self) -> PostgresSettings:
        if self.map.relation and self.sources:
            raise ValueError(
                "backend.postgres.sources bounds the server's own table; for a mapped "
                "relation name the readable values in backend.postgres.map.tenants"
            )
        return self

    @field_validator("conninfo")
    @classmethod
    def _no_inline_password(cls, value: str) -> str:
        if _URI_PASSWORD.match(value) or _KV_PASSWORD.search(value):
            raise ValueError(
                "conninfo must not contain a password; name an environment variable or a "
                "0600 file in backend.postgres.password instead"
            )
        return value

    @field_validator("table", "text_search_config")
    @classmethod
    def _sql_name(cls, value: str) -> str:
        if not _SQL_NAME.match(value):
            raise ValueError(f"{value!r} is not a plain SQL name (letters, digits, _)")
        return value


class QdrantLegSettings(_Strict):
    """One more leg of a remote collection: its named vector and where query vectors
    come from — Qdrant's own inference (``model``) or a TEI-shaped encoder endpoint
    (``endpoint``: ``POST /embed_sparse`` for sparse, ``POST /embed_all`` for multivector)."""

    vector: str = ""  # "" = no such leg
    model: str = ""  # server-side inference: the query is sent as {text, model}
    endpoint: str = ""  # e.g. http://127.0.0.1:8080 (text-embeddings-inference or alike)
    api_key: SecretRef = SecretRef()  # sent as a bearer token to the endpoint
    timeout_s: float = Field(10.0, gt=0, le=120)

    @model_validator(mode="after")
    def _one_query_side(self) -> QdrantLegSettings:
        if self.vector and bool(self.model) == bool(self.endpoint):
            raise ValueError(
                f"vector {self.vector!r}: set exactly one of model (Qdrant's inference) "
                "and endpoint (an encoder endpoint)"
            )
        return self


class QdrantRemoteSettings(_Strict):
    url: str = ""  # e.g. https://xyz.cloud.qdrant.io:6333 (REST)
    api_key: SecretRef = SecretRef()
    # Either one collection whose payload names the source, or one collection per source.
    collection: str = ""
    collections: dict[str, str] = Field(default_factory=dict)
    dense: bool = True
    dense_vector: str = "dense"  # "" = the collection's unnamed vector
    sparse_vector: str = ""  # a sparse vector for the bm25 leg; "" = no bm25 leg
    sparse_model: str = ""  # "" = BM25 encoded here; else server-side inference, e.g. qdrant/bm25
    sparse_leg: QdrantLegSettings = QdrantLegSettings()  # learned sparse (SPLADE-style)
    multivector_leg: QdrantLegSettings = QdrantLegSettings()  # late interaction (ColBERT-style)
    hnsw_ef: int = Field(128, ge=4, le=4096)
    timeout_s: float = Field(10.0, gt=0, le=120)
    fields: FieldMapSettings = FieldMapSettings(metadata="meta")


class DatabricksSettings(_Strict):
    workspace_url: str = ""  # https://<workspace>.cloud.databricks.com
    auth: Literal["pat", "oauth-m2m"] = "pat"
    token: SecretRef = SecretRef(env="DATABRICKS_TOKEN")  # PAT or OAuth access token
    client_id: str = ""  # oauth-m2m: service principal's application id
    client_secret: SecretRef = SecretRef()
    indexes: dict[str, str] = Field(default_factory=dict)  # source -> catalog.schema.index
    query: Literal["text", "vector"] = "text"  # text = managed embeddings
    dense_query_type: Literal["ANN", "HYBRID"] = "ANN"
    keyword_leg: bool = False  # FULL_TEXT queries as the bm25 leg
    timeout_s: float = Field(10.0, gt=0, le=120)
    fields: FieldMapSettings = FieldMapSettings(source="", uri="")


class AzureSearchSettings(_Strict):
    endpoint: str = ""  # https://<service>.search.windows.net
    index: str = ""
    api_version: str = "2024-07-01"
    api_key: SecretRef = SecretRef(env="AZURE_SEARCH_API_KEY")
    source_name: str = ""  # when fields.source is "": the index's one source ("" = index)
    vector_field: str = ""  # "" = no dense leg
    vector_query: Literal["vector", "text"] = "vector"  # text = the index's vectorizer
    keyword: bool = True
    semantic_configuration: str = ""  # set: the keyword leg uses the semantic ranker
    timeout_s: float = Field(10.0, gt=0, le=120)
    fields: FieldMapSettings = FieldMapSettings()


class BackendSettings(_Strict):
    kind: Literal["qdrant-embedded", "postgres", "qdrant-remote", "databricks", "azure-search"] = (
        "qdrant-embedded"
    )
    qdrant_embedded: QdrantEmbeddedSettings = QdrantEmbeddedSettings()
    postgres: PostgresSettings = PostgresSettings()
    qdrant_remote: QdrantRemoteSettings = QdrantRemoteSettings()
    databricks: DatabricksSettings = DatabricksSettings()
    azure_search: AzureSearchSettings = AzureSearchSettings()


class OpenAIEmbeddingSettings(_Strict):
    base_url: str = ""  # POST {base_url}/v1/embeddings (OpenAI, Ollama, vLLM, TEI)
    model: str = ""
    dimension: int = Field(0, ge=0, le=65_536)
    api_key: SecretRef = SecretRef()
    batch_size: int = Field(64, ge=1, le=2048)
    timeout_s: float = Field(30.0, gt=0, le=600)


class EncoderSettings(_Strict):
    # The query/document encoder of the adapters other than qdrant-embedded (which
    # always uses the bundled model); the bundled model also counts tokens.
    kind: Literal["minilm-onnx", "openai-compatible"] = "minilm-onnx"
    max_tokens: int = Field(256, ge=8, le=512)
    batch_size: int = Field(16, ge=1, le=256)
    threads: int = Field(0, ge=0, le=64)
    query_cache_size: int = Field(1024, ge=0, le=1_000_000)
    # The bundled model embeds queries on its graph rewritten to int8 MatMuls, prepared
    # before the server answers; "shipped" keeps them on the graph documents use (ADR 0052).
    query_graph: Literal["int8-matmul", "shipped"] = "int8-matmul"
    openai: OpenAIEmbeddingSettings = OpenAIEmbeddingSettings()


class ChunkingSettings(_Strict):
    chunk_chars: int = Field(1000, ge=100, le=20_000)
    overlap_chars: int = Field(150, ge=0, le=5_000)


class SearchSettings(_Strict):
    """Bounds of the agent-facing tools' arguments."""

    default_top_k: int = Field(8, ge=1, le=100)
    max_top_k: int = Field(50, ge=1, le=200)
    max_query_chars: int = Field(2000, ge=16, le=100_000)
    snippet_chars: int = Field(320, ge=40, le=4000)


class LegSettings(_Strict):
    # auto: use the leg when the backend declares it; on: expect it (missing = dropped
    # "unsupported", the answer is degraded); off: never use it.
    mode: Literal["auto", "on", "off"] = "auto"
    weight: float = Field(1.0, ge=0, le=100)
    candidates: int = Field(50, ge=1, le=1000)
    timeout_s: float = Field(2.0, gt=0, le=60)


class LegsSettings(_Strict):
    dense: LegSettings = LegSettings()
    bm25: LegSettings = LegSettings()
    sparse: LegSettings = LegSettings()
    multivector: LegSettings = LegSettings()


class GuardConfig(_Strict):
    min_score: float = Field(0.0, ge=0)
    alpha: float = Field(0.25, ge=0, le=1)


class ExpandSettings(_Strict):
    window: int = Field(1, ge=0, le=10)
    decay: float = Field(0.5, gt=0, le=1)


class RerankSettings(_Strict):
    kind: Literal["none", "mmr", "http", "cross-encoder"] = "mmr"
    mmr_lambda: float = Field(0.7, ge=0, le=1)
    http_url: str = ""
    http_api: Literal["tei", "v1"] = "tei"
    http_model: str = ""
    cross_encoder_path: str = ""
    timeout_s: float = Field(3.0, gt=0, le=60)


class PackSettings(_Strict):
    default_budget_tokens: int = Field(1500, ge=16, le=100_000)
    max_budget_tokens: int = Field(8000, ge=16, le=1_000_000)
    # How deep get_context reads the fused ranking for the pack's rank-order fill (the
    # pack never holds less than this ranking truncated to the budget).
    rank_depth: int = Field(50, ge=1, le=1000)


class StepSettings(_Strict):
    expand: bool
    rerank: bool


class PipelineConfig(_Strict):
    request_timeout_s: float = Field(5.0, gt=0, le=120)
    # Optional steps stop this long before the request deadline, so a degraded answer
    # is assembled inside it (ADR 0009); must be below request_timeout_s.
    answer_reserve_s: float = Field(0.05, gt=0, le=5)
    fusion: Literal["rrf", "dbsf"] = "rrf"
    rrf_k: int = Field(60, ge=1, le=1000)
    legs: LegsSettings = LegsSettings()
    guard: GuardConfig = GuardConfig()
    expand: ExpandSettings = ExpandSettings()
    rerank: RerankSettings = RerankSettings()
    pack: PackSettings = PackSettings()
    search: StepSettings = StepSettings(expand=False, rerank=False)
    get_context: StepSettings = StepSettings(expand=True, rerank=True)

    @model_validator(mode="after")
    def _reserve_below_deadline(self) -> PipelineConfig:
        if self.answer_reserve_s >= self.request_timeout_s:
            raise ValueError(
                f"answer_reserve_s ({self.answer_reserve_s}) must be below "
                f"request_timeout_s ({self.request_timeout_s})"
            )
        return self


class CopySettings(_Strict):
    # The operator's copy directory (holds copy.toml); empty = shipped copy only.
    # Loaded from there alone, never writable by an agent; reloaded on SIGHUP.
    dir: str = ""


class WatchSettings(_Strict):
    """One folder the server keeps in sync (design/decisions/0039)."""

    path: str
    source: str = Field(min_length=1, max_length=128)
    # Glob patterns on the path relative to the folder; empty include = every file.
    include: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    debounce_ms: int = Field(500, ge=10, le=60_000)


class IngestSettings(_Strict):
    watch: tuple[WatchSettings, ...] = ()

    @model_validator(mode="after")
    def _one_watch_per_source(self) -> IngestSettings:
        sources = [w.source for w in self.watch]
        if len(sources) != len(set(sources)):
            raise ValueError("each [[ingest.watch]] needs its own source")
        return self


class DemoSettings(_Strict):
    ingest_on_first_start: bool = True


class LoggingSettings(_Strict):
    level: Literal["debug", "info", "warning", "error"] = "info"
    # JSON lines to a rotating file; "" = <state_dir>/logs/server.log.
    file: str = ""
    file_max_bytes: int = Field(10 * 1024 * 1024, ge=4096, le=1 << 34)
    file_backups: int = Field(5, ge=0, le=100)
    # auto: also to stderr when stderr is a terminal.
    stderr: Literal["auto", "always", "never"] = "auto"
    # Debugging only: log query text, arguments and retrieved text. Secrets never.
    log_content: bool = False


class AuthSettings(_Strict):
    """Bearer-token reload, rotation and failed-auth backoff (see ADR 0010)."""

    reload_poll_s: float = Field(2.0, gt=0, le=3600)
    rotate_grace_s: float = Field(3600.0, ge=0, le=90 * 86400)
    failures_before_backoff: int = Field(5, ge=0, le=10_000)
    backoff_initial_s: float = Field(1.0, gt=0, le=3600)
    backoff_max_s: float = Field(60.0, gt=0, le=86400)


class RateSettings(_Strict):
    """A token bucket: ``burst`` requests at once, refilled at ``per_minute``."""

    per_minute: float = Field(gt=0, le=1_000_000)
    burst: int = Field(ge=1, le=1_000_000)


ToolKey = Literal[
    "search", "expand_neighbors", "more_like_this", "get_context", "list_sources", "index_status"
]


class LimitsSettings(_Strict):
    """Transport limits and rate limits (see ADR 0010)."""

    max_body_bytes: int = Field(1024 * 1024, ge=1024, le=64 * 1024 * 1024)
    body_timeout_s: float = Field(10.0, gt=0, le=600)
    idle_timeout_s: float = Field(5.0, gt=0, le=600)
    max_header_bytes: int = Field(16 * 1024, ge=1024, le=1024 * 1024)
    max_concurrent_requests: int = Field(64, ge=1, le=100_000)
    backlog: int = Field(128, ge=1, le=65_535)
    per_address: RateSettings = RateSettings(per_minute=6000, burst=1000)
    per_token: RateSettings = RateSettings(per_minute=6000, burst=2000)
    tools: dict[ToolKey, RateSettings] = Field(default_factory=dict)


class Settings(_Strict):
    state_dir: Path
    server: ServerSettings = ServerSettings()
    backend: BackendSettings = BackendSettings()
    encoder: EncoderSettings = EncoderSettings()
    chunking: ChunkingSettings = ChunkingSettings()
    formats: FormatSettings = FormatSettings()
    search: SearchSettings = SearchSettings()
    pipeline: PipelineConfig = PipelineConfig()
    copy_text: CopySettings = Field(CopySettings(), alias="copy")
    wal: WalSettings = WalSettings()
    demo: DemoSettings = DemoSettings()
    ingest: IngestSettings = IngestSettings()
    logging: LoggingSettings = LoggingSettings()
    auth: AuthSettings = AuthSettings()
    limits: LimitsSettings = LimitsSettings()

    @property
    def store_path(self) -> Path:
        configured = self.backend.qdrant_embedded.path
        return Path(configured).expanduser() if configured else self.state_dir / "store"

    @property
    def socket_path(self) -> Path | None:
        configured = self.server.unix_socket
        if configured == "none":
            return None
        return Path(configured).expanduser() if configured else self.state_dir / "server.sock"

    @property
    def wal_path(self) -> Path:
        return Path(self.wal.path).expanduser() if self.wal.path else self.state_dir / "wal"

    @property
    def copy_dir(self) -> Path | None:
        return Path(self.copy_text.dir).expanduser() if self.copy_text.dir else None

    @property
    def token_path(self) -> Path:
        return self.state_dir / "tokens.json"


_ORIGIN = re.compile(
    r"^(?P<scheme>[a-z][a-z0-9+.-]*)://"
    r"(?P<host>\[[0-9a-f:.]+\]|[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*)"
    r"(:(?P<port>[0-9]{1,5}))?$"
)
_DEFAULT_PORTS = {"http": "80", "https": "443"}


def check_origin(value: str) -> None:
    """Refuse what a browser never sends as ``Origin`` (RFC 6454's serialisation:
    lowercase ``scheme://host[:port]``, no path, default port omitted), so a listed
    origin can match, and ``"null"`` or ``"*"`` cannot open the server to every page."""
    if value in ("null", "*"):
        raise ValueError(
            f"{value!r} would admit any page (sandboxed iframes and file:// pages send "
            "'null'); list each browser origin exactly, e.g. 'http://localhost:3000'"
        )
    if "*" in value:
        raise ValueError(f"{value!r}: wildcards are not matched; list each origin exactly")
    match = _ORIGIN.match(value)
    if match is None:
        raise ValueError(
            f"{value!r} is not an origin: write scheme://host[:port] in lowercase, with no "
            "path or trailing slash, e.g. 'https://app.example.com'"
        )
    port = match.group("port")
    if port is not None and (int(port) > 65535 or port.startswith("0")):
        raise ValueError(f"{value!r}: port {port} is not a port number")
    if port is not None and _DEFAULT_PORTS.get(match.group("scheme")) == port:
        raise ValueError(
            f"{value!r}: browsers omit the default port; write "
            f"{match.group('scheme')}://{match.group('host')}"
        )


def is_loopback_host(host: str) -> bool:
    """True for names and addresses that can only be reached from this machine."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def default_state_dir() -> Path:
    base = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(base) / "latence-retrieval-mcp"


#: A settings file is a few kilobytes; anything this big is not one.
MAX_CONFIG_BYTES = 1024 * 1024


def _read_toml(text: str, origin: str) -> dict[str, Any]:
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{origin}: not valid TOML: {exc}") from exc
    except RecursionError:
        raise ConfigError(f"{origin}: not valid TOML: nested too deeply") from None


def _read_config_file(path: Path) -> str:
    """The file's text, or ConfigError (never another exception) saying why not."""
    try:
        with path.open("rb") as handle:
            raw = handle.read(MAX_CONFIG_BYTES + 1)
    except OSError as exc:
        raise ConfigError(f"cannot read config file {path}: {exc.strerror}") from None
    if len(raw) > MAX_CONFIG_BYTES:
        raise ConfigError(f"config file {path}: more than {MAX_CONFIG_BYTES} bytes")
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(f"config file {path}: not UTF-8 (byte {exc.start})") from None


def shipped_defaults() -> dict[str, Any]:
    text = resources.files("retrieval_mcp.defaults").joinpath("server.toml").read_text("utf-8")
    return _read_toml(text, "shipped config/server.toml")


def load_settings(
    config_file: Path | None = None,
    *,
    state_dir: Path | None = None,
    overrides: dict[str, Any] | None = None,
) -> Settings:
    """Build the validated settings; raise ConfigError naming the field on any problem."""
    data = shipped_defaults()
    config_file = config_file or (
        Path(os.environ[ENV_CONFIG]) if os.environ.get(ENV_CONFIG) else None
    )
    if config_file is not None:
        data = deep_merge(data, _read_toml(_read_config_file(config_file), str(config_file)))
    if overrides:
        data = deep_merge(data, overrides)
    chosen_state = state_dir or (
        Path(os.environ[ENV_STATE_DIR]) if os.environ.get(ENV_STATE_DIR) else None
    )
    if chosen_state is not None:
        data["state_dir"] = str(chosen_state)
    elif not data.get("state_dir"):
        data["state_dir"] = str(default_state_dir())
    data["state_dir"] = str(Path(str(data["state_dir"])).expanduser())
    try:
        return Settings.model_validate(data)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in err['loc'])}: {err['msg']}" for err in exc.errors()
        )
        error_type = (
            TransportConfigError
            if any(err["loc"][:1] == ("server",) for err in exc.errors())
            else ConfigError
        )
        raise error_type(f"invalid settings: {problems}") from exc
