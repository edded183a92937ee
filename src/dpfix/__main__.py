"""``python -m dpfix``: the ``dpfix`` command, as ``python -m dpfix.cli`` runs it
(:func:`dpfix.cli.main`), for an environment without the installed script."""

import sys

from dpfix.cli import main

if __name__ == "__main__":
    sys.exit(main())
