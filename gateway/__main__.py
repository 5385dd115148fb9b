"""``python -m gateway``: the same as the ``tablegraph`` command."""

import sys

from gateway.cli import main

sys.exit(main())
