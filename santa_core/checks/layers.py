"""The injection detector's layers, run together: what each finds in a text and in each decoded view of it.

The stock patterns and the sentence scorer (`injection`) know how English and five other languages address a
reviewer; they miss what an attacker can change freely. The other layers look at what an attack cannot do without:
- `structure`: a verdict given in a machine-readable shape, the desk's own roles or transcript imitated, a judgement
  told its value, the rubric claimed changed, the rubric's own criteria given a state;
- `carriers`: text a reader does not see (comments, attributes, hidden elements, invisible characters), judged on a
  low bar by what it says;
- `languages`: an automated agent addressed with an order or a verdict, in every language of the lexicon;
- `decoded`: base64/base32/hex blobs, percent-encoding, entities, rot13 near a hint, reversed text, the UTS #39
  skeleton of look-alike letters: each view goes through every other layer once (a view is not decoded again).

Every layer runs inside the detector's budget (`bounded`), so a text none can finish goes to a person.
"""

from __future__ import annotations

from collections.abc import Callable

from santa_core.checks import carriers, decoded, languages, structure
from santa_core.checks.exemptions import record_at
from santa_core.checks.signals import Context, Signal

__all__ = ["LAYERS", "layered"]

Find = Callable[[str, Context], list[Signal]]


def _structure(text: str, ctx: Context) -> list[Signal]:
    """The structural signals, but for a verdict in a record of something else (minutes, an API's response, a load
    test, an inspection): the stock patterns' exemption (`exemptions.record_at`) holds for every layer."""
    return [
        s
        for s in structure.find(text, ctx)
        if not (s.name.startswith(_RECORD_SHAPES) and record_at(text, s.start, s.end, ctx.criteria))
    ]


_RECORD_SHAPES = ("a verdict assigned to a judging key", "a verdict assigned in a record", "a judgement told its value")
"""The structural findings a record of something else can hold (a criterion's state, a role, a claim never are)."""


LAYERS: tuple[tuple[str, Find], ...] = (
    ("structure", _structure),
    ("carriers", carriers.find),
    ("languages", languages.find),
)
"""The layers that read the text as it is (the stock detector aside), by the name the bench reports."""


def layered(text: str, ctx: Context, stock: Callable[[str], list[Signal]]) -> dict[str, list[Signal]]:
    """Each layer's findings in `text` by layer name: "detector" (the stock patterns and the scorer, `stock`), each of
    LAYERS, and "decoded:<view>" for what any of them finds in a decoded view (on the encoded span of the text)."""
    found: dict[str, list[Signal]] = {"detector": stock(text)}
    for name, find in LAYERS:
        found[name] = find(text, ctx)
    made, unread = decoded.views_read(text)
    if unread is not None:  # padding that spends the caps must not hide what comes after it: a person reads it
        what = (
            f"more encoded text than the detector reads ({decoded.MAX_VIEWS} views, {decoded.MAX_DECODED:,} "
            "characters): what it says once decoded is unknown"
        )
        found["decoded:unread"] = [
            Signal(unread.start, unread.end, what, "decoded:unread", text[unread.start : unread.end])
        ]
    for view in made:
        inner = stock(view.text) + [s for _, find in LAYERS for s in find(view.text, ctx)]
        if not inner:
            continue
        layer = f"decoded:{view.name}"
        what = f"{inner[0].name}, once decoded ({view.name}: {view.text[:80]!r})"
        found.setdefault(layer, []).append(Signal(view.start, view.end, what, layer, text[view.start : view.end]))
    return found
