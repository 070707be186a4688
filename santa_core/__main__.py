"""`python -m santa_core review ...`: the Santa loop from the command line.

This module is the command line's composition root: like `app.py` it wires the pure method to
`storage`, so runs started here land in the same database and appear in the app.
"""

from __future__ import annotations

import sys

from desk.cli import main

if __name__ == "__main__":
    sys.exit(main())
