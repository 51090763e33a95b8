"""latence-retrieval-mcp: an MCP server over an organisation's existing retrieval stack."""

__version__ = "0.1.0"
