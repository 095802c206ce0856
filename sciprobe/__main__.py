"""``python -m sciprobe``: the ``sciprobe`` command line."""

import sys

from sciprobe.cli import main

sys.exit(main())
