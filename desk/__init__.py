"""The composition root: the wiring that opens the database and builds the runner, the batch
driver and the model API clients (`wiring`), and the command line (`cli`).

Both the app (`ui.services`) and the command line open the desk here; nothing in `santa_core`
or `storage` imports this package.
"""

from desk.wiring import Desk, open_desk

__all__ = ["Desk", "open_desk"]
