from retrieval_mcp.cli import main

raise SystemExit(main())
