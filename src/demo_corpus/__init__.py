"""Demo corpus: the project's own documentation, ingested into an empty store on first start."""
