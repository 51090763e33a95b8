"""HTML: the main content only (trafilatura drops navigation, footers, cookie
banners and the like), as Markdown, then split on its headings like any Markdown."""

from __future__ import annotations

from collections.abc import Iterator

from retrieval_mcp.ingest.documents import Document, assemble
from retrieval_mcp.ingest.formats.file_input import (
    FileInput,
    UnreadableFile,
    bounded_text,
    decode_text,
)
from retrieval_mcp.ingest.formats.markdown import markdown_parts


def read_html(file: FileInput) -> Iterator[Document]:
    import trafilatura

    tree = trafilatura.load_html(decode_text(file.data))
    if tree is None:
        raise UnreadableFile("not parseable as HTML")
    page_title = " ".join((tree.findtext(".//title") or "").split())
    content = trafilatura.extract(
        tree,
        output_format="markdown",
        include_comments=False,
        include_tables=True,
        include_links=False,
        include_images=False,
        favor_recall=True,
        deduplicate=False,
    )
    if not content or not content.strip():
        raise UnreadableFile("no main content found (the page is empty or all boilerplate)")
    heading, parts = markdown_parts(bounded_text(content, file))
    text, sections = assemble(parts)
    yield Document(
        doc_id=file.doc_id,
        title=page_title or heading or file.stem,
        text=text,
        uri=file.uri,
        sections=sections,
    )
