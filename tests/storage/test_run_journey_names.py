"""Earlier names (`PeopleStore.earlier_names`): every rename is audited with the name before it, so a record can
name a person as they were called when they acted (a run's "started by" after a rename)."""

from __future__ import annotations

from santa_core.roles import LOCAL
from storage.runs import RunStore
from tests.support import people_runs

engine, repo = people_runs.engine, people_runs.repo  # the fixtures (an imported name would trip ruff's F811)


def test_each_rename_keeps_the_name_before_it_with_the_time_it_ended(repo: RunStore) -> None:
    first = repo.people.get(LOCAL).name
    repo.people.rename_local("Santa", "local")
    repo.people.sign_in("kim@example.com", "Kim")
    repo.people.sign_in("kim@example.com", "Kim Lee")
    repo.people.rename_local("Father Christmas", "local")
    names = repo.people.earlier_names()
    assert [n for _, n in names[LOCAL]] == [first, "Santa"]
    assert [n for _, n in names["kim@example.com"]] == ["Kim"]
    (santa_until, _), (christmas_until, _) = names[LOCAL]
    assert santa_until < christmas_until and santa_until.tzinfo is not None  # aware UTC, oldest first
    assert repo.audit.verify().ok


def test_an_admin_renaming_someone_is_audited_too(repo: RunStore) -> None:
    repo.people.set_roles("ann@example.com", ["editor"], actor="local", name="Ann")  # new: a first name, no rename
    assert "ann@example.com" not in repo.people.earlier_names()
    repo.people.set_roles("ann@example.com", ["editor"], actor="local", name="Ann Lee")
    repo.people.set_roles("ann@example.com", ["viewer"], actor="local", name="Ann Lee")  # same name: no rename
    assert [n for _, n in repo.people.earlier_names()["ann@example.com"]] == ["Ann"]
    (event,) = repo.audit.events(action="person.renamed", entity_type="person")
    assert (event.actor, event.entity_id, event.detail) == (
        "local",
        "ann@example.com",
        {"before": "Ann", "after": "Ann Lee"},
    )
