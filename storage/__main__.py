"""Operator commands for the database at DATABASE_URL.

python -m storage upgrade                 # apply migrations (the app also does this on start)
python -m storage revision -m "add x"     # autogenerate a migration from storage/tables/
python -m storage interrupted             # mark runs left `running` as `interrupted`
"""

from __future__ import annotations

import argparse

from alembic import command

from storage.db import alembic_config, database_url, make_engine, migrate
from storage.runs import RunStore


def main(argv: list[str] | None = None) -> None:
    """Parse the command line and run one command."""
    parser = argparse.ArgumentParser(prog="python -m storage")
    parser.add_argument("command", choices=["upgrade", "revision", "interrupted"])
    parser.add_argument("-m", "--message", default="schema change")
    args = parser.parse_args(argv)
    engine = make_engine(database_url())
    try:
        if args.command == "upgrade":
            migrate(engine)
        elif args.command == "revision":
            # Autogenerate compares against the database, so bring it to head first.
            migrate(engine)
            with engine.begin() as conn:
                command.revision(alembic_config(conn), args.message, autogenerate=True)
        else:
            print(RunStore(engine).mark_interrupted())
    finally:
        engine.dispose()


if __name__ == "__main__":
    main()
