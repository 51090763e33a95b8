"""Source code, split on top-level definitions: Python through ``ast``, the other
common languages by a per-language pattern for a definition at column 0.

Comments and decorators directly above a definition belong to it. A Python file
that does not parse falls back to the pattern, so it is still searchable.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator

from retrieval_mcp.ingest.documents import Document, Part, assemble
from retrieval_mcp.ingest.formats.file_input import FileInput, bounded_text, decode_text

_C_LIKE = (
    r"^(?:(?:struct|class|enum|union|namespace|typedef|template)\b"
    r"|[A-Za-z_][\w\s\*&:<>,]*\b[A-Za-z_]\w*\s*\([^;]*$)"
)
#: A top-level definition, by file extension.
DEFINITION: dict[str, re.Pattern[str]] = {
    suffix: re.compile(pattern)
    for suffixes, pattern in (
        ((".py", ".pyi"), r"^(?:async\s+def|def|class)\s+\w"),
        (
            (".js", ".jsx", ".mjs", ".cjs", ".ts", ".tsx"),
            r"^(?:export\s+)?(?:default\s+)?(?:declare\s+)?(?:abstract\s+)?(?:async\s+)?"
            r"(?:function\b|class\b|interface\b|type\s+\w|enum\b|const\s+\w|let\s+\w)",
        ),
        ((".go",), r"^(?:func|type)\s"),
        (
            (".rs",),
            r"^(?:pub(?:\([^)]*\))?\s+)?(?:async\s+|unsafe\s+|const\s+)*"
            r"(?:fn|struct|enum|trait|impl|mod|type|macro_rules!)\b",
        ),
        (
            (".java", ".kt", ".kts", ".scala", ".cs", ".swift"),
            r"^(?:(?:public|private|protected|internal|abstract|final|static|sealed|open|"
            r"data|partial|inline|suspend)\s+)*(?:class|interface|enum|record|object|fun|"
            r"struct|func|trait|def)\b",
        ),
        ((".c", ".h", ".cc", ".cpp", ".cxx", ".hpp", ".hh"), _C_LIKE),
        ((".rb",), r"^(?:def|class|module)\s"),
        ((".php",), r"^(?:(?:abstract|final)\s+)?(?:function|class|interface|trait)\s"),
        ((".sh", ".bash"), r"^(?:function\s+[\w-]+|[A-Za-z_][\w-]*\s*\(\)\s*\{?)"),
    )
    for suffix in suffixes
}
SUFFIXES = tuple(DEFINITION)
_LEADING = re.compile(r"^(?:#|//|/\*|\*|@|--|;)")
_CALL = re.compile(r"^(.*?\w)[(<\[]")


def _label(line: str) -> str:
    """A definition's first line up to its parameters: ``func (s *S) Run``, ``int main``."""
    text = line.split("{", 1)[0].strip().rstrip(":").strip() or line.strip()
    call = _CALL.match(text)
    text = call.group(1) if call else text
    return text if len(text) <= 80 else text[:79] + "…"


def _python_starts(source: str) -> list[tuple[int, int, str]] | None:
    """(first line with decorators, definition line, label) of each top-level
    definition, 0-based; None when the file does not parse."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    kinds = {ast.FunctionDef: "def", ast.AsyncFunctionDef: "async def", ast.ClassDef: "class"}
    return [
        (
            min([node.lineno, *(d.lineno for d in node.decorator_list)]) - 1,
            node.lineno - 1,
            f"{kinds[type(node)]} {node.name}",
        )
        for node in tree.body
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
    ]


def _pattern_starts(lines: list[str], pattern: re.Pattern[str]) -> list[tuple[int, int, str]]:
    return [(i, i, _label(line)) for i, line in enumerate(lines) if pattern.match(line)]


def code_parts(source: str, suffix: str) -> list[Part]:
    lines = source.split("\n")
    starts = _python_starts(source) if suffix in (".py", ".pyi") else None
    if starts is None:
        starts = _pattern_starts(lines, DEFINITION[suffix])
    # A definition's own comments (and decorators) directly above it belong to it.
    bounds: list[int] = []
    floor = 0
    for first, line, _ in starts:
        while first > floor and lines[first - 1].strip() and _LEADING.match(lines[first - 1]):
            first -= 1
        bounds.append(first)
        floor = line + 1
    parts = [Part("\n".join(lines[: bounds[0] if bounds else len(lines)]))]
    for i, first in enumerate(bounds):
        end = bounds[i + 1] if i + 1 < len(bounds) else len(lines)
        parts.append(Part("\n".join(lines[first:end]), (starts[i][2],)))
    return parts


def read_source_code(file: FileInput) -> Iterator[Document]:
    source = bounded_text(decode_text(file.data), file)
    suffix = "." + file.doc_id.rsplit(".", 1)[-1].lower()
    text, sections = assemble(code_parts(source, suffix))
    yield Document(
        doc_id=file.doc_id, title=file.doc_id, text=text, uri=file.uri, sections=sections
    )
