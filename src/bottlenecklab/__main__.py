"""`python -m bottlenecklab` is the command-line tool."""

from bottlenecklab.cli import main

raise SystemExit(main())
