"""What the injection detector's layers report, and what they are told about the text.

The detector (`santa_core.checks.injection`) runs several layers over one text: the stock patterns and the
sentence scorer, the structural signals (`structure`), the hidden carriers (`carriers`), the addressee lexicon of
every language (`languages`), and the decoded views (`decoded`), whose decoded text goes through the other layers
again. Each layer returns `Signal`s in the original text's coordinates; the detector turns them into issues and the
held-out bench (bench/injection_heldout.py) counts what each layer stops.
"""

from __future__ import annotations

from dataclasses import dataclass

from santa_core.models import Rubric

__all__ = ["NO_CONTEXT", "Context", "Signal", "context_of"]


@dataclass(frozen=True)
class Context:
    """What the detector knows about the text besides its words.

    `criteria`: the rubric's own criterion ids and names ("no_outcome_guarantees", "No outcome guarantees"): text
    that names them beside a verdict or a state speaks to the reviewers, not to the reader.
    """

    criteria: tuple[str, ...] = ()


NO_CONTEXT = Context()
"""A text told nothing of its rubric (every layer's default)."""


@dataclass(frozen=True)
class Signal:
    """One finding of a layer.

    `start`, `end`: the span of the original text it covers; `evidence`: the original text there (for a decoded
    view, the encoded blob as written, so a person and the fix agent can find it); `name`: what was found, in the
    method's words ("a verdict in a JSON object"); `layer`: which layer found it ("structure", "carriers",
    "languages", "decoded:base64", ...), which the bench reports per layer.
    """

    start: int
    end: int
    name: str
    layer: str
    evidence: str


def context_of(rubric: Rubric | None) -> Context:
    """What the detector is told of a rubric: its criterion ids and names."""
    if rubric is None:
        return Context()
    return Context(criteria=tuple(x for c in rubric.criteria for x in (c.id, c.name)))
