"""`people list|set`: who may do what (how the first admin is made)."""

from __future__ import annotations

import argparse
import json

from desk.cli.common import CLI_ACTOR, EXIT_SHIPPED, BadInput, CliParser, as_columns, open_repo


def add_parser(sub: argparse._SubParsersAction) -> None:
    """`people list`, `people set EMAIL --roles R1,R2 [--name NAME]`."""
    pe = sub.add_parser("people", help="list people or set a person's roles")
    psub = pe.add_subparsers(dest="people_command", required=True, parser_class=CliParser)
    ls = psub.add_parser("list", help="everyone with their roles")
    ls.add_argument("--json", action="store_true", help="print one JSON array")
    setp = psub.add_parser("set", help="set a person's roles (adds the person when new)")
    setp.add_argument("email", help="the person's id: the e-mail they sign in with")
    setp.add_argument(
        "--roles", required=True, help="comma-separated: editor, compliance_officer, rubric_author, viewer, admin"
    )
    setp.add_argument("--name", help="display name")


def run_people(args: argparse.Namespace) -> int:
    """`people list` and `people set` (acting as `cli`: how the first admin is made)."""
    from santa_core import people as people_actions
    from santa_core.people import PeopleError
    from santa_core.roles import ROLE_LABEL, parse_roles

    repo = open_repo()
    if args.people_command == "set":
        try:
            roles = parse_roles(r for r in args.roles.split(",") if r.strip())
            if not roles:
                raise PeopleError("give at least one role with --roles")
            person = people_actions.set_roles(repo.people, args.email, roles, CLI_ACTOR, args.name)
        except ValueError as exc:  # PeopleError is a ValueError, as is an unknown role
            raise BadInput(str(exc)) from exc
        print(f"{person.label}: {', '.join(ROLE_LABEL[r] for r in person.roles)}")
        return EXIT_SHIPPED
    people = repo.people.all()
    if args.json:
        print(json.dumps([p.model_dump(mode="json") for p in people], indent=2, ensure_ascii=False))
        return EXIT_SHIPPED
    rows = [("ID", "NAME", "ROLES", "UPDATED BY", "UPDATED AT")]
    rows += [
        (p.id, p.name, ",".join(r.value for r in p.roles), p.updated_by, f"{p.updated_at:%Y-%m-%d %H:%M}")
        for p in people
    ]
    print(as_columns(rows))
    return EXIT_SHIPPED
