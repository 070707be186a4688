"""Plotly's property paths parsed once per process instead of at every property a chart sets.

Every `update_layout`/`update_xaxes`/`add_hline` key ("margin", "xaxis_title", "line_dash") is checked against
the figure's property tree by `plotly.basedatatypes._str_to_dict_path_full`, which splits the string afresh
each time (at ".", "[", "]" and "_", defining a helper class per call): about a tenth of the Metrics page's
CPU. The answer depends only on the string (and plotly's fixed table of property names that hold an
underscore), so it is kept per string; each caller still gets a list of its own, as before. What is drawn is
unchanged: same parse, same figure.
"""

from __future__ import annotations

import functools
from typing import Any

from plotly import basedatatypes

_PARSE = basedatatypes._str_to_dict_path_full


@functools.lru_cache(maxsize=4096)
def _parsed(path: str) -> tuple[tuple[Any, ...], tuple[int, ...]]:
    props, starts = _PARSE(path)
    return props, tuple(starts)


def _remembered(path: Any) -> tuple[tuple[Any, ...], list[int]]:
    if not isinstance(path, str):
        return _PARSE(path)  # type: ignore[no-any-return]
    props, starts = _parsed(path)
    return props, list(starts)


def parse_once() -> None:
    """Answer plotly's path parsing from the per-string memo (idempotent)."""
    basedatatypes._str_to_dict_path_full = _remembered
