from __future__ import annotations

from pathlib import Path

import pytest

from retrieval_mcp.errors import ConfigError, TransportConfigError
from retrieval_mcp.settings import is_loopback_host, load_settings


def test_defaults_come_from_the_shipped_file(tmp_path: Path) -> None:
    settings = load_settings(state_dir=tmp_path)
    assert settings.server.host == "127.0.0.1" and settings.server.port == 8765
    assert settings.socket_path == tmp_path / "server.sock"
    assert settings.store_path == tmp_path / "store"
    assert settings.token_path == tmp_path / "tokens.json"


def test_operator_file_overrides_and_unknown_keys_are_errors(tmp_path: Path) -> None:
    config = tmp_path / "op.toml"
    config.write_text(
        '[server]\nport = 9000\nunix_socket = "none"\n[pipeline.legs.bm25]\nweight = 2.0\n'
    )
    settings = load_settings(config, state_dir=tmp_path)
    assert settings.server.port == 9000 and settings.socket_path is None
    assert settings.pipeline.legs.bm25.weight == 2.0
    assert settings.pipeline.legs.dense.weight == 1.0  # untouched keys keep defaults
    config.write_text("[pipeline]\nrrf_kk = 10\n")
    with pytest.raises(ConfigError, match=r"pipeline\.rrf_kk"):
        load_settings(config, state_dir=tmp_path)
    config.write_text("[search\n")
    with pytest.raises(ConfigError, match="not valid TOML"):
        load_settings(config, state_dir=tmp_path)
    with pytest.raises(ConfigError, match="cannot read"):
        load_settings(tmp_path / "missing.toml", state_dir=tmp_path)


def test_environment_names_the_state_dir_and_config(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = tmp_path / "op.toml"
    config.write_text("[server]\nport = 9100\n")
    monkeypatch.setenv("LATENCE_STATE_DIR", str(tmp_path / "st"))
    monkeypatch.setenv("LATENCE_CONFIG", str(config))
    settings = load_settings()
    assert settings.state_dir == tmp_path / "st" and settings.server.port == 9100


@pytest.mark.parametrize("host", ["0.0.0.0", "192.168.1.4", "example.com", "::", "10.0.0.1"])
def test_non_loopback_hosts_are_refused(tmp_path: Path, host: str) -> None:
    with pytest.raises(TransportConfigError, match="not a loopback address"):
        load_settings(state_dir=tmp_path, overrides={"server": {"host": host}})


@pytest.mark.parametrize("host", ["127.0.0.1", "127.0.0.2", "::1", "[::1]", "localhost"])
def test_loopback_hosts_are_accepted(host: str) -> None:
    assert is_loopback_host(host)


@pytest.mark.parametrize(
    ("origin", "needle"),
    [
        ("null", "would admit any page"),
        ("*", "would admit any page"),
        ("https://*.example.com", "wildcards are not matched"),
        ("", "is not an origin"),
        ("http://localhost:3000/", "is not an origin"),
        ("https://App.Example.com", "is not an origin"),
        ("https://user@app.example.com", "is not an origin"),
        ("app.example.com", "is not an origin"),
        ("https://app.example.com:443", "browsers omit the default port"),
        ("http://localhost:70000", "is not a port number"),
    ],
)
def test_allowed_origins_refuse_what_no_browser_sends(
    tmp_path: Path, origin: str, needle: str
) -> None:
    with pytest.raises(ConfigError, match=r"server\.allowed_origins") as caught:
        load_settings(state_dir=tmp_path, overrides={"server": {"allowed_origins": [origin]}})
    assert needle in caught.value.message


def test_allowed_origins_accept_real_origins(tmp_path: Path) -> None:
    origins = [
        "https://app.example.com",
        "http://localhost:3000",
        "http://[::1]:8080",
        "chrome-extension://abcdefghijklmnop",
    ]
    settings = load_settings(state_dir=tmp_path, overrides={"server": {"allowed_origins": origins}})
    assert settings.server.allowed_origins == tuple(origins)


def test_watched_folders_need_one_source_each(tmp_path: Path) -> None:
    config = tmp_path / "op.toml"
    config.write_text(
        '[ingest]\nwatch = [{ path = "/srv/notes", source = "notes", include = ["*.md"] }]\n'
    )
    (watch,) = load_settings(config, state_dir=tmp_path).ingest.watch
    assert watch.source == "notes" and watch.include == ("*.md",) and watch.debounce_ms == 500
    config.write_text(
        '[ingest]\nwatch = [{ path = "/a", source = "s" }, { path = "/b", source = "s" }]\n'
    )
    with pytest.raises(ConfigError, match="its own source"):
        load_settings(config, state_dir=tmp_path)
    config.write_text('[ingest]\nwatch = [{ path = "/a", source = "s", recurse = false }]\n')
    with pytest.raises(ConfigError, match="recurse"):
        load_settings(config, state_dir=tmp_path)
