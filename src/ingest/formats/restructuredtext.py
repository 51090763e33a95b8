"""reStructuredText, split on its sections as docutils parses them.

Directives that read other files or pass raw markup through (``include``, ``raw``,
``csv-table :file:``) are switched off: a document must not pull in the host's files.
"""

from __future__ import annotations

import io
from collections.abc import Iterator
from typing import Any

from retrieval_mcp.ingest.documents import Document, Part, assemble
from retrieval_mcp.ingest.formats.file_input import (
    FileInput,
    UnreadableFile,
    bounded_text,
    decode_text,
)

_OVERRIDES: dict[str, Any] = {
    "file_insertion_enabled": False,
    "raw_enabled": False,
    "report_level": 5,  # never print parse warnings
    "halt_level": 5,
    "doctitle_xform": False,  # keep the top heading a section like the others
    "sectsubtitle_xform": False,
    "_disable_config": True,
}


def _parts(node: Any, path: tuple[str, ...], parts: list[Part]) -> None:
    from docutils import nodes

    body: list[str] = []
    for child in node.children:
        if isinstance(child, nodes.section):
            if body:
                parts.append(Part("\n\n".join(body), path))
                body = []
            title = child[0].astext().strip() if len(child) else ""
            _parts(child, (*path, title or "(untitled)"), parts)
        elif isinstance(child, nodes.title):
            body.append(child.astext())
        elif not isinstance(child, nodes.comment | nodes.system_message):
            text = child.astext().strip()
            if text:
                body.append(text)
    if body:
        parts.append(Part("\n\n".join(body), path))


def read_restructuredtext(file: FileInput) -> Iterator[Document]:
    from docutils.core import publish_doctree

    source = bounded_text(decode_text(file.data), file)
    try:
        tree = publish_doctree(
            source, settings_overrides={**_OVERRIDES, "warning_stream": io.StringIO()}
        )
    except Exception as exc:  # docutils raises its own SystemMessage and others
        raise UnreadableFile(f"reStructuredText did not parse ({exc})") from exc
    parts: list[Part] = []
    _parts(tree, (), parts)
    text, sections = assemble(parts)
    title = next((s.path[0] for s in sections if s.path), "")
    yield Document(
        doc_id=file.doc_id,
        title=title or file.stem,
        text=bounded_text(text, file),
        uri=file.uri,
        sections=sections,
    )
