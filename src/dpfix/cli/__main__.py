"""``python -m dpfix.cli``: the ``dpfix`` command without its installed script."""

import sys

from dpfix.cli import main

if __name__ == "__main__":
    sys.exit(main())
