"""Settings: the one place the environment and the configuration file are read.

Precedence, lowest first: the shipped defaults (``config/server.toml``, installed as
``retrieval_mcp.defaults``), an operator file (``--config`` or ``LATENCE_CONFIG``),
then ``LATENCE_STATE_DIR`` and command-line flags. Every value is validated by
pydantic; unknown keys are errors, so a typo never silently falls back to a default.
"""

from __future__ import annotations

import ipaddress
import os
import tomllib
from importlib import resources
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from retrieval_mcp.errors import ConfigError, TransportConfigError

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
    require_auth: bool = True
    shutdown_grace_s: float = Field(5.0, gt=0, le=120)

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
    hnsw_ef: int = Field(128, ge=4, le=4096)


class BackendSettings(_Strict):
    kind: Literal["qdrant-embedded"] = "qdrant-embedded"
    qdrant_embedded: QdrantEmbeddedSettings = QdrantEmbeddedSettings()


class EncoderSettings(_Strict):
    kind: Literal["minilm-onnx"] = "minilm-onnx"
    max_tokens: int = Field(256, ge=8, le=512)
    batch_size: int = Field(16, ge=1, le=256)
    threads: int = Field(0, ge=0, le=64)
    query_cache_size: int = Field(1024, ge=0, le=1_000_000)


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


class StepSettings(_Strict):
    expand: bool
    rerank: bool


class PipelineConfig(_Strict):
    request_timeout_s: float = Field(5.0, gt=0, le=120)
    fusion: Literal["rrf", "dbsf"] = "rrf"
    rrf_k: int = Field(60, ge=1, le=1000)
    legs: LegsSettings = LegsSettings()
    guard: GuardConfig = GuardConfig()
    expand: ExpandSettings = ExpandSettings()
    rerank: RerankSettings = RerankSettings()
    pack: PackSettings = PackSettings()
    search: StepSettings = StepSettings(expand=False, rerank=False)
    get_context: StepSettings = StepSettings(expand=True, rerank=True)


class CopySettings(_Strict):
    # The operator's copy directory (holds copy.toml); empty = shipped copy only.
    # Loaded from there alone, never writable by an agent; reloaded on SIGHUP.
    dir: str = ""


class DemoSettings(_Strict):
    ingest_on_first_start: bool = True


class LoggingSettings(_Strict):
    level: Literal["debug", "info", "warning", "error"] = "info"


class Settings(_Strict):
    state_dir: Path
    server: ServerSettings = ServerSettings()
    backend: BackendSettings = BackendSettings()
    encoder: EncoderSettings = EncoderSettings()
    chunking: ChunkingSettings = ChunkingSettings()
    search: SearchSettings = SearchSettings()
    pipeline: PipelineConfig = PipelineConfig()
    copy_text: CopySettings = Field(CopySettings(), alias="copy")
    demo: DemoSettings = DemoSettings()
    logging: LoggingSettings = LoggingSettings()

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
    def copy_dir(self) -> Path | None:
        return Path(self.copy_text.dir).expanduser() if self.copy_text.dir else None

    @property
    def token_path(self) -> Path:
        return self.state_dir / "tokens.json"


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


def _deep_merge(base: dict[str, Any], override: dict[str, Any]) -> dict[str, Any]:
    merged = dict(base)
    for key, value in override.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = _deep_merge(merged[key], value)
        else:
            merged[key] = value
    return merged


def _read_toml(text: str, origin: str) -> dict[str, Any]:
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{origin}: not valid TOML: {exc}") from exc


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
        try:
            text = config_file.read_text("utf-8")
        except OSError as exc:
            raise ConfigError(f"cannot read config file {config_file}: {exc.strerror}") from exc
        data = _deep_merge(data, _read_toml(text, str(config_file)))
    if overrides:
        data = _deep_merge(data, overrides)
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
