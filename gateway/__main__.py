"""``python -m gateway``: the same as the ``tablegraph`` command."""

import sys

from gateway.server.cli import main

sys.exit(main())
