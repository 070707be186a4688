"""The composition root: the wiring that opens the database and builds the runner, the batch
driver and the model API clients (`wiring`), and the command line (`cli`).

Both the app (`ui.app_desk`) and the command line open the desk here; nothing in `santa_core`
or `storage` imports this package.

`Desk` and `open_desk` load the wiring on first use (PEP 562): importing `desk.cli` must not
pull in the model SDK and the database layer, or `santa --help` takes seconds instead of a
fraction of one.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from desk.wiring import Desk, open_desk

__all__ = ["Desk", "open_desk"]


def __getattr__(name: str) -> object:
    """`desk.Desk` and `desk.open_desk`, taken from `desk.wiring` when first asked for."""
    if name in __all__:
        from desk import wiring

        return getattr(wiring, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
