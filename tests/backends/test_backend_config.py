"""Backend config: secrets from the environment or a 0600 file only, the encoder
choice, and read-only backends refusing ingest with a remedy."""

from __future__ import annotations

from pathlib import Path

import pytest

from retrieval_mcp.backends.backend_factory import check_encoder_choice
from retrieval_mcp.backends.databricks_vector_search import DatabricksVectorSearchBackend
from retrieval_mcp.backends.field_map import FieldMap
from retrieval_mcp.errors import CapabilityMissing, ConfigError, InvalidArgument
from retrieval_mcp.json_http import JsonHttp
from retrieval_mcp.services import ingest_target
from retrieval_mcp.settings import SecretRef, load_settings


def test_secrets_come_from_the_environment_or_a_private_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert SecretRef().read("x") is None
    monkeypatch.setenv("LRM_TEST_SECRET", "s3cret")
    assert SecretRef(env="LRM_TEST_SECRET").read("x") == "s3cret"
    with pytest.raises(ConfigError, match="LRM_TEST_UNSET"):
        SecretRef(env="LRM_TEST_UNSET").read("x")
    secret = tmp_path / "key"
    secret.write_text("from-file\n")
    secret.chmod(0o644)
    with pytest.raises(ConfigError, match="group or others") as caught:
        SecretRef(file=str(secret)).read("x")
    assert caught.value.remedy == f"chmod 600 {secret}"
    secret.chmod(0o600)
    assert SecretRef(file=str(secret)).read("x") == "from-file"
    with pytest.raises(ConfigError, match="not both"):
        SecretRef(env="LRM_TEST_SECRET", file=str(secret)).read("x")


@pytest.mark.parametrize(
    "conninfo",
    ["postgresql://app:hunter2@db/x", "host=db password=hunter2 dbname=x", "host=db PASSWORD = x"],
)
def test_inline_database_passwords_are_refused(tmp_path: Path, conninfo: str) -> None:
    with pytest.raises(ConfigError, match="must not contain a password"):
        load_settings(
            state_dir=tmp_path, overrides={"backend": {"postgres": {"conninfo": conninfo}}}
        )


def test_table_names_are_plain_sql_names(tmp_path: Path) -> None:
    load_settings(state_dir=tmp_path, overrides={"backend": {"postgres": {"table": "rag.chunks"}}})
    with pytest.raises(ConfigError, match="plain SQL name"):
        load_settings(state_dir=tmp_path, overrides={"backend": {"postgres": {"table": "x; drop"}}})


def test_the_embedded_store_keeps_the_bundled_encoder(tmp_path: Path) -> None:
    settings = load_settings(
        state_dir=tmp_path, overrides={"encoder": {"kind": "openai-compatible"}}
    )
    with pytest.raises(ConfigError, match="bundled model"):
        check_encoder_choice(settings)


async def test_read_only_backends_refuse_ingest_and_unknown_filter_keys() -> None:
    async with JsonHttp("Databricks Vector Search", "http://127.0.0.1:9", timeout_s=1) as http:
        backend = DatabricksVectorSearchBackend(
            http,
            indexes={"kb": "main.rag.kb"},
            fields=FieldMap(source="", metadata_fields=("team",)),
        )
        with pytest.raises(CapabilityMissing, match="read-only") as caught:
            ingest_target(backend)
        assert "postgres" in caught.value.remedy
        with pytest.raises(InvalidArgument, match="not a filterable field"):
            FieldMap(metadata_fields=("team",)).filter_field("owner")


EXAMPLES = Path(__file__).resolve().parents[2] / "config" / "examples"


@pytest.mark.parametrize("name", sorted(p.name for p in EXAMPLES.glob("*.toml")))
def test_every_example_config_is_valid(tmp_path: Path, name: str) -> None:
    settings = load_settings(EXAMPLES / name, state_dir=tmp_path)
    # <kind>.toml, or <kind>.<variant>.toml for another way to configure the same kind
    assert settings.backend.kind == name.removesuffix(".toml").split(".")[0]
