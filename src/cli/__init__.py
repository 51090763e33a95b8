"""The ``latence-retrieval-mcp`` command line: one module per subcommand, ``main`` here.

Only this package prints to the terminal; nothing else in ``retrieval_mcp`` imports it.
"""

from retrieval_mcp.cli.main import main

__all__ = ["main"]
