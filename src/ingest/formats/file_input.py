"""One file as a reader receives it, and the one error a reader raises."""

from __future__ import annotations

import codecs

import attrs

from retrieval_mcp.ingest.formats.format_settings import FormatSettings

#: How much of a text file is searched for a NUL byte before it is called binary.
BINARY_PROBE_BYTES = 8192


class UnreadableFile(Exception):
    """This file cannot be ingested; the message says why, for the ingest summary."""


@attrs.frozen
class FileInput:
    """The bytes of one file (already bounded by ``max_file_bytes``) and its names:
    ``doc_id`` is the path relative to the ingested folder, ``uri`` the file's URI."""

    doc_id: str
    uri: str
    stem: str
    data: bytes
    settings: FormatSettings


def decode_text(data: bytes) -> str:
    """``data`` as text: UTF-8 (a BOM is dropped) or UTF-16 with a BOM.

    Anything else is refused, not guessed: a wrong guess stores mojibake that no
    search finds, while the error names the fix.
    """
    if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        try:
            return data.decode("utf-16")
        except UnicodeDecodeError as exc:
            raise UnreadableFile(f"damaged UTF-16 text ({exc.reason} at byte {exc.start})") from exc
    nul = data.find(b"\x00", 0, BINARY_PROBE_BYTES)
    if nul >= 0:
        raise UnreadableFile(f"binary content, not text (NUL byte at offset {nul})")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise UnreadableFile(
            f"not UTF-8 text (byte 0x{data[exc.start]:02x} at offset {exc.start}); "
            "re-save it as UTF-8, e.g. iconv -f LATIN1 -t UTF-8"
        ) from exc
    return text.replace("\r\n", "\n").replace("\r", "\n")


def check_text_chars(chars: int, file: FileInput) -> None:
    """Refuse a document once its text passes ``max_text_chars``."""
    limit = file.settings.max_text_chars
    if chars > limit:
        raise UnreadableFile(
            f"over {limit:,} characters of text (formats.max_text_chars); "
            "split the file or raise the limit"
        )


def bounded_text(text: str, file: FileInput) -> str:
    """``text`` unless it is longer than ``max_text_chars``."""
    check_text_chars(len(text), file)
    return text
