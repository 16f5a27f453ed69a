"""`python -m polter` is the same as the `polter` command."""

import sys

from polter.cli import main

sys.exit(main())
