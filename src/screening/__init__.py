"""Retrieved text is untrusted data: sanitise it on ingest, wrap it on read, screen it.

* ``sanitise(text)``: what may be stored and shown. Controls, invisible and
  directional characters removed, NFC, marker lookalikes escaped one way.
* ``wrap(text)`` / ``unwrap(value)`` / ``strip_untrusted(value)``: the
  ``⟦untrusted⟧…⟦/untrusted⟧`` markers around a passage handed to an agent.
* ``screen(text) -> ScreenResult``: which families of injected instructions a passage
  contains (``FAMILIES``, from the rules) and whether the learned layer fired
  (``LEARNED_FLAG``); a tripwire for quarantine or annotation, not a guarantee.
  ``screen_many`` screens several at once; ``screen_rules`` is the rules alone.

Synchronous, no Trio. Pure except that the learned layer's semantic half
(``semantic_layer``, ADR 0056) loads the bundled MiniLM encoder on first use and runs
it (~60 ms of CPU) for the passages its n-gram gate lets through: call it from a worker
thread where a passage may pass the gate.
"""

from retrieval_mcp.screening.injection_patterns import FAMILIES
from retrieval_mcp.screening.injection_screen import (
    FLAGS,
    LEARNED_FLAG,
    ScreenResult,
    screen,
    screen_many,
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
    "screen_many",
    "screen_rules",
    "strip_untrusted",
    "unwrap",
    "wrap",
]
