"""AppTest drives the Rubrics page like a rubric author, against a real SQLite file."""

from __future__ import annotations

import pytest
from sqlmodel import Session, func, select
from streamlit.testing.v1 import AppTest

from storage.runs import RunStore
from storage.tables import RubricVersionRow, RunRow, TrialRow
from tests.ui.test_app import plain, texts

PAGE = "pages/rubrics.py"


@pytest.fixture
def repo(desk_env: RunStore) -> RunStore:
    """A fresh database (built-in rubrics seeded) and a stand-in model, as for the other pages."""
    return desk_env


def open_rubrics(rubric: str | None = None, user: str | None = None) -> AppTest:
    """The Rubrics page, as the local user (an admin) or as a signed-in person."""
    at = AppTest.from_file("../../app.py", default_timeout=30)
    if user:
        at.user = {"is_logged_in": True, "email": user, "name": user.split("@")[0].title()}
    if rubric:
        at.query_params["rubric"] = rubric
    at.run()
    at.switch_page(PAGE).run()
    assert not at.exception, at.exception
    return at


def act(at: AppTest) -> AppTest:
    at.run()
    assert not at.exception, at.exception
    return at


def version_rows(repo: RunStore) -> int:
    with Session(repo.engine) as s:
        return s.exec(select(func.count()).select_from(RubricVersionRow)).one()


def new_compliance_rubric(at: AppTest) -> None:
    """Create acme-compliance v1 from the general base plus the compliance extension."""
    at.selectbox(key="rubric_pick").set_value("+ New rubric")
    act(at)
    at.text_input(key="rs_name").set_value("acme-compliance")
    at.selectbox(key="rs_domain").set_value("compliance")
    at.multiselect(key="rs_extends").set_value(["general", "compliance"])
    at.text_input(key="rs_note").set_value("Base plus the compliance extension")
    act(at)
    at.button(key="rs_save").click()
    act(at)


def test_author_creates_edits_diffs_exports_and_reimports(repo: RunStore) -> None:
    at = open_rubrics()
    new_compliance_rubric(at)
    assert "Saved acme-compliance v1." in texts(at)
    v1 = repo.rubrics.resolved("acme-compliance", 1)
    assert v1.criterion_ids() == repo.rubrics.resolved("compliance").criterion_ids()  # shared base counted once
    assert repo.rubrics.document("acme-compliance", 1).extends == ["general@1", "compliance@1"]

    # add a criterion with a forbidden-terms check, but forget the fail signal
    at.button(key="rs_add").click()
    act(at)
    uid = "k0"
    at.text_input(key=f"rc_{uid}_id").set_value("no_superlatives")
    at.text_input(key=f"rc_{uid}_name").set_value("No unprovable superlatives")
    at.text_area(key=f"rc_{uid}_pass_condition").set_value(
        "None of the forbidden superlatives listed in the check appears in the output."
    )
    at.selectbox(key=f"rc_{uid}_check_type").set_value("forbidden_terms")
    act(at)
    at.text_area(key=f"rc_{uid}_chk_forbidden_terms_terms").set_value("best in class\nnumber one")
    at.text_input(key="rs_note").set_value("Ban unprovable superlatives")
    act(at)
    assert "no fail signal" not in texts(at).lower()  # untouched: not an error yet
    at.button(key="rs_save").click()  # the save attempt shows it, by the field and by the button
    act(at)
    shown = texts(at)
    assert "no fail signal" in shown.lower()
    assert "Not saved: 1 error blocks saving; it is marked :material/block: above." in shown
    assert at.text_area(key=f"rc_{uid}_fail_signal").label == ":material/block: Fail signal"
    assert version_rows(repo) == 5  # 4 built-ins + v1: nothing saved

    # fix it and save version 2
    at.text_area(key=f"rc_{uid}_fail_signal").set_value('"Best in class" or "number one" appears.')
    act(at)
    assert at.text_area(key=f"rc_{uid}_fail_signal").label == "Fail signal"
    at.button(key="rs_save").click()
    act(at)
    assert "Saved acme-compliance v2." in texts(at)
    v2 = repo.rubrics.resolved("acme-compliance", 2)
    assert v2.criterion_ids()[-1] == "no_superlatives"
    assert v2.criteria[-1].check == {"type": "forbidden_terms", "terms": ["best in class", "number one"]}
    info = repo.rubrics.versions("acme-compliance")
    assert [(v.version, v.change_note) for v in info] == [
        (2, "Ban unprovable superlatives"),
        (1, "Base plus the compliance extension"),
    ]

    # diff v1 against v2 (the Versions tab defaults to previous vs latest)
    assert at.selectbox(key="diff_old").value == 1 and at.selectbox(key="diff_new").value == 2
    shown = texts(at)
    assert "Criteria: 1 added." in shown
    assert "no_superlatives · added" in shown
    assert any("+  name: No unprovable superlatives" in c.value or "+- id: no_superlatives" in c.value for c in at.code)

    # export v2 as YAML, import that file: unchanged; export again: the same bytes
    exported = repo.rubrics.export("acme-compliance", 2, "yaml")
    assert at.selectbox(key="exp_version").value == 2
    assert any(c.value == exported.rstrip("\n") for c in at.code)  # st.code drops the final newline
    at.text_area(key="imp_text").set_value(exported)
    at.radio(key="imp_format").set_value("yaml")
    at.button(key="imp_go").click()
    act(at)
    assert "Unchanged: acme-compliance v2 already has exactly this content." in texts(at)
    assert version_rows(repo) == 6
    assert repo.rubrics.export("acme-compliance", 2, "yaml") == exported


def test_run_made_before_the_edit_keeps_version_1(repo: RunStore) -> None:
    at = open_rubrics()
    new_compliance_rubric(at)
    run_id = repo.create_run("spec", "output", repo.rubrics.resolved("acme-compliance"), "person", "person", "person")
    at.button(key="rs_add").click()
    act(at)
    for field, value in {
        "id": "extra",
        "name": "Extra",
        "pass_condition": "Every price has a currency code.",
        "fail_signal": "A price without a currency code.",
    }.items():
        widget = at.text_input if field in ("id", "name") else at.text_area
        widget(key=f"rc_k0_{field}").set_value(value)
    at.text_input(key="rs_note").set_value("add extra")
    act(at)
    at.button(key="rs_save").click()
    act(at)
    assert repo.rubrics.latest_version("acme-compliance") == 2
    view = repo.get_run_view(run_id)
    assert (view.rubric.name, view.rubric.version) == ("acme-compliance", 1)
    assert "extra" not in view.rubric.criterion_ids()
    review = AppTest.from_file("../../app.py", default_timeout=30)
    review.query_params["run"] = str(run_id)
    review.run()
    review.switch_page("pages/review.py").run()
    assert "Rubric acme-compliance v1" in texts(review)
    shown = next(d.value for d in review.dataframe if "pass condition" in d.value.columns)
    assert list(shown["id"]) == repo.rubrics.resolved("acme-compliance", 1).criterion_ids()
    assert "extra" not in list(shown["id"])


def test_broken_import_names_field_and_line_and_changes_nothing(repo: RunStore) -> None:
    at = open_rubrics("compliance")
    before = version_rows(repo)
    broken = repo.rubrics.export("compliance").replace("  pass_condition:", "  pass_conditions:", 1)
    at.text_area(key="imp_text").set_value(broken)
    at.button(key="imp_go").click()
    act(at)
    shown = texts(at)
    assert "Nothing was imported" in shown
    assert "criteria[0].pass_condition: field required (line" in shown
    assert "criteria[0].pass_conditions: unknown field (line" in shown
    at.text_area(key="imp_text").set_value('{"name": "x",\n "criteria": [}')
    at.radio(key="imp_format").set_value("json")
    at.button(key="imp_go").click()
    act(at)
    assert "invalid JSON" in texts(at) and "(line 2)" in texts(at)
    assert version_rows(repo) == before


def test_upload_a_file_creates_a_new_rubric(repo: RunStore) -> None:
    at = open_rubrics()
    text = repo.rubrics.export("content", fmt="json").replace('"name": "content"', '"name": "shop-copy"', 1)
    at.file_uploader(key="imp_file").set_value(("shop-copy.json", text.encode(), "application/json"))
    act(at)
    at.button(key="imp_go").click()
    act(at)
    assert "Imported shop-copy v1." in texts(at)
    assert repo.rubrics.export("shop-copy", fmt="json") == text


def test_try_it_refuses_a_sample_holding_a_control_character(repo: RunStore) -> None:
    at = open_rubrics("compliance")
    at.text_area(key="try_output").set_value("Guaranteed\x00 returns")
    act(at)
    assert "The sample output contains a NUL character (\\x00) at character 11" in texts(at)
    assert not at.dataframe or "criterion" not in at.dataframe[-1].value  # no checks ran on it


def test_try_it_runs_checks_at_once_and_one_reviewer_on_click(repo: RunStore) -> None:
    at = open_rubrics("compliance")
    at.text_area(key="try_output").set_value("Guaranteed returns, risk‑free!")
    act(at)
    table = at.dataframe[-1].value
    row = table[table["criterion"] == "No outcome guarantees"].iloc[0]
    assert row["result"] == "FAIL" and "guaranteed returns" in row["detail"]
    assert "a run would be NAUGHTY whatever the reviewers say" in texts(at)
    at.text_area(key="try_output").set_value("All investments carry risk. Contains DEFECT.")
    act(at)
    at.button(key="try_review").click()
    act(at)
    assert "With this draft the sample is FAIL." in texts(at)
    with Session(repo.engine) as s:
        trial = s.exec(select(TrialRow)).one()
    assert (trial.kind, trial.rubric_name, trial.verdict) == ("try", "compliance", "FAIL")
    assert trial.request_json and trial.content_hash
    with Session(repo.engine) as s:
        assert s.exec(select(func.count()).select_from(RunRow)).one() == 0  # trying creates no run


def test_lint_warning_does_not_block_and_retire_keeps_the_id(repo: RunStore) -> None:
    at = open_rubrics("general")
    at.text_area(key="rc_k0_pass_condition").set_value("The copy is engaging.")
    act(at)
    assert "engaging" in texts(at) and not at.button(key="rs_save").disabled
    at.button(key="rc_k1_retire").click()
    act(at)
    at.text_input(key="rs_note").set_value("vaguer accuracy, retire hallucination check")
    act(at)
    at.button(key="rs_save").click()
    act(at)
    doc = repo.rubrics.document("general", 2)
    assert doc.criteria[1].retired
    assert "hallucination_free" not in repo.rubrics.resolved("general", 2).criterion_ids()


def test_discard_brings_back_the_saved_version(repo: RunStore) -> None:
    at = open_rubrics("code")
    at.button(key="rc_k0_remove").click()
    act(at)
    assert not at.button(key="rs_discard").disabled
    at.button(key="rs_discard").click()
    act(at)
    assert "Changes discarded." in texts(at)
    assert at.text_input(key="rc_k0_id").value == "type_safety"


# --- the Review page offers the latest version; re-checks of past runs ----------------------


def save_v2_with_banned_word(repo: RunStore, rubric: str, word: str) -> None:
    """A new version of a stored rubric whose extra criterion bans one word (a deterministic check)."""
    from santa_core.models import Criterion

    doc = repo.rubrics.document(rubric)
    extra = Criterion(
        id="banned_word",
        name=f"No '{word}'",
        category="compliance",
        pass_condition=f"The word '{word}' does not appear.",
        fail_signal=f"'{word}' appears.",
        check={"type": "forbidden_terms", "terms": [word]},
    )
    repo.rubrics.save(
        doc.model_copy(update={"criteria": [*doc.criteria, extra]}), "author@example.com", f"ban {word}", 1
    )


def test_review_page_offers_the_latest_version_and_older_ones(repo: RunStore) -> None:
    save_v2_with_banned_word(repo, "general", "ready")
    at = AppTest.from_file("../../app.py", default_timeout=30)
    at.run()
    at.switch_page("pages/review.py").run()
    assert at.selectbox(key="new_rubric").value == "general"
    picker = at.selectbox(key="new_rubric_version_general_2")
    assert picker.value == 2 and picker.options == ["v2 (latest)", "v1"]
    at.text_area(key="new_spec").set_value("spec")
    at.text_area(key="new_output").set_value("It is ready.")
    at.selectbox(key="new_reviewer_b").set_value("person")
    at.selectbox(key="new_reviewer_c").set_value("person")
    at.button(key="start_review").click().run()
    latest = repo.list_runs()[0]
    assert (latest.rubric_name, latest.rubric_version) == ("general", 2)
    at.query_params.clear()
    at.switch_page("pages/review.py").run()
    at.selectbox(key="new_rubric_version_general_2").set_value(1)
    at.text_area(key="new_spec").set_value("spec")
    at.text_area(key="new_output").set_value("It is ready.")
    at.button(key="start_review").click().run()
    assert (repo.list_runs()[0].rubric_name, repo.list_runs()[0].rubric_version) == ("general", 1)


def shipped_run(repo: RunStore, output: str) -> int:
    """A run driven to the end by the stand-in model (CLEAN text ships in round 1)."""
    from desk import open_desk

    desk = open_desk(str(repo.engine.url), mark_interrupted=False)
    try:
        run_id = desk.runs.create_run(
            "Announce the rocket.",
            output,
            desk.rubrics.resolved("general"),
            "claude-sonnet-4-6",
            "claude-haiku-4-5",
            "claude-sonnet-4-6",
        )
        desk.runner.execute(run_id)
        return run_id
    finally:
        desk.close()


def test_recheck_shows_what_a_new_version_would_catch(repo: RunStore) -> None:
    run_id = shipped_run(repo, "Acme's rocket launched in 2018. It is ready for you.")
    assert repo.load_run(run_id).state.status == "shipped"
    save_v2_with_banned_word(repo, "general", "ready")
    at = open_rubrics("general")
    assert at.selectbox(key="rck_version").value == 2
    assert at.multiselect(key="rck_runs").value == [run_id]
    at.button(key="rck_go").click()
    act(at)
    table = at.dataframe[-1].value
    row = table[table["run"] == run_id].iloc[0]
    assert row["effect"] == "would now be caught" and row["checks now"] == "banned_word"
    assert "1 shipped run(s) would now be caught" in texts(at).replace("**", "")
    trials = repo.rubrics.trials(kind="recheck")
    assert [(t.run_id, t.rubric_version, t.verdict) for t in trials] == [(run_id, 2, "FAIL")]
    assert trials[0].checks[-1].result == "FAIL"
    # under v1 with a reviewer: nothing changes, and the reviewer's verdict is recorded
    at.selectbox(key="rck_version").set_value(1)
    at.checkbox(key="rck_with_reviewer").check()
    act(at)
    at.button(key="rck_go").click()
    act(at)
    row = at.dataframe[-1].value.iloc[0]
    assert (row["effect"], row["reviewer now"]) == ("no change", "PASS")
    assert repo.rubrics.trials(kind="recheck")[0].verdict == "PASS"


def test_save_as_copies_the_draft_under_a_new_name(repo: RunStore) -> None:
    at = open_rubrics("compliance")
    at.text_input(key="rc_k0_name").set_value("No outcome promises")
    at.text_input(key="rs_copy_name").set_value("Bad Name")
    act(at)
    at.button(key="rs_copy").click()
    act(at)
    assert "must be lower-case letters" in texts(at)
    at.text_input(key="rs_copy_name").set_value("compliance-eu")
    act(at)
    at.button(key="rs_copy").click()
    act(at)
    assert "Saved compliance-eu v1." in texts(at)
    assert repo.rubrics.document("compliance-eu").criteria[0].name == "No outcome promises"
    assert repo.rubrics.document("compliance").criteria[0].name == "No outcome guarantees"  # original untouched
    assert repo.rubrics.versions("compliance-eu")[0].change_note == "copied from compliance"


# --- found in review ----------------------------------------------------------------------------


def test_a_conflicting_save_keeps_the_draft_and_can_save_over_the_newer_version(repo: RunStore) -> None:
    at = open_rubrics("general")
    at.text_input(key="rc_k0_name").set_value("Facts match the spec")
    at.text_input(key="rs_note").set_value("rename")
    act(at)
    save_v2_with_banned_word(repo, "general", "ready")  # someone else saves v2 meanwhile
    at.button(key="rs_save").click()
    act(at)
    assert "while you were editing v1" in texts(at) and "Your draft is kept" in texts(at)
    assert at.text_input(key="rc_k0_name").value == "Facts match the spec"
    at.button(key="rs_save_over").click()
    act(at)
    assert "Saved general v3." in texts(at)
    assert repo.rubrics.document("general", 3).criteria[0].name == "Facts match the spec"


def test_leaving_the_page_and_coming_back_keeps_the_rubric_and_the_draft(repo: RunStore) -> None:
    at = open_rubrics("compliance")
    at.text_input(key="rc_k0_name").set_value("Edited name")
    at.text_input(key="rs_note").set_value("half-written note")
    at.text_area(key="try_output").set_value("a sample")
    act(at)
    at.query_params.clear()
    at.switch_page("pages/runs.py").run()
    at.switch_page(PAGE).run()
    assert not at.exception
    assert at.selectbox(key="rubric_pick").value == "compliance"
    assert at.text_input(key="rc_k0_name").value == "Edited name"
    assert at.text_input(key="rs_note").value == "half-written note"
    assert at.text_area(key="try_output").value == "a sample"
    assert "Unsaved changes" not in texts(at)


def test_duplicate_copies_what_was_just_typed(repo: RunStore) -> None:
    at = open_rubrics("code")
    at.text_area(key="rc_k0_fail_signal").set_value("typed just now")
    at.button(key="rc_k0_dup").click()
    act(at)
    copy = [w for w in at.text_area if w.key and w.key.endswith("_fail_signal")][1]
    assert copy.value == "typed just now" and copy.key != "rc_k0_fail_signal"


def test_opening_a_rubric_with_a_whole_number_grade_leaves_it_unchanged(repo: RunStore) -> None:
    from santa_core.models import Criterion

    doc = repo.rubrics.document("general")
    grade = Criterion(
        id="plain",
        name="Plain",
        category="completeness",
        pass_condition="Grade 8 or lower.",
        fail_signal="Grade above 8.",
        check={"type": "reading_grade", "max": 8},
    )
    repo.rubrics.save(doc.model_copy(update={"criteria": [*doc.criteria, grade]}), "author@example.com", "grade", 1)
    at = open_rubrics("general")
    act(at)
    assert at.button(key="rs_discard").disabled  # nothing changed by merely opening it
    at.text_input(key="rs_note").set_value("same")
    act(at)
    at.button(key="rs_save").click()
    act(at)
    assert "Nothing to save" in texts(at)


def test_untrusted_names_are_escaped_in_expander_labels(repo: RunStore) -> None:
    text = repo.rubrics.export("general").replace("name: Factual accuracy", "name: '![x](http://127.0.0.1:9/p.png)'")
    repo.rubrics.import_text(text, "yaml", "author@example.com")
    at = open_rubrics("general")
    labels = [e.label for e in at.expander]
    assert any("\\!\\[x\\]" in label for label in labels), labels
    assert not any("![x](" in label for label in labels)


def test_a_refused_save_does_not_follow_the_author_to_another_rubric(repo: RunStore) -> None:
    at = open_rubrics("general")
    at.text_input(key="rc_k0_name").set_value("Facts")
    at.text_input(key="rs_note").set_value("rename")
    act(at)
    save_v2_with_banned_word(repo, "general", "ready")
    at.button(key="rs_save").click()
    act(at)
    at.button(key="rs_discard").click()
    act(at)
    at.selectbox(key="rubric_pick").set_value("code")
    act(at)
    assert "was saved while you edited" not in texts(at)
    assert not [b for b in at.button if b.key == "rs_save_over"]
    at.text_input(key="rc_k0_name").set_value("Types")
    at.text_input(key="rs_note").set_value("rename")
    act(at)
    at.button(key="rs_save").click()
    act(at)
    assert "Saved code v2." in texts(at)


def test_a_whole_number_written_as_a_float_in_a_file_is_the_same_rubric() -> None:
    from santa_core.rubrics.library import export_document, read_document

    text = read_document(
        "name: x\ncriteria:\n- {id: a, name: A, category: c, pass_condition: p, fail_signal: f, "
        "check: {type: reading_grade, max: 12.0}}\n"
    )
    assert "max: 12\n" in export_document(text)


# --- roles: everyone reads rubrics; rubric authors change them; trying with a reviewer is gated ---

CHANGE_CONTROLS = ("rs_save", "rs_copy", "rs_add", "rs_discard", "imp_go", "try_review", "rck_with_reviewer")


def controls(at: AppTest) -> set[str]:
    keys = {w.key for kind in ("button", "checkbox", "text_input", "text_area", "selectbox") for w in getattr(at, kind)}
    return keys & set(CHANGE_CONTROLS) | {k for k in keys if k and k.startswith("rc_")}


def trial_rows(repo: RunStore) -> int:
    with Session(repo.engine) as s:
        return s.exec(select(func.count()).select_from(TrialRow)).one()


@pytest.mark.parametrize("who", ["viewer@example.com", "editor@example.com"])
def test_people_who_may_not_change_rubrics_read_everything_and_change_nothing(repo: RunStore, who: str) -> None:
    run_id = shipped_run(repo, "Acme's rocket launched in 2018. It is ready for you.")
    save_v2_with_banned_word(repo, "general", "ready")
    at = open_rubrics("general", user=who)
    assert controls(at) == set()  # no Save, Save as, Import, criterion fields or reviewer trials
    shown = texts(at)
    assert "To change rubrics you need to be a rubric author or an admin." in shown
    assert "To try a rubric with a reviewer you need to be a rubric author or an admin." in shown
    assert any("banned_word" in plain(e.label) for e in at.expander)  # own criteria, read-only
    assert repo.rubrics.resolved("general").criteria[0].pass_condition in shown
    assert at.selectbox(key="diff_old").value == 1 and "Criteria: 1 added." in shown  # versions and diff
    assert any(c.value == repo.rubrics.export("general", 2, "yaml").rstrip("\n") for c in at.code)  # export
    assert "+ New rubric" not in at.selectbox(key="rubric_pick").options
    # Try it: the deterministic checks run, nothing is stored
    at.text_area(key="try_output").set_value("It is ready.")
    act(at)
    assert "a run would be NAUGHTY whatever the reviewers say" in texts(at)
    # Re-check: checks only, shown and not kept
    at.button(key="rck_go").click()
    act(at)
    row = at.dataframe[-1].value.iloc[0]
    assert (row["run"], row["effect"]) == (run_id, "would now be caught")
    assert trial_rows(repo) == 0
    assert repo.rubrics.latest_version("general") == 2


def test_a_rubric_author_saves_and_is_named_on_the_version(repo: RunStore) -> None:
    at = open_rubrics("general", user="author@example.com")
    assert "To change rubrics" not in texts(at)
    at.text_input(key="rc_k0_name").set_value("Facts match the spec")
    at.text_input(key="rs_note").set_value("rename")
    act(at)
    at.button(key="rs_save").click()
    act(at)
    assert "Saved general v2." in texts(at)
    assert repo.rubrics.versions("general")[0].author == "author@example.com"


def test_storage_refuses_rubric_changes_by_people_without_the_role(repo: RunStore) -> None:
    from santa_core.roles import PermissionDenied

    doc = repo.rubrics.document("general")
    changed = doc.model_copy(update={"description": "changed"})
    with pytest.raises(PermissionDenied, match="may not change rubrics"):
        repo.rubrics.save(changed, "viewer@example.com", "sneaky", 1)
    with pytest.raises(PermissionDenied):
        repo.rubrics.import_text(
            repo.rubrics.export("general").replace("name: general", "name: mine", 1), "yaml", "editor@example.com"
        )
    with pytest.raises(PermissionDenied, match="may not try a rubric"):
        repo.rubrics.record_trial("try", repo.rubrics.resolved("general"), "text", [], None, "viewer@example.com")
    assert repo.rubrics.latest_version("general") == 1 and "mine" not in repo.rubrics.names()
    assert trial_rows(repo) == 0


def test_a_save_refused_by_storage_is_shown_and_the_draft_kept(repo: RunStore) -> None:
    at = open_rubrics("general", user="author@example.com")
    at.text_input(key="rc_k0_name").set_value("Edited before the role went")
    at.text_input(key="rs_note").set_value("rename")
    act(at)
    repo.people.set_roles("author@example.com", ["viewer"], actor="local")  # an admin takes the role away
    at.button(key="rs_save").click()
    act(at)
    errors = " ".join(e.value for e in at.error)
    assert "Not saved" in errors and "may not change rubrics" in errors and "Your draft is kept" in errors
    assert repo.rubrics.latest_version("general") == 1
    assert "unsaved changes that you may no longer save" in texts(at)
    assert any("Edited before the role went" in plain(e.label) for e in at.expander)
    repo.people.set_roles("author@example.com", ["rubric_author"], actor="local")  # and gives it back
    act(at)
    assert at.text_input(key="rc_k0_name").value == "Edited before the role went"
    at.button(key="rs_save").click()
    act(at)
    assert "Saved general v2." in texts(at)


def test_a_trial_by_someone_who_may_not_try_rubrics_asks_no_reviewer_and_says_why(
    repo: RunStore, messages_stub, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Hiding the buttons is convenience: with a page that shows them to a viewer anyway (every role check of the
    page says yes), the core's action still refuses before the paid call. The model server receives nothing,
    nothing is kept, and the page says why without a traceback."""
    from ui import identity

    run_id = shipped_run(repo, "Acme's rocket launched in 2018. It is ready for you.")
    monkeypatch.setattr(identity, "can", lambda permission: True)
    at = open_rubrics("general", user="viewer@example.com")
    at.text_area(key="try_output").set_value("All investments carry risk. Contains DEFECT.")
    act(at)
    at.checkbox(key="rck_with_reviewer").check()
    act(at)
    assert at.multiselect(key="rck_runs").value == [run_id]
    sent = len(messages_stub.calls)
    at.button(key="try_review").click()
    act(at)
    assert (
        "No reviewer was asked: viewer@example.com (viewer) may not try a rubric with a reviewer; a rubric author "
        "or an admin may." in [plain(e.value) for e in at.error]
    )
    at.button(key="rck_go").click()
    act(at)
    assert (
        "Nothing was re-checked or kept, and no reviewer was asked: viewer@example.com (viewer) may not try a "
        "rubric with a reviewer; a rubric author or an admin may." in [plain(e.value) for e in at.error]
    )
    assert len(messages_stub.calls) == sent and trial_rows(repo) == 0
