"""Small files of every format, and hostile ones, made on the spot (never downloaded).

Used by the format tests and by ``bench/ingest_formats.py``. Each good file holds
one distinctive sentence per section or page, so a search can name where it is.
"""

from __future__ import annotations

import io
import json
import zipfile
from pathlib import Path

MIB = 1024 * 1024


def pdf_bytes(pages: list[str], title: str = "") -> bytes:
    """A minimal, valid PDF: one page per string, Helvetica, lines of ~90 characters."""
    objects: list[bytes] = []
    kids = " ".join(f"{4 + 2 * i} 0 R" for i in range(len(pages)))
    objects.append(b"<< /Type /Catalog /Pages 2 0 R >>")
    objects.append(f"<< /Type /Pages /Kids [{kids}] /Count {len(pages)} >>".encode())
    objects.append(b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>")
    for i, text in enumerate(pages):
        words, lines, line = text.split(), [], ""
        for word in words:
            if len(line) + len(word) > 90:
                lines.append(line)
                line = ""
            line = f"{line} {word}".strip()
        lines.append(line)
        escaped = [ln.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)") for ln in lines]
        ops = "BT /F1 10 Tf 12 TL 50 780 Td " + " ".join(f"({ln}) Tj T*" for ln in escaped) + " ET"
        stream = ops.encode("latin-1")
        objects.append(
            f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 842] "
            f"/Resources << /Font << /F1 3 0 R >> >> /Contents {5 + 2 * i} 0 R >>".encode()
        )
        objects.append(
            b"<< /Length " + str(len(stream)).encode() + b" >>\nstream\n" + stream + b"\nendstream"
        )
    info = len(objects) + 1
    objects.append(f"<< /Title ({title}) >>".encode())
    out = io.BytesIO()
    out.write(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(out.tell())
        out.write(f"{number} 0 obj\n".encode() + body + b"\nendobj\n")
    xref = out.tell()
    out.write(f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n".encode())
    for offset in offsets:
        out.write(f"{offset:010d} 00000 n \n".encode())
    out.write(
        f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R /Info {info} 0 R >>\n"
        f"startxref\n{xref}\n%%EOF\n".encode()
    )
    return out.getvalue()


def docx_bytes(title: str, sections: list[tuple[str, str]]) -> bytes:
    """A Word document: a Title paragraph, then a Heading 1 and a paragraph per section."""
    import docx

    document = docx.Document()
    document.add_paragraph(title, style="Title")
    for heading, body in sections:
        document.add_heading(heading, level=1)
        document.add_paragraph(body)
    out = io.BytesIO()
    document.save(out)
    return out.getvalue()


def zip_bomb_docx(path: Path, inflated_bytes: int) -> None:
    """A .docx whose document.xml inflates to ``inflated_bytes`` (a few KB on disk
    per MiB): a real document with the body padded by whitespace."""
    good = zipfile.ZipFile(io.BytesIO(docx_bytes("Bomb", [("Body", "tiny")])))
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as bomb:
        for info in good.infolist():
            if info.filename != "word/document.xml":
                bomb.writestr(info, good.read(info))
                continue
            xml = good.read(info)
            head, tail = xml.split(b"<w:body>", 1)
            with bomb.open("word/document.xml", "w", force_zip64=True) as out:
                out.write(head + b"<w:body>")
                block = b" " * MIB
                for _ in range(inflated_bytes // MIB):
                    out.write(block)
                out.write(tail)


def single_line_text(path: Path, size: int) -> None:
    """``size`` bytes of one line of words, written a MiB at a time."""
    block = (b"lorem ipsum " * (MIB // 12 + 1))[:MIB]
    with path.open("wb") as out:
        for _ in range(size // MIB):
            out.write(block)


MARKDOWN = """# Heat pump handbook

Heat pumps move heat rather than make it.

## Install

Plan the outdoor unit's place first.

### Linux

The controller daemon runs on Linux as the systemd unit heatpumpd, started with
systemctl enable --now heatpumpd.

## Maintenance

Clean the evaporator fins every spring with a soft brush.
"""

RST = """Glacier survey
==============

An overview of the survey.

Methods
-------

Ablation stakes
~~~~~~~~~~~~~~~

We drilled ablation stakes into the glacier tongue with a steam drill every
autumn and read their exposure each month.

Results
-------

The tongue retreated forty metres in a decade.
"""

HTML = """<!doctype html><html><head><title>Sourdough starter care</title></head><body>
<nav><ul><li><a href="/">Home</a></li><li><a href="/shop">Shop</a></li>
<li><a href="/about">About us</a></li></ul></nav>
<div class="cookie-banner">We use cookies to improve your experience. Accept all cookies.</div>
<main><article>
<h1>Sourdough starter care</h1>
<p>A starter is a living culture of wild yeast and lactic acid bacteria that raises bread
without commercial yeast. Keep it in a glass jar at room temperature.</p>
<h2>Feeding</h2>
<p>Feed the rye starter twice a day with equal weights of flour and water, discarding half
before each feeding so the culture stays vigorous and the jar does not overflow.</p>
<p>A healthy starter doubles within six hours of feeding and smells pleasantly sour.</p>
</article></main>
<footer><p>Copyright 2026 Example Bakery. All rights reserved. Newsletter signup.</p></footer>
</body></html>
"""

PYTHON = '''"""Helpers for tidal predictions."""

import math


def tide_height(hour: float) -> float:
    """Harmonic tide height in metres at ``hour``: the semidiurnal lunar constituent."""
    return 2.1 * math.cos(2 * math.pi * hour / 12.42)


class Harbour:
    """A harbour with its chart datum offset."""

    def __init__(self, datum: float) -> None:
        self.datum = datum
'''

GO = """package orbit

import "math"

// KeplerPeriod returns the orbital period of a satellite from its semi-major axis.
func KeplerPeriod(semiMajorAxis float64) float64 {
	return 2 * math.Pi * math.Sqrt(math.Pow(semiMajorAxis, 3)/398600.4418)
}

type Satellite struct {
	Name string
}
"""

PDF_PAGES = [
    "Turbine blade inspection manual. Chapter one covers safety before any climb: "
    "harness checks, rescue plans, weather limits for rope access, and the lockout of "
    "the rotor brake before a technician leaves the nacelle. Wind above twelve metres "
    "per second stops all work.",
    "Leading edge erosion on turbine blades is repaired with a polyurethane filler "
    "applied in three thin coats, each cured for two hours before sanding.",
    "Appendix: torque values for the blade root bolts, tightened in a star pattern in "
    "three passes to the final value given by the manufacturer, with a calibrated "
    "hydraulic wrench checked every six months against the reference rig in the "
    "workshop.",
]

DOCX_SECTIONS = [
    ("Overview", "This note describes the beekeeping calendar for the apiary."),
    (
        "Swarm control",
        "Inspect every brood box weekly in May and remove queen cells to prevent swarming "
        "of the colony before the main nectar flow.",
    ),
]

JSONL_ROWS = [
    {
        "uid": "r1",
        "name": "Espresso",
        "body": "Espresso is brewed by forcing hot water "
        "through finely ground coffee at nine bars of pressure.",
        "lang": "en",
    },
    {
        "uid": "r2",
        "name": "Cold brew",
        "body": "Cold brew steeps coarse coffee grounds in cold water for eighteen hours.",
        "lang": "en",
    },
]

CSV_TEXT = (
    "uid,name,body,region\n"
    'c1,Basalt,"Basalt columns form when a thick lava flow cools and contracts into '
    "hexagonal joints, as at the Giant's Causeway.\",north\n"
    'c2,Granite,"Granite is a coarse-grained intrusive rock rich in quartz and feldspar.",south\n'
)


#: The column mapping the JSONL and CSV files above need (``formats.columns``).
COLUMNS = {"text": "body", "title": "name", "id": "uid", "metadata": ("lang", "region")}


def write_good_folder(root: Path) -> dict[str, str]:
    """One small file of each format under ``root``; returns file → a query for it."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "handbook.md").write_text(MARKDOWN)
    (root / "glacier.rst").write_text(RST)
    (root / "starter.html").write_text(HTML)
    (root / "turbine.pdf").write_bytes(pdf_bytes(PDF_PAGES, title="Turbine blades"))
    (root / "bees.docx").write_bytes(docx_bytes("Beekeeping calendar", DOCX_SECTIONS))
    (root / "tides.py").write_text(PYTHON)
    (root / "orbit.go").write_text(GO)
    (root / "coffee.jsonl").write_text("\n".join(json.dumps(r) for r in JSONL_ROWS) + "\n")
    (root / "rocks.csv").write_text(CSV_TEXT)
    (root / "notes.txt").write_text("Sharpen the chisel on a water stone at twenty-five degrees.")
    return {
        "handbook.md": "controller daemon systemd unit heatpumpd",
        "glacier.rst": "ablation stakes steam drill glacier tongue",
        "starter.html": "feed the rye starter twice a day",
        "turbine.pdf": "leading edge erosion polyurethane filler",
        "bees.docx": "remove queen cells to prevent swarming",
        "tides.py": "harmonic tide height semidiurnal lunar",
        "orbit.go": "orbital period semi-major axis satellite",
        "coffee.jsonl": "cold water coarse coffee eighteen hours",
        "rocks.csv": "basalt columns hexagonal joints lava",
        "notes.txt": "sharpen the chisel water stone",
    }


def write_hostile_folder(root: Path, *, big_text_bytes: int = 100 * MIB, bomb_bytes: int) -> None:
    """One broken or hostile file of each kind under ``root``."""
    root.mkdir(parents=True, exist_ok=True)
    good_pdf = pdf_bytes(PDF_PAGES)
    (root / "truncated.pdf").write_bytes(good_pdf[: len(good_pdf) * 2 // 3])
    zip_bomb_docx(root / "bomb.docx", bomb_bytes)
    depth = 50_000
    (root / "nested.html").write_text(
        "<html><body>" + "<div>" * depth + "deep" + "</div>" * depth + "</body></html>"
    )
    single_line_text(root / "huge.txt", big_text_bytes)
    (root / "latin1.txt").write_bytes("Crème brûlée à la café".encode("latin-1"))
    (root / "binary.md").write_bytes(bytes(range(256)) * 64)
    (root / "damaged.docx").write_bytes(b"PK\x03\x04 not really a zip")
