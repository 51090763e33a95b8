"""Agent-facing copy as operator config: the model, the sandboxed loader, the linter."""
