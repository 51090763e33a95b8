"""Word (.docx): paragraphs and tables in document order, split on Heading styles.

A .docx is a zip: its declared uncompressed sizes are checked before python-docx
inflates anything, so a zip bomb is refused while it is still a few kilobytes.
"""

from __future__ import annotations

import io
import re
import zipfile
from collections.abc import Iterator

from retrieval_mcp.ingest.documents import Document, Part, assemble, heading_path
from retrieval_mcp.ingest.formats.file_input import FileInput, UnreadableFile, check_text_chars

MIB = 1024 * 1024
_HEADING_STYLE = re.compile(r"^Heading (\d)$")


def check_zip(data: bytes, limit: int) -> None:
    """Refuse a zip that is not one, or that declares more than ``limit`` bytes
    uncompressed (``zipfile`` never inflates an entry past its declared size)."""
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            declared = sum(info.file_size for info in archive.infolist())
    except zipfile.BadZipFile as exc:
        raise UnreadableFile(f"not a .docx (not a zip archive: {exc})") from exc
    if declared > limit:
        raise UnreadableFile(
            f"zip bomb refused: declares {declared / MIB:,.0f} MiB uncompressed, over "
            f"formats.max_unzipped_bytes ({limit / MIB:,.0f} MiB)"
        )


def read_docx(file: FileInput) -> Iterator[Document]:
    import docx
    from docx.table import Table
    from docx.text.paragraph import Paragraph

    check_zip(file.data, file.settings.max_unzipped_bytes)
    try:
        document = docx.Document(io.BytesIO(file.data))
    except Exception as exc:  # python-docx raises KeyError, ValueError, lxml errors…
        raise UnreadableFile(f"damaged .docx ({type(exc).__name__}: {exc})") from exc
    parts: list[Part] = []
    stack: list[tuple[int, str]] = []
    path: tuple[str, ...] = ()
    body: list[str] = []
    title = (document.core_properties.title or "").strip()
    chars = 0
    for block in document.iter_inner_content():
        if isinstance(block, Paragraph):
            text = block.text.strip()
            style = block.style.name if block.style is not None else ""
            match = _HEADING_STYLE.match(style or "")
            if style == "Title" and text and not title:
                title = text
            if match and text:
                parts.append(Part("\n\n".join(body), path))
                body = [text]
                path = heading_path(stack, int(match.group(1)), text)
                continue
        elif isinstance(block, Table):
            rows = [" | ".join(cell.text.strip() for cell in row.cells) for row in block.rows]
            text = "\n".join(rows)
        else:
            continue
        if text:
            body.append(text)
            chars += len(text)
            check_text_chars(chars, file)
    parts.append(Part("\n\n".join(body), path))
    text, sections = assemble(parts)
    yield Document(
        doc_id=file.doc_id,
        title=title or file.stem,
        text=text,
        uri=file.uri,
        sections=sections,
    )
