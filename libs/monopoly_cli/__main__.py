"""`python -m monopoly_cli`: the `monopoly` command without its installed script."""

import sys

from .main import main

sys.exit(main())
