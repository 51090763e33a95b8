"""Each format's reader: the sections and pages it finds, the provenance its chunks
carry, and a clear per-file error for every broken or hostile file (ingest goes on)."""

from __future__ import annotations

import hashlib
import itertools
import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from retrieval_mcp.backends.chunk_payload import from_payload, indexed_text, to_payload
from retrieval_mcp.ingest.chunk_builder import build_chunks, document_hash
from retrieval_mcp.ingest.documents import Document, Part, assemble
from retrieval_mcp.ingest.formats.format_settings import (
    MIB,
    ColumnMapping,
    FormatSettings,
    parse_columns,
)
from retrieval_mcp.ingest.formats.source_code import code_parts
from retrieval_mcp.ingest.loaders import FileError, load_documents
from tests.ingest.format_files import COLUMNS, write_good_folder, write_hostile_folder

SETTINGS = FormatSettings(columns=ColumnMapping.model_validate(COLUMNS))


@pytest.fixture
def good(tmp_path: Path) -> dict[str, Document]:
    write_good_folder(tmp_path / "good")
    errors: list[FileError] = []
    docs = {d.doc_id: d for d in load_documents(tmp_path / "good", SETTINGS, errors)}
    assert errors == []
    return docs


def sections(doc: Document) -> list[str]:
    return [" › ".join(s.path) for s in doc.sections]


def test_markdown_and_rst_split_on_headings(good: dict[str, Document]) -> None:
    md = good["handbook.md"]
    assert md.title == "Heat pump handbook"
    assert "Heat pump handbook › Install › Linux" in sections(md)
    rst = good["glacier.rst"]
    assert rst.title == "Glacier survey"
    assert "Glacier survey › Methods › Ablation stakes" in sections(rst)
    for doc in (md, rst):  # sections tile the text
        assert doc.sections[0].start == 0 and doc.sections[-1].end == len(doc.text)
        assert all(a.end == b.start for a, b in itertools.pairwise(doc.sections))


def test_chunks_carry_heading_path_and_the_encoder_sees_it(good: dict[str, Document]) -> None:
    chunks = build_chunks(good["handbook.md"], source="s", chunk_chars=200, overlap_chars=0)
    linux = next(c for c in chunks if "heatpumpd" in c.text)
    assert linux.provenance.section == "Heat pump handbook › Install › Linux"
    assert indexed_text(linux).startswith("Heat pump handbook › Install › Linux\n")
    # No chunk mixes two sections, and offsets still index the stored text.
    assert all("Maintenance" not in c.text or "heatpumpd" not in c.text for c in chunks)
    assert from_payload(linux.id, to_payload(linux)) == linux


@pytest.mark.parametrize("stored", [True, -3, 2.5, "120", None, [], {"n": 1}])
def test_a_stored_token_count_that_is_not_a_count_is_dropped(stored: object) -> None:
    # Foreign payloads share this layout; anything but a non-negative int means "count it".
    chunk = build_chunks(
        Document("d", "T", "a few words here"), source="s", chunk_chars=200, overlap_chars=0
    )[0]
    payload = to_payload(chunk) | {"tokens": stored}
    assert from_payload(chunk.id, payload).tokens is None
    assert from_payload(chunk.id, to_payload(chunk) | {"tokens": 7}).tokens == 7


def test_html_keeps_main_content_only(good: dict[str, Document]) -> None:
    html = good["starter.html"]
    assert html.title == "Sourdough starter care"
    assert "twice a day" in html.text
    for boilerplate in ("cookies", "Copyright", "Shop", "Newsletter"):
        assert boilerplate not in html.text
    assert "Sourdough starter care › Feeding" in sections(html)


def test_pdf_chunks_know_their_pages(good: dict[str, Document]) -> None:
    pdf = good["turbine.pdf"]
    assert pdf.title == "Turbine blades"
    assert [s.page for s in pdf.sections] == [1, 2, 3]
    chunks = build_chunks(pdf, source="s", chunk_chars=100, overlap_chars=0)
    erosion = next(c for c in chunks if "erosion" in c.text)
    assert (erosion.provenance.page_start, erosion.provenance.page_end) == (2, 2)
    whole = build_chunks(pdf, source="s", chunk_chars=5000, overlap_chars=0)
    assert len(whole) == 1
    assert (whole[0].provenance.page_start, whole[0].provenance.page_end) == (1, 3)


def test_docx_headings_and_title(good: dict[str, Document]) -> None:
    doc = good["bees.docx"]
    assert doc.title == "Beekeeping calendar"
    assert sections(doc) == ["", "Overview", "Swarm control"]
    assert "queen cells" in doc.text


def test_source_code_splits_on_top_level_definitions(good: dict[str, Document]) -> None:
    assert sections(good["tides.py"]) == ["", "def tide_height", "class Harbour"]
    assert sections(good["orbit.go"]) == ["", "func KeplerPeriod", "type Satellite struct"]
    go = good["orbit.go"]
    kepler = go.sections[1]
    # The comment above a definition belongs to it.
    assert go.text[kepler.start :].startswith("// KeplerPeriod returns")
    # A Python file that does not parse still splits, by pattern.
    broken = code_parts("import x\n\ndef ok():\n    pass\n\ndef broken(:\n", ".py")
    assert [p.path for p in broken] == [(), ("def ok",), ("def broken",)]


def test_rows_through_the_column_mapping(good: dict[str, Document]) -> None:
    espresso = good["coffee.jsonl#r1"]
    assert espresso.title == "Espresso" and "nine bars" in espresso.text
    assert espresso.metadata == {"lang": "en"}
    basalt = good["rocks.csv#c1"]
    assert basalt.title == "Basalt" and basalt.metadata == {"region": "north"}
    assert basalt.uri.endswith("rocks.csv#c1")


def test_bad_rows_are_reported_by_line_and_the_rest_is_read(tmp_path: Path) -> None:
    rows = tmp_path / "rows.jsonl"
    rows.write_text('{"body": "one"}\nnot json\n[1]\n{"other": 1}\n{"body": "five", "uid": 5}\n')
    errors: list[FileError] = []
    docs = list(load_documents(rows, SETTINGS, errors))
    assert [d.doc_id for d in docs] == ["rows.jsonl#line1", "rows.jsonl#5"]
    assert [e.path.rsplit(":", 1)[1] for e in errors] == ["2", "3", "4"]
    assert "no text in column 'body'" in errors[2].reason


def test_csv_without_the_text_column_names_the_fix(tmp_path: Path) -> None:
    (tmp_path / "t.csv").write_text("a,b\n1,2\n")
    errors: list[FileError] = []
    assert list(load_documents(tmp_path, SETTINGS, errors)) == []
    assert "--columns text=NAME" in errors[0].reason


def test_parse_columns() -> None:
    assert parse_columns("text=body, title=name,metadata=a;b") == {
        "text": "body",
        "title": "name",
        "metadata": ("a", "b"),
    }
    with pytest.raises(ValueError, match="KEY=COLUMN"):
        parse_columns("body")
    with pytest.raises(ValueError, match="KEY=COLUMN"):
        parse_columns("colour=red")


def test_every_hostile_file_is_reported_and_ingest_goes_on(tmp_path: Path) -> None:
    folder = tmp_path / "mixed"
    write_hostile_folder(folder, big_text_bytes=40 * MIB, bomb_bytes=8 * MIB)
    (folder / "fine.md").write_text("# Fine\n\nA good file among bad ones.")
    settings = FormatSettings(max_file_bytes=32 * MIB, max_unzipped_bytes=4 * MIB)
    errors: list[FileError] = []
    docs = list(load_documents(folder, settings, errors))
    assert [d.doc_id for d in docs] == ["fine.md"]
    reasons = {Path(e.path).name: e.reason for e in errors}
    assert set(reasons) == {
        "truncated.pdf",
        "bomb.docx",
        "nested.html",
        "huge.txt",
        "latin1.txt",
        "binary.md",
        "damaged.docx",
    }
    assert "truncated PDF" in reasons["truncated.pdf"]
    assert "zip bomb refused" in reasons["bomb.docx"]
    assert "max_file_bytes" in reasons["huge.txt"]
    assert "not UTF-8" in reasons["latin1.txt"] and "offset 2" in reasons["latin1.txt"]
    assert "binary" in reasons["binary.md"]
    assert "not a zip" in reasons["damaged.docx"]
    assert reasons["nested.html"]  # whatever lxml made of it, a reason is given
    assert all(str(folder) in e.path for e in errors)


def test_text_over_the_character_limit_is_refused(tmp_path: Path) -> None:
    (tmp_path / "long.md").write_text("# Long\n\n" + "word " * 2000)
    errors: list[FileError] = []
    settings = FormatSettings(max_text_chars=5000)
    assert list(load_documents(tmp_path, settings, errors)) == []
    assert "max_text_chars" in errors[0].reason


def test_utf16_and_bom_are_read(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_bytes("é utf-16".encode("utf-16"))
    (tmp_path / "b.txt").write_bytes(b"\xef\xbb\xbfwith bom\r\nline")
    docs = {d.doc_id: d.text for d in load_documents(tmp_path, SETTINGS, [])}
    assert docs == {"a.txt": "é utf-16", "b.txt": "with bom\nline"}


def test_document_hash_counts_metadata_canonically() -> None:
    base = Document("d", "T", "text", metadata={"a": 1, "b": [1, 2]})
    same = Document("d", "T", "text", metadata={"b": [1, 2], "a": 1})
    changed = Document("d", "T", "text", metadata={"a": 2, "b": [1, 2]})
    plain = Document("d", "T", "text")

    def h(doc: Document) -> str:
        return document_hash(doc, chunk_chars=1000, overlap_chars=150)

    assert h(base) == h(same)
    assert len({h(base), h(changed), h(plain)}) == 3
    # A document without sections or metadata hashes as before this change, so a
    # store of plain text files is not re-embedded on upgrade.
    before = hashlib.sha256(b"T\x00text\x001000/150\x00").hexdigest()[:32]
    assert h(plain) == before


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner),
    max_leaves=8,
)


@given(st.dictionaries(st.text(max_size=4), json_values, max_size=4), st.text(max_size=3))
def test_any_metadata_change_changes_the_hash(metadata: dict[str, object], key: str) -> None:
    doc = Document("d", "T", "text", metadata=dict(metadata))
    reordered = Document("d", "T", "text", metadata=dict(reversed(list(metadata.items()))))
    changed = dict(metadata)
    changed[key] = {"changed": json.dumps(metadata.get(key), sort_keys=True)}
    other = Document("d", "T", "text", metadata=changed)
    h = document_hash(doc, chunk_chars=1000, overlap_chars=150)
    assert h == document_hash(reordered, chunk_chars=1000, overlap_chars=150)
    assert h != document_hash(other, chunk_chars=1000, overlap_chars=150)


@given(
    st.lists(
        st.tuples(st.text(alphabet="ab \n.", max_size=60), st.booleans()),
        max_size=8,
    )
)
def test_assembled_sections_tile_the_text(raw: list[tuple[str, bool]]) -> None:
    parts = [Part(t, (f"h{i}",), i + 1 if paged else None) for i, (t, paged) in enumerate(raw)]
    text, found = assemble(parts)
    if found:
        assert found[0].start == 0 and found[-1].end == len(text)
        assert all(a.end == b.start for a, b in itertools.pairwise(found))
    doc = Document("d", "T", text, sections=found)
    for chunk in build_chunks(doc, source="s", chunk_chars=100, overlap_chars=10):
        p = chunk.provenance
        assert chunk.text == text[p.char_start : p.char_end]
