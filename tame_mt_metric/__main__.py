"""``python -m tame_mt_metric``: the command line."""

import sys

from tame_mt_metric.cli import main

if __name__ == "__main__":
    sys.exit(main())
