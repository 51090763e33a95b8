from retrieval_mcp.launch import main

raise SystemExit(main())
