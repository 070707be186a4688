"""The new-run form of the Review page."""

from __future__ import annotations

import streamlit as st

from santa_core.models import MAX_TEXT_CHARS, Rubric
from santa_core.panels import third_for
from santa_core.providers import canonical, usable_model_ids
from santa_core.reviewers.base import PERSON
from santa_core.roles import Permission, PermissionDenied
from santa_core.run import actions
from santa_core.run.third import ThirdReviewerProblem
from santa_core.text import text_problem
from ui import app_desk, cost_estimate, identity, kept
from ui import providers as providers_ui
from ui.safe import escape_markdown

NO_KEY_TITLE = "No model provider key: person reviewers only (how to add a key)"
NO_KEY_HELP = (
    "No Anthropic API key, OpenAI key or other model provider is configured, so model reviewers are unavailable; "
    "person reviewers work fully. To add one, set `ANTHROPIC_API_KEY` or `OPENAI_API_KEY` in the environment "
    'or put `ANTHROPIC_API_KEY = "sk-ant-…"` in `.streamlit/secrets.toml` (an OpenAI-compatible endpoint: '
    "see the Settings page), then restart the app."
)


def field_problem(label: str, text: str) -> str | None:
    """A specific message for an empty or oversized field (`santa_core.text.text_problem`) with what to do, else None."""
    problem = text_problem(text, label)
    if problem is None:
        return None
    return f"{problem}. " + (f"Paste the {label.lower()} to review." if not text.strip() else "Trim it and try again.")


TYPED = ("new_spec", "new_output")
"""The form's texts, kept across a visit to another page until a run is started with them."""

TRIED = "new_run_tried"
"""Set by a click on Start review (before the rerun it causes): from then on each field shows its problem right
under it, checked again on every rerun, so a fixed field loses its error as soon as the box is left."""


def _tried() -> None:
    st.session_state[TRIED] = True


def counter(text: str, limit: int = MAX_TEXT_CHARS) -> str:
    """ "12,345 / 200,000 characters"; over the limit, by how much (red)."""
    shown = f"{len(text):,} / {limit:,} characters"
    return f":red[{shown}: {len(text) - limit:,} over the limit]" if len(text) > limit else shown


def big_field(label: str, key: str, height: int, placeholder: str) -> tuple[str, str | None]:
    """A large text box with its character count under it, and, once Start was clicked, its problem right
    there (not under the button, out of view); the text and its problem."""
    text = st.text_area(
        label,
        key=key,
        height=height,
        placeholder=placeholder,
        help=f"Up to {MAX_TEXT_CHARS:,} characters. The count below updates when you leave the box.",
    )
    problem = field_problem(label, text)
    st.caption(counter(text))
    if problem and st.session_state.get(TRIED):
        st.error(problem, icon=":material/error:")  # our own words, numbers and a control character's escape
    return text, problem


SLOT_HELP = (
    "A model id (provider:model; a bare claude-… id is Anthropic's), or 'person' for a human who fills "
    "the slot in this app. The family follows the id: two reviewers of one family share blind spots."
)


def _model_choice(label: str, default: str, key: str, usable: list[str], help: str) -> str:
    """Every usable provider's models and `person`; the default stays offered even when its provider has no key
    (it is marked, and the start refused), so a setting never silently turns into another model. With no key
    at all, only `person`."""
    return providers_ui.slot_picker(label, default, key, usable, help=help)  # Settings draws the same


def _rubric_choice(default: str) -> Rubric:
    """Stored rubric (default from Settings) and version (the latest by default), resolved."""
    store = app_desk.desk().rubrics
    names = store.names()
    left, right = st.columns([3, 1])
    name = left.selectbox(
        "Rubric",
        names,
        index=names.index(default) if default in names else 0,
        key="new_rubric",
        help="Edit rubrics on the Rubrics page; the run keeps the version it was judged by.",
    )
    versions = [v.version for v in store.versions(name)]
    # The latest version is part of the key: when a newer version is saved, the picker starts on it again.
    version = right.selectbox(
        "Version",
        versions,
        key=f"new_rubric_version_{name}_{versions[0]}",
        format_func=lambda v: f"v{v} (latest)" if v == versions[0] else f"v{v}",
    )
    return store.resolved(name, version)


ANYONE = ""
"""A person slot nobody in particular is assigned to: anyone who may review takes it."""


def _person_choice(slot: str, reviewer: str) -> str | None:
    """For a `person` slot: who fills it (None: anyone who may review)."""
    if reviewer != PERSON:
        return None
    people = app_desk.desk().people.with_permission(Permission.PERSON_REVIEW)
    labels = {ANYONE: "anyone who may review", **{p.id: p.label for p in people}}
    who = st.selectbox(
        f"Assign slot {slot} to",
        list(labels),
        key=f"new_person_{slot.lower()}",
        format_func=labels.get,
        help="The slot appears in this person's Inbox; 'anyone' lists it for everyone who may review.",
    )
    return who or None


NO_KEY_D = (
    "Reviewer D must be a model, and no model provider has a key: a run on this rubric cannot start here. "
    "Add a key (see above), or pick a rubric without high-risk criteria."
)


def _third_choice(rubric: Rubric, default: str, reviewer_b: str, reviewer_c: str, usable: list[str]) -> str | None:
    """For a rubric with high-risk criteria: the third reviewer, a model (None: the rubric asks for none). It starts
    on the default unless that is B or C, then on the cheapest other model (`panels.third_for`)."""
    if not (high_risk := rubric.third_reviewer_ids()):
        return None
    if canonical(default) in {canonical(reviewer_b), canonical(reviewer_c)}:
        default = third_for(reviewer_b, reviewer_c)
    names = ", ".join(c.name for c in rubric.criteria if c.third_reviewer)
    picked = providers_ui.third_picker(
        f"Reviewer D (high-risk: {names})",
        default,
        "new_reviewer_d",
        usable,
        help=f"The rubric marks {', '.join(high_risk)} high-risk: a third model judges "
        "them too, and the run ships only when B, C and D all pass.",
    )
    if not usable:  # "person reviewers only" above, but D is a model: said here, not first at Start's refusal
        st.warning(NO_KEY_D)
    return picked


def new_run_form() -> int | None:
    """Render the form (for people who may start runs); returns the new run's id when one was started."""
    if not identity.can(Permission.START_RUN):
        st.info(escape_markdown(identity.refusal(Permission.START_RUN)))  # escaped: the label holds a signed-in name
        return None
    d, usable = app_desk.defaults(), usable_model_ids()
    if not usable:  # folded: open in full it pushed Start below the fold of a 1280×800 screen
        with st.expander(NO_KEY_TITLE, icon=":material/info:"):
            st.markdown(NO_KEY_HELP)
    for widget in TYPED:  # a visit to another page before Start keeps what was pasted
        kept.keep(widget)
    # Side by side, so Start is in view on a fresh form at 1280×800 (each box can be dragged taller).
    left, right = st.columns(2)
    with left:
        spec, spec_problem = big_field("Spec", "new_spec", 96, "What was the output supposed to be?")
    with right:
        output, output_problem = big_field("Output", "new_output", 96, "The AI-generated text to review")
    rubric = _rubric_choice(d.rubric)
    b_col, c_col = st.columns(2)
    with b_col:
        reviewer_b = _model_choice("Reviewer B", d.reviewer_b, "new_reviewer_b", usable, SLOT_HELP)
        person_b = _person_choice("B", reviewer_b)
    same_person = None
    with c_col:
        reviewer_c = _model_choice("Reviewer C", d.reviewer_c, "new_reviewer_c", usable, SLOT_HELP)
        person_c = _person_choice("C", reviewer_c)
        if person_b and person_b == person_c:
            same_person = (
                "Slots B and C are both assigned to the same person; the two reviews must come from "
                "different reviewers. Assign one of them to someone else, or to anyone."
            )
            st.error(same_person)  # at once, next to the second slot's picker
    providers_ui.panel_notes(reviewer_b, reviewer_c)
    reviewer_d = _third_choice(rubric, d.reviewer_d, reviewer_b, reviewer_c, usable)
    # A fix agent that cannot be called opens the options, so its error (under its picker) is in view.
    fixer_bad = bool(usable) and bool(providers_ui.model_problem(st.session_state.get("new_fixer", d.fixer)))
    with st.expander("Run options", expanded=fixer_bad):
        fixer = _model_choice(
            "Fix agent",
            d.fixer,
            "new_fixer",
            usable,
            "A model, or 'person': you fix the flagged issues yourself in the approval step.",
        )
        auto = st.checkbox("Auto-approve fixes (no person approves each fix)", key="new_auto")
        max_rounds = st.number_input("Max rounds", 1, 10, d.max_rounds, key="new_max_rounds")
        budget = st.number_input(
            "Budget per run (USD)",
            0.01,
            100.0,
            max(0.01, float(d.budget_usd)),
            step=0.5,
            key="new_budget",
            help="The run escalates with reason 'budget' once it has spent this.",
        )
        generation = st.number_input(
            "Generation cost (USD, optional)",
            min_value=0.0,
            max_value=100_000.0,
            value=None,
            step=0.01,
            format="%.4f",
            key="new_generation_cost",
            help="What producing this output cost, if you know it. The Metrics page "
            "compares the review cost with it, and so does the estimate below.",
        )
    # Said before Start; Start stays enabled and refuses with the reason, as for a reviewer that cannot be called.
    screen_problem = providers_ui.screen_notice(app_desk.desk().runner, reviewer_b, reviewer_c)
    start, cost = st.columns(
        [1, 3], vertical_alignment="center"
    )  # the estimate beside Start, not above it (Start whole at 1,024 px)
    with cost:
        estimate = cost_estimate.round_estimate(rubric, spec, output, reviewer_b, reviewer_c, reviewer_d=reviewer_d)
        cost_estimate.show_round(estimate, generation)
    if not start.button("Start review", type="primary", key="start_review", on_click=_tried):
        return None
    # Each problem is shown at its field (above); here, by the button, what stopped the start and where to look.
    problems = [
        f"{label}: see the message under the box above."
        for label, bad in (("Spec", spec_problem), ("Output", output_problem))
        if bad
    ]
    problems += [
        f"{label} ({model}) cannot be called here: pick another model, or add its provider's key."
        for label, model in (
            ("Reviewer B", reviewer_b),
            ("Reviewer C", reviewer_c),
            ("Reviewer D", reviewer_d),
            ("Fix agent (under Run options)", fixer),
        )
        if providers_ui.model_problem(model)
    ]
    if same_person:
        problems.append("Slots B and C are assigned to the same person (see above).")
    if screen_problem:
        problems.append("The injection screen cannot run (see above): add its key, or turn it off in Settings.")
    if problems:
        st.error(escape_markdown("Not started. " + " ".join(problems)))
        return None
    try:
        run_id = actions.start_run(
            app_desk.desk().runs,
            spec,
            output,
            rubric,
            reviewer_b,
            reviewer_c,
            fixer,
            identity.actor(),
            auto_approve=auto,
            budget_usd=float(budget),
            max_rounds=int(max_rounds),
            source="app",
            person_b=person_b,
            person_c=person_c,
            generation_cost_usd=generation,
            reviewer_d=reviewer_d,
        )
    except (PermissionDenied, ThirdReviewerProblem) as exc:  # roles changed since the page was drawn; the form keeps
        # what was typed
        st.error(escape_markdown(f"Not started: {exc}"))
        return None
    st.session_state.pop(TRIED, None)  # the next form starts without errors on its empty fields
    for widget in TYPED:  # and empty: the texts belong to the run just started
        kept.forget(widget)
    return run_id
