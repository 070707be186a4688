"""Santa — review desk for AI-generated work. Entry point: `streamlit run app.py`.

Read two ways. `streamlit run app.py` finds `app` (an `st.App`) at the bottom and imports this file once,
as the module `app`, when the server starts: it says how sign-in stands (and refuses to serve a desk without
sign-in beyond loopback, `access.announce_at_start`), and its lifespan opens the desk then, before anyone opens
a page (`app_desk.open_at_server_start`). Each session then runs this file as its script, as `__main__` (AppTest
too): the pages.
"""

import streamlit as st


def pages() -> dict[str, list[st.Page]]:
    """Every file in pages/ is listed here: once st.navigation runs, Streamlit stops discovering
    pages/ on its own, so a file left out would vanish after the first run."""
    return {
        "Review desk": [
            st.Page("pages/review.py", title="Review", icon=navigation.ICON["review"], url_path="review"),
            st.Page("pages/batch.py", title="Batch", icon=navigation.ICON["batch"], url_path="batch"),
            st.Page("pages/runs.py", title="Runs", icon=navigation.ICON["runs"], url_path="runs"),
            st.Page("pages/inbox.py", title="Inbox", icon=navigation.ICON["inbox"], url_path="inbox"),
            st.Page(
                "pages/escalations.py", title="Escalations", icon=navigation.ICON["escalations"], url_path="escalations"
            ),
            st.Page(
                "pages/spot_checks.py", title="Spot-checks", icon=navigation.ICON["spot_checks"], url_path="spot-checks"
            ),
            st.Page("pages/audit.py", title="Audit", icon=navigation.ICON["audit"], url_path="audit"),
        ],
        "Insights": [st.Page("pages/metrics.py", title="Metrics", icon=navigation.ICON["metrics"], url_path="metrics")],
        "Setup": [
            st.Page("pages/rubrics.py", title="Rubrics", icon=navigation.ICON["rubrics"], url_path="rubrics"),
            st.Page("pages/people.py", title="People", icon=navigation.ICON["people"], url_path="people"),
            st.Page("pages/settings.py", title="Settings", icon=navigation.ICON["settings"], url_path="settings"),
            st.Page("pages/home.py", title="Home", url_path="home", default=True, visibility="hidden"),
        ],
    }


def escalation_count() -> None:
    """Sidebar: open escalations, the overdue ones highlighted (due dates compared with clock.now)."""
    repo = app_desk.desk().runs
    open_count = len(repo.list_escalations(status="open"))
    if not open_count:
        return
    overdue = repo.overdue_count(clock.now())
    late = f" · :red-background[**:material/warning: {overdue} overdue**]" if overdue else " · 0 overdue"
    st.markdown(f"{navigation.ICON['escalations']} {open_count} open{late}")


def main() -> None:
    """One run of a session's script: page config, the gates, navigation, sidebar, the chosen page."""
    st.set_page_config(page_title="Santa — review desk", page_icon=navigation.ICON["review"], layout="wide")
    # Secrets that cannot be read, or a desk without sign-in on an address beyond loopback: a page that says why
    # and nothing else. Someone who has not signed in (when sign-in is configured) sees the sign-in button and
    # nothing else. Neither sees the page list: the navigation is hidden until they are in.
    refused = access.refusal()
    must_sign_in = refused is None and identity.auth_configured() and not identity.signed_in()
    chosen = st.navigation(pages(), position="hidden" if refused or must_sign_in else "sidebar")
    navigation.mark_app_ran()
    access.stop_if_refused(refused)
    app_desk.secrets_to_env()
    identity.require_sign_in()
    try:
        with st.sidebar:
            identity.identity_widget()
            escalation_count()
        chosen.run()
    except Exception as exc:
        if not database_away(exc):
            raise
        st.error(
            database_away_text(exc), icon=":material/error:"
        )  # words, not a traceback: nothing is lost, it shows again


def database_away_text(exc: BaseException) -> str:
    """What a page says while the database does not answer (a restart, a failover, an outage)."""
    return (
        "The database does not answer right now, so this page cannot be shown. Nothing is lost: runs in flight "
        "wait for it and carry on where they were once it is back, keeping the answers they already have. "
        f"Reload this page in a moment. ({error_line(exc)})"
    )


if __name__ == "__main__":  # a session's script run
    # Imported here, not at server start: their caches want the running server (else a warning each start).
    from desk.outage import database_away, error_line
    from ui import access, app_desk, clock, identity, navigation

    main()
else:  # imported once by `streamlit run` at server start: the server, this file its script
    from ui import access

    # One line says how sign-in stands; a desk without sign-in beyond loopback is refused here, before any page, and
    # before the desk's modules are imported (model clients, storage, migrations: some 4 s of CPU a refusal needs not).
    access.announce_at_start()
    from ui import app_desk

    app = st.App(__file__, lifespan=app_desk.open_at_server_start)
