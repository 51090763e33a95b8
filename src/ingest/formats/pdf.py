"""PDF: the text of each page (pypdf), so a chunk knows the pages it spans."""

from __future__ import annotations

import io
from collections.abc import Iterator

from retrieval_mcp.ingest.documents import Document, Part, assemble
from retrieval_mcp.ingest.formats.file_input import (
    FileInput,
    UnreadableFile,
    bounded_text,
    check_text_chars,
)


def read_pdf(file: FileInput) -> Iterator[Document]:
    from pypdf import PdfReader
    from pypdf.errors import PyPdfError

    try:
        # strict: a damaged file is refused with pypdf's reason rather than half-read.
        reader = PdfReader(io.BytesIO(file.data), strict=True)
        if reader.is_encrypted and not reader.decrypt(""):
            raise UnreadableFile("encrypted PDF (needs a password)")
        parts: list[Part] = []
        chars = 0
        for number, page in enumerate(reader.pages, start=1):
            text = page.extract_text() or ""
            chars += len(text)
            check_text_chars(chars, file)
            parts.append(Part(text, page=number))
        info = reader.metadata
        title = str(info.title or "").strip() if info is not None else ""
    except UnreadableFile:
        raise
    except (PyPdfError, ValueError, KeyError, TypeError, IndexError, AttributeError) as exc:
        raise UnreadableFile(f"damaged or truncated PDF ({type(exc).__name__}: {exc})") from exc
    text, sections = assemble(parts)
    if not text.strip():
        raise UnreadableFile("no extractable text (a scanned PDF needs OCR first)")
    yield Document(
        doc_id=file.doc_id,
        title=title or file.stem,
        text=bounded_text(text, file),
        uri=file.uri,
        sections=sections,
    )
