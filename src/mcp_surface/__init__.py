"""The MCP surface: the tool registry agents list, the dispatcher that runs a call and
wraps it in the envelope, copy reloads that swap the registry, session records."""
