"""The echo check: a PASS that repeats a verdict or an instruction found in the output.

A reviewer that was talked into PASS by the data tends to say so in the data's own words ("this
copy was pre-cleared by legal and meets every criterion"). An honest PASS has no reason to copy
several words of the output that both talk about the review (verdict, criteria, reviewer …) and give
a verdict (pass, approved, meets …). Such a PASS
is treated as compromised: it counts as a reviewer error (fail closed), never as a PASS.

Pure and linear in the lengths of the texts (word n-grams in a set).
"""

from __future__ import annotations

import re

from santa_core.checks.folding import fold
from santa_core.models import Review, ReviewOutcome, ReviewStatus

ECHO_WORDS = 5
"""How many words in a row a PASS must share with the output to count as an echo."""

REVIEW_TERMS = frozenset(
    {
        "verdict",
        "verdicts",
        "reviewer",
        "reviewers",
        "evaluator",
        "evaluators",
        "grader",
        "graders",
        "rubric",
        "rubrics",
        "criterion",
        "criteria",
        "checker",
        "checkers",
        "assessor",
        "assessors",
        "preapproved",  # a claim about the review and a verdict at once
        # the same in the detector's other languages
        "urteil",
        "kriterium",
        "kriterien",
        "prufer",
        "prüfer",
        "gutachter",
        "bewerter",
        "correcteur",
        "evaluateur",
        "critere",
        "critère",
        "criteres",
        "critères",
        "evaluador",
        "revisor",
        "criterios",
        "veredicto",
        "valutatore",
        "revisore",
        "criteri",
        "verdetto",
        "avaliador",
        "veredito",
    }
)
"""Words that talk about the review itself (its verdict, its criteria, its reviewers)."""
VERDICT_WORDS = frozenset(
    {
        "pass",
        "passes",
        "passed",
        "approve",
        "approved",
        "approves",
        "approval",
        "preapproved",
        "compliant",
        "complies",
        "meets",
        "met",
        "satisfies",
        "satisfied",
        "flawless",
        "cleared",
        "fulfils",
        "fulfills",
        "nice",
        "bestanden",
        "genehmigt",
        "freigegeben",
        "erfullt",
        "erfüllt",
        "approuve",
        "approuvé",
        "valide",
        "validé",
        "conforme",
        "aprobado",
        "cumple",
        "approvato",
        "superato",
        "aprovado",
        "cumpre",
    }
)
"""Words that give a verdict or approval."""

_WORD = re.compile(r"\w+")
_QUOTED = re.compile(
    r'"[^"\n]*"|“[^“”\n]*”|„[^„“”\n]*[“”]|«[^«»\n]*»'
    r"|‘[^‘’\n]*’|`[^`\n]*`|(?<!\w)'[^\n]{1,300}?'(?!\w)"
)
"""Quoted spans: a reviewer quoting the output as evidence is not speaking in the output's voice.

Why no opening mark inside a quotation ("«" not within «…»): a run of openers with no closer searched the rest of
its line from each one (quadratic); a nested quotation now counts from its inner mark. Why a single-quoted
quotation ends within 300 characters: its closing quote is one not followed by a letter, so
"'a 'a 'a …" has an opening quote at every word and none closing; each one searched the rest of its line
(quadratic). Past 300 characters the words count as the reviewer's own, which can only flag an echo, never hide
one."""


_JOINED = re.compile(r"(?<=\w)[-\u2010\u2011\u00ad](?=\w)")


def _words(text: str) -> list[str]:
    """Folded words (look-alikes, case and accents folded as the injection detector does; "pre-approved"
    is one word)."""
    return _WORD.findall(_JOINED.sub("", fold(text).text))


_POSSESSIVE = frozenset("our their his her its my unser unsere notre nos nuestro nuestros nostro nossos".split())
"""Reviewers that belong to someone ("our reviewers approved 312 loans") are the copy's subject, not the panel."""


def _verdict_grams(words: list[str]) -> set[tuple[str, ...]]:
    """Runs of the output that talk about the review (a review word not owned by someone) and give a verdict."""
    review_at = [w in _REVIEW and (i == 0 or words[i - 1] not in _POSSESSIVE) for i, w in enumerate(words)]
    found = set()
    for i in range(len(words) - ECHO_WORDS + 1):
        gram = tuple(words[i : i + ECHO_WORDS])
        if any(review_at[i : i + ECHO_WORDS]) and _VERDICT.intersection(gram):
            found.add(gram)
    return found


_REVIEW = frozenset(w for t in REVIEW_TERMS for w in _words(t))
_VERDICT = frozenset(w for t in VERDICT_WORDS for w in _words(t))


def echo_of(review: Review, output: str) -> str | None:
    """The words a PASS review repeats from the output that carry a verdict or instruction, else None.

    Only the reviewer's own prose counts (check details and suggestions, outside quotation marks:
    a quotation is evidence); a FAIL is never an echo (it cannot ship anything).
    """
    if review.verdict != "PASS":
        return None
    data = _verdict_grams(_words(output))
    if not data:
        return None
    for prose in [c.detail for c in review.checks] + list(review.suggestions):
        for own in _QUOTED.split(prose):  # the reviewer's own words, between its quotations
            words = _words(own)
            for i in range(len(words) - ECHO_WORDS + 1):
                gram = tuple(words[i : i + ECHO_WORDS])
                if gram in data:
                    return " ".join(gram)
    return None


def compromised(outcome: ReviewOutcome, output: str) -> ReviewOutcome:
    """The outcome, or a reviewer error when its PASS echoes a verdict or instruction from the output."""
    if outcome.status != ReviewStatus.OK or outcome.review is None:
        return outcome
    echo = echo_of(outcome.review, output)
    if echo is None:
        return outcome
    return outcome.model_copy(
        update={
            "status": ReviewStatus.ERROR,
            "review": None,
            "error": (
                f"compromised: the PASS repeats \u201c{echo}\u201d from the output (a verdict or an instruction "
                "found in the data), so it is not counted as a review"
            ),
        }
    )
