"""Retrieved text is untrusted data: sanitise it on ingest, wrap it on read, screen it.

* ``sanitise(text)``: what may be stored and shown. Controls, invisible and
  directional characters removed, NFC, marker lookalikes escaped one way.
* ``wrap(text)`` / ``unwrap(value)`` / ``strip_untrusted(value)``: the
  ``⟦untrusted⟧…⟦/untrusted⟧`` markers around a passage handed to an agent.
* ``screen(text) -> ScreenResult``: which families of injected instructions a passage
  contains (``FAMILIES``, from the rules) and whether the learned layer fired
  (``LEARNED_FLAG``); a tripwire for quarantine or annotation, not a guarantee.
  ``screen_rules`` is the rules alone.

Pure and synchronous: no Trio, no I/O.
"""

from retrieval_mcp.screening.injection_patterns import FAMILIES
from retrieval_mcp.screening.injection_screen import (
    FLAGS,
    LEARNED_FLAG,
    ScreenResult,
    screen,
    screen_rules,
)
from retrieval_mcp.screening.markers import CLOSE_MARKER, FORGED_MARKER, OPEN_MARKER
from retrieval_mcp.screening.sanitize import sanitise
from retrieval_mcp.screening.wrap import is_wrapped, strip_untrusted, unwrap, wrap

__all__ = [
    "CLOSE_MARKER",
    "FAMILIES",
    "FLAGS",
    "FORGED_MARKER",
    "LEARNED_FLAG",
    "OPEN_MARKER",
    "ScreenResult",
    "is_wrapped",
    "sanitise",
    "screen",
    "screen_rules",
    "strip_untrusted",
    "unwrap",
    "wrap",
]
