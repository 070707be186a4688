"""AppTest drives the Rubrics page's Suggestions tab: a rubric author tries and accepts a suggestion; a viewer may
look and try, not accept."""

from __future__ import annotations

from storage.runs import RunStore
from storage.tables import RubricVersionRow, SuggestionDecisionRow
from tests.storage.test_suggestions import claims, plain, reviewed, save_ads
from tests.support.runs import count
from tests.ui.test_app import texts
from tests.ui.test_rubric_studio import act, open_rubrics


def seeded(repo: RunStore) -> str:
    """Five runs failing `no_guarantees` on "guaranteed" and one NICE run; the suggestion's key."""
    save_ads(repo)
    reviewed(repo, claims(5) + plain(1))
    from santa_core.rubrics.learning import pending

    (s,), _, _ = pending(repo.rubrics.resolved("ads"), repo.suggestions)
    return s.key


def test_an_author_tries_then_accepts_a_suggestion(desk_env: RunStore) -> None:
    key = seeded(desk_env)
    at = open_rubrics("ads", user="author@example.com")
    assert "forbid “guaranteed” — seen in 5 runs" in texts(at)
    at.button(key=f"sg_try_{key}").click()
    act(at)
    assert "Catches 5 of the 5 evidence runs; would have failed 0 of 1 recent NICE runs." in texts(at)
    at.button(key=f"sg_accept_{key}").click()
    act(at)
    assert "Saved ads v2 with the suggestion." in texts(at)
    assert desk_env.rubrics.resolved("ads").criteria[1].check == {"type": "forbidden_terms", "terms": ["guaranteed"]}
    assert "No suggestions: no criterion of this rubric keeps failing on the same words." in texts(at)


def test_a_viewer_sees_and_tries_but_cannot_accept_or_dismiss(desk_env: RunStore) -> None:
    key = seeded(desk_env)
    at = open_rubrics("ads", user="viewer@example.com")
    assert at.button(key=f"sg_accept_{key}").disabled and at.button(key=f"sg_dismiss_{key}").disabled
    at.button(key=f"sg_try_{key}").click()
    act(at)
    assert "Catches 5 of the 5 evidence runs; would have failed 0 of 1 recent NICE runs." in texts(at)
    assert count(desk_env.engine, RubricVersionRow, name="ads") == 1
    assert count(desk_env.engine, SuggestionDecisionRow) == 0


def test_an_author_dismisses_a_suggestion(desk_env: RunStore) -> None:
    key = seeded(desk_env)
    at = open_rubrics("ads", user="author@example.com")
    at.text_input(key=f"sg_note_{key}").set_value("allowed in this market")
    at.button(key=f"sg_dismiss_{key}").click()
    act(at)
    assert "Dismissed: it will not be suggested again." in texts(at)
    (decision,) = desk_env.suggestions.decisions("ads")
    assert (decision.action, decision.note, decision.actor) == (
        "dismissed",
        "allowed in this market",
        "author@example.com",
    )


def test_the_run_page_says_a_check_stopped_the_round_before_the_reviewers(desk_env: RunStore) -> None:
    """After accepting, a new run whose text the check fails shows why no reviewer was asked, in the round and on
    each reviewer's card."""
    from santa_core.rubrics import actions
    from santa_core.rubrics.learning import pending
    from tests.ui.test_run_page import as_person

    seeded(desk_env)
    (s,), _, _ = pending(desk_env.rubrics.resolved("ads"), desk_env.suggestions)
    actions.accept_suggestion(desk_env.rubrics, desk_env.suggestions, s, "author@example.com")
    (run_id,) = reviewed(desk_env, ["New copy. Your return is guaranteed. Call us."])
    at = as_person("viewer@example.com", run_id)
    shown = texts(at)
    assert "The reviewers were not asked: a critical deterministic check failed" in shown
    assert shown.count("Not asked: a critical deterministic check failed") == 2  # the cards of B and C
