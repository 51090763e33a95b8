"""Shipped default configuration, installed as ``retrieval_mcp.defaults`` (data only)."""
