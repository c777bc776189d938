"""`python -m app.agent`: the same as `backprop agent`."""

from app.agent.cli import main

raise SystemExit(main())
