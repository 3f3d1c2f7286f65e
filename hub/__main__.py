"""`python -m hub` is `bolt-hub`."""

import sys

from hub.cli import main

sys.exit(main())
