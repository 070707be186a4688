"""People: who may do what. Admins add people and set their roles."""

import streamlit as st

from santa_core.roles import Permission
from ui import app_desk, identity, navigation, people
from ui.navigation import ensure_navigation
from ui.safe import escape_markdown

ensure_navigation()  # first: a deep link may arrive before app.py ever ran

navigation.title("people", "People")
st.caption(
    "Everyone may read everything; roles add the actions. People who sign in for the first time get "
    "the roles of the e-mail patterns in the config (`[santa.roles]`), else viewer. Every change of "
    "roles is recorded in the audit trail."
)
if flash := st.session_state.pop(people.FLASH, None):
    st.success(escape_markdown(flash))
everyone = app_desk.desk().people.all()
people.people_table(everyone)
st.subheader("Set roles")
if identity.can(Permission.MANAGE_PEOPLE):
    people.role_form(everyone)
else:
    st.info(escape_markdown(identity.refusal(Permission.MANAGE_PEOPLE)))
with st.expander("What each role may do"):
    people.roles_table()
