from hbserver.cli import main

raise SystemExit(main())
