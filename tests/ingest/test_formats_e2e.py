"""Every format end to end: a generated folder ingested, the real server started, the
MCP SDK's client searching it; each hit names its file and its section or page."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from retrieval_mcp.settings import Settings
from tests.ingest.format_files import COLUMNS, write_good_folder, write_hostile_folder
from tests.transport.server_harness import ingest_folder, running_server

SettingsFactory = Callable[..., Settings]

#: File → what its best hit's provenance must say (beyond naming the file).
WHERE: dict[str, dict[str, Any]] = {
    "handbook.md": {"section": "Heat pump handbook › Install › Linux"},
    "glacier.rst": {"section": "Glacier survey › Methods › Ablation stakes"},
    "starter.html": {"section": "Sourdough starter care › Feeding"},
    "turbine.pdf": {"page": 2},
    "bees.docx": {"section": "Swarm control"},
    "tides.py": {"section": "def tide_height"},
    "orbit.go": {"section": "func KeplerPeriod"},
    "coffee.jsonl": {"doc_id": "coffee.jsonl#r2", "metadata": {"lang": "en"}},
    "rocks.csv": {"doc_id": "rocks.csv#c1", "metadata": {"region": "north"}},
    "notes.txt": {"doc_id": "notes.txt"},
}


async def test_each_format_is_found_by_search_with_its_section_or_page(
    make_settings: SettingsFactory, tmp_path: Path
) -> None:
    folder = tmp_path / "docs"
    queries = write_good_folder(folder)
    assert set(queries) == set(WHERE)
    settings = make_settings(
        formats={"columns": COLUMNS}, chunking={"chunk_chars": 300, "overlap_chars": 0}
    )
    await ingest_folder(settings, folder, "docs")
    async with running_server(settings) as server, server.client() as client:
        for name, query in queries.items():
            result = await client.call_tool("search", {"query": query, "top_k": 3})
            envelope = result.structured_content
            assert envelope is not None and envelope["ok"], envelope
            hit = envelope["data"]["hits"][0]
            where, prov = WHERE[name], hit["provenance"]
            assert prov["doc_id"].split("#")[0] == name, (name, prov)
            assert prov["uri"].startswith("file://") and name in prov["uri"]
            if "section" in where:
                assert prov["section"] == where["section"], (name, prov)
            if "page" in where:
                assert prov["page_start"] <= where["page"] <= prov["page_end"], prov
            if "doc_id" in where:
                assert prov["doc_id"] == where["doc_id"]
            if "metadata" in where:
                assert hit["metadata"] == where["metadata"]


def test_cli_summary_lists_each_bad_file_and_ingests_the_rest(
    tmp_path: Path, short_dir: Path
) -> None:
    folder = tmp_path / "mixed"
    write_hostile_folder(folder, big_text_bytes=33 * 1024 * 1024, bomb_bytes=200 * 1024 * 1024)
    write_good_folder(folder)
    env = {**os.environ, "LATENCE_STATE_DIR": str(short_dir / "state")}
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "retrieval_mcp",
            "ingest",
            str(folder),
            "--columns",
            "text=body,title=name,id=uid,metadata=lang;region",
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)["ingested"]
    # Ten good files, two of them with two rows each.
    assert summary["documents_written"] == 12
    failed = {Path(e["path"]).name: e["reason"] for e in summary["errors"]}
    assert set(failed) == {
        "truncated.pdf",
        "bomb.docx",
        "nested.html",
        "huge.txt",
        "latin1.txt",
        "binary.md",
        "damaged.docx",
    }
    assert all(reason for reason in failed.values())
