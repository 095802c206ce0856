"""``python -m sciprobe``: the ``sciprobe`` command line."""

import sys

from sciprobe.cli.commands import main

sys.exit(main())
