"""Markdown, split on its headings (markdown-it-py finds them, so a ``#`` inside a
code fence is not one)."""

from __future__ import annotations

from collections.abc import Iterator

from markdown_it import MarkdownIt

from retrieval_mcp.ingest.documents import Document, Part, assemble, heading_path
from retrieval_mcp.ingest.formats.file_input import FileInput, bounded_text, decode_text

_PARSER = MarkdownIt("commonmark")


def markdown_parts(text: str) -> tuple[str, list[Part]]:
    """The first top-level heading (or "") and the parts of ``text``, one per heading."""
    lines = text.split("\n")
    tokens = _PARSER.parse(text)
    starts: list[tuple[int, int, str]] = []  # (line, level, heading)
    for index, token in enumerate(tokens):
        if token.type == "heading_open" and token.map is not None:
            inline = tokens[index + 1]
            starts.append((token.map[0], int(token.tag[1:]), inline.content.strip()))
    title = next((h for _, level, h in starts if level == 1 and h), "")
    parts: list[Part] = []
    stack: list[tuple[int, str]] = []
    first = starts[0][0] if starts else len(lines)
    parts.append(Part("\n".join(lines[:first])))
    for i, (line, level, heading) in enumerate(starts):
        end = starts[i + 1][0] if i + 1 < len(starts) else len(lines)
        path = heading_path(stack, level, heading or "(untitled)")
        parts.append(Part("\n".join(lines[line:end]), path))
    return title, parts


def read_markdown(file: FileInput) -> Iterator[Document]:
    title, parts = markdown_parts(bounded_text(decode_text(file.data), file))
    text, sections = assemble(parts)
    yield Document(
        doc_id=file.doc_id,
        title=title or file.stem,
        text=text,
        uri=file.uri,
        sections=sections,
    )
