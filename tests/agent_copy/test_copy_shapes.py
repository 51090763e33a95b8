"""Whatever an operator's copy directory holds, loading it is total.

Either the copy loads, or a ``CopyRejected`` names the file, the field and what was
wrong; no other exception, for any document (property-tested with generated TOML that
is biased towards the real schema's keys, so it reaches the merge and the renderer),
and for any file-system shape an operator or a racing editor can produce.
"""

from __future__ import annotations

import datetime as dt
import os
from pathlib import Path
from typing import Any

import pytest
import tomli_w
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import retrieval_mcp.agent_copy.loader as loader
from retrieval_mcp.agent_copy.loader import MAX_FILE_BYTES, CopyRejected, load_copy
from retrieval_mcp.agent_copy.model import load_shipped_copy
from retrieval_mcp.backends.protocol import Capability
from retrieval_mcp.errors import ConfigError
from retrieval_mcp.mcp_surface.copy_reload import render_registry
from retrieval_mcp.settings import load_settings

SHIPPED = load_shipped_copy()
TOOL_KEYS = sorted(SHIPPED.tools)
PARAM_KEYS = sorted({p for tool in SHIPPED.tools.values() for p in tool.params})
FIELD_KEYS = ["name", "title", "description", "params", "instructions", "include", "annotations"]
HINT_KEYS = ["read_only_hint", "destructive_hint", "idempotent_hint", "open_world_hint"]
PLACEHOLDERS = ["{search_mode}", "{tool_search}", "{max_top_k}", "{nope}", "{0}", "{", "}"]

# -- generated documents ----------------------------------------------------------------

texts = st.one_of(
    st.text(max_size=40),
    st.sampled_from(PLACEHOLDERS).map(lambda p: f"find {p} things"),
    st.text(min_size=1000, max_size=9000, alphabet="ab <>\u200b\n"),  # long, hostile
)
scalars = st.one_of(
    texts,
    st.integers(min_value=-(2**63), max_value=2**63 - 1),
    st.floats(allow_nan=True, allow_infinity=True),
    st.booleans(),
    st.datetimes(timezones=st.none() | st.just(dt.UTC)),
    st.dates(),
    st.times(),
)
keys = st.one_of(
    st.sampled_from(TOOL_KEYS + PARAM_KEYS + FIELD_KEYS + HINT_KEYS + ["policy", "tools"]),
    st.text(min_size=1, max_size=12),
)
values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(keys, inner, max_size=4),
    max_leaves=12,
)


def slot(right: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """Mostly the right type (so generation reaches the merge, lint and renderer),
    sometimes anything at all."""
    return st.integers(0, 7).flatmap(lambda n: values if n == 0 else right)


def _param() -> st.SearchStrategy[Any]:
    return slot(st.fixed_dictionaries({}, optional={"description": slot(texts)}))


def _tool() -> st.SearchStrategy[Any]:
    names = st.sampled_from([*TOOL_KEYS, "x y", "", "search_runbooks"]) | st.text(max_size=70)
    params = st.dictionaries(
        st.sampled_from(PARAM_KEYS) | st.text(max_size=8), _param(), max_size=3
    )
    return slot(
        st.fixed_dictionaries(
            {},
            optional={
                "name": slot(names),
                "title": slot(texts),
                "description": slot(texts),
                "params": slot(params),
                "annotations": slot(
                    st.dictionaries(st.sampled_from(HINT_KEYS), slot(st.booleans()), max_size=4)
                ),
            },
        )
    )


tools = st.dictionaries(
    st.sampled_from(TOOL_KEYS) | st.text(min_size=1, max_size=8), _tool(), max_size=4
)
#: Documents shaped like the schema at every level, with wrong types mixed in anywhere.
documents = st.fixed_dictionaries(
    {},
    optional={
        "policy": slot(st.fixed_dictionaries({}, optional={"instructions": slot(texts)})),
        "tools": slot(tools),
    },
)
includes = st.lists(st.sampled_from(["a.toml", "../x", "/etc/x", ""]), max_size=2) | values
nothing: st.SearchStrategy[dict[str, Any]] = st.just({})
#: Now and then an include, or a key the schema does not know.
extras = st.integers(0, 7).flatmap(
    lambda n: (
        st.fixed_dictionaries({"include": includes})
        if n == 0
        else st.dictionaries(keys, values, max_size=1)
        if n == 1
        else nothing
    )
)
documents = st.tuples(documents, extras).map(lambda pair: pair[0] | pair[1])


def _as_toml(document: dict[str, Any]) -> bytes | None:
    try:
        return tomli_w.dumps(document).encode("utf-8")
    except (TypeError, ValueError):
        return None  # not representable in TOML (e.g. a list mixing types tomli-w refuses)


def _copy_dir(root: Path) -> Path:
    directory = root / "copy"
    directory.mkdir(mode=0o755, exist_ok=True)
    directory.chmod(0o755)
    return directory


def _write(path: Path, data: bytes) -> Path:
    path.write_bytes(data)
    path.chmod(0o644)
    return path


def _render(directory: Path) -> None:
    settings = load_settings(
        state_dir=directory.parent, overrides={"copy": {"dir": str(directory)}}
    )
    render_registry(settings, frozenset({Capability.DENSE, Capability.BM25, Capability.NEIGHBORS}))


def assert_total(directory: Path) -> None:
    """The whole reload path: read, shape-check, merge, validate, lint, render."""
    try:
        _render(directory)
    except CopyRejected as exc:
        assert str(directory.resolve()) in exc.message or "copy" in exc.message
        assert "\n" not in exc.message.split(": ", 1)[0]


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(document=documents)
def test_any_toml_document_loads_or_is_rejected_naming_the_file(
    tmp_path_factory: pytest.TempPathFactory, document: dict[str, Any]
) -> None:
    data = _as_toml(document)
    if data is None:
        return
    directory = _copy_dir(tmp_path_factory.mktemp("gen"))
    _write(directory / "copy.toml", data)
    _write(directory / "a.toml", data)  # the include that generated documents name
    assert_total(directory)


@settings(max_examples=100, deadline=None)
@given(raw=st.binary(max_size=300) | st.text(max_size=300).map(lambda t: t.encode("utf-8")))
def test_any_bytes_load_or_are_rejected(
    tmp_path_factory: pytest.TempPathFactory, raw: bytes
) -> None:
    directory = _copy_dir(tmp_path_factory.mktemp("raw"))
    _write(directory / "copy.toml", raw)
    assert_total(directory)


@pytest.mark.parametrize(
    ("toml", "needle"),
    [
        ("tools = 5\n", "tools: expected a table, got an integer"),
        ("[tools.search]\nname = { a = 1 }\n", "tools.search.name: expected a string, got a table"),
        ("[tools.search]\nparams = 5\n", "tools.search.params: expected a table, got an integer"),
        ('[tools.search.params]\nquery = "x"\n', "params.query: expected a table, got a string"),
        ("policy = [1, 2]\n", "policy: expected a table, got an array"),
        ("[policy]\ninstructions = 1979-05-27\n", "expected a string, got a date"),
        ("[tools.search]\ndescription = 07:32:00\n", "expected a string, got a time"),
        ("[tools.search]\ntitle = true\n", "expected a string, got a boolean"),
        ("[tools.search]\ntitle = nan\n", "expected a string, got a float"),
        ("include = [1]\n", "include must be a list of relative paths"),
        ('include = ["a\\u0000b"]\n', "is not a usable path"),
        ('[tools."a.b\\nforged"]\nname = "x"\n', "unknown tool"),
        ('x = "' + "\\n" * 10 + '"\n', "x: unknown field"),
        ("a = " + "[" * 3000 + "]" * 3000 + "\n", "nested too deeply"),
        ("a = 1\x00\n", "not valid UTF-8 TOML"),
    ],
    ids=[
        "tools-int",
        "name-table",
        "params-int",
        "param-str",
        "policy-array",
        "date",
        "time",
        "bool",
        "nan",
        "include-int",
        "include-nul",
        "odd-tool-key",
        "unknown-top",
        "deep",
        "nul-byte",
    ],
)
def test_ill_typed_values_name_file_field_and_type(tmp_path: Path, toml: str, needle: str) -> None:
    directory = _copy_dir(tmp_path)
    path = _write(directory / "copy.toml", toml.encode("utf-8"))
    with pytest.raises(CopyRejected) as caught:
        load_copy(directory)
    assert needle in caught.value.message, caught.value.message
    assert caught.value.message.startswith(str(path.resolve()))


def test_a_hostile_key_cannot_forge_or_flood_the_message(tmp_path: Path) -> None:
    directory = _copy_dir(tmp_path)
    key = "evil\nerror: all good" + "k" * 5000
    _write(directory / "copy.toml", tomli_w.dumps({"tools": {"search": {key: 1}}}).encode())
    with pytest.raises(CopyRejected) as caught:
        load_copy(directory)
    assert "\n" not in caught.value.message and len(caught.value.message) < 500


def test_placeholders_are_a_closed_set_used_whole(tmp_path: Path) -> None:
    directory = _copy_dir(tmp_path)
    for text in ["{search_mode.__class__}", "{search_mode[0]}", "{search_mode!r}", "{x:>9}", "{}"]:
        _write(directory / "copy.toml", tomli_w.dumps({"policy": {"instructions": text}}).encode())
        with pytest.raises(CopyRejected, match="placeholder"):
            _render(directory)


# -- the file system, as a racing editor or a careless operator leaves it -----------------


def test_not_a_regular_file(tmp_path: Path) -> None:
    directory = _copy_dir(tmp_path)
    (directory / "copy.toml").mkdir()
    with pytest.raises(CopyRejected, match="not a regular file \\(a directory\\)"):
        load_copy(directory)
    (directory / "copy.toml").rmdir()
    os.mkfifo(directory / "copy.toml")  # would block a plain open() forever
    with pytest.raises(CopyRejected, match="a named pipe"):
        load_copy(directory)


def test_huge_files_are_refused_before_they_are_read(tmp_path: Path) -> None:
    directory = _copy_dir(tmp_path)
    _write(directory / "copy.toml", b"# " + b"x" * MAX_FILE_BYTES + b"\n")
    with pytest.raises(CopyRejected, match="more than"):
        load_copy(directory)


def test_not_utf8(tmp_path: Path) -> None:
    directory = _copy_dir(tmp_path)
    _write(directory / "copy.toml", b'[policy]\ninstructions = "caf\xe9"\n')
    with pytest.raises(CopyRejected, match="not UTF-8 \\(byte 28 is 0xe9\\)"):
        load_copy(directory)


def test_unreadable_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Root reads a 0000 file anyway, so the refusal is simulated at the open."""
    directory = _copy_dir(tmp_path)
    _write(directory / "copy.toml", b"")

    def denied(*args: Any, **kwargs: Any) -> int:
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(os, "open", denied)
    with pytest.raises(CopyRejected, match="cannot open: Permission denied"):
        load_copy(directory)


def test_a_symlink_swapped_in_after_the_check_is_refused(tmp_path: Path) -> None:
    directory = _copy_dir(tmp_path)
    real = _write(directory / "real.toml", b"")
    resolved = directory.resolve() / "copy.toml"  # what _resolve_inside returned...
    resolved.symlink_to(real)  # ...then the editor put a symlink there
    with pytest.raises(CopyRejected, match="is a symlink"):
        loader._read(resolved)


@pytest.mark.parametrize("swap", ["directory", "removed", "symlink-out", "grown"])
def test_a_file_swapped_mid_read_gives_the_old_content_or_a_refusal(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, swap: str
) -> None:
    """The swap happens between the open and the read; the loader reads through its
    descriptor, so it sees the file it opened, whole, or refuses."""
    directory = _copy_dir(tmp_path)
    path = _write(directory / "copy.toml", b'[tools.search]\nname = "swapped"\n')
    outside = _write(tmp_path / "evil.toml", b'[policy]\ninstructions = "obey"\n')
    real_fstat = os.fstat
    swapped = False

    def fstat_then_swap(fd: int) -> os.stat_result:
        nonlocal swapped
        info = real_fstat(fd)
        if swapped:
            return info
        swapped = True
        if swap == "grown":
            with path.open("ab") as handle:
                handle.write(b"#" * (MAX_FILE_BYTES + 10))
            return info
        path.unlink()
        if swap == "directory":
            path.mkdir()
        elif swap == "symlink-out":
            path.symlink_to(outside)
        return info

    monkeypatch.setattr(os, "fstat", fstat_then_swap)
    try:
        copy = load_copy(directory)
    except CopyRejected as exc:
        assert swap == "grown" and "grew past" in exc.message
    else:
        assert swap != "grown"
        assert copy.tools["search"].name == "swapped"
        assert copy.policy == SHIPPED.policy


def test_the_copy_directory_itself_swapped_for_a_file(tmp_path: Path) -> None:
    directory = tmp_path / "copy"
    directory.write_text("")
    with pytest.raises(CopyRejected, match="does not exist"):
        load_copy(directory)
    loop = tmp_path / "loop"
    loop.symlink_to(loop)
    with pytest.raises(ConfigError):
        load_copy(loop)
