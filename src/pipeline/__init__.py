"""Pure, synchronous retrieval logic: no Trio, no network."""
