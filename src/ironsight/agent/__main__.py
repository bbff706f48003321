"""`python -m ironsight.agent` (or `python3 -m agent` when copied alone)."""

import sys

from .cli import main

sys.exit(main())
