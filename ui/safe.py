"""Escape untrusted text before it goes into an element that renders markdown.

Why: st.error, st.caption, st.markdown and friends render markdown, so model or user text such
as `![](http://tracker/x)` would make the reader's browser fetch a URL an attacker chose, and
`[click](javascript:…)` would become a link. Escaped, it shows as the literal characters.
"""

from __future__ import annotations

import re

# Markdown syntax, Streamlit's :color[...] / :emoji: directives and $…$ LaTeX.
_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|<>~:$&])")


def escape_markdown(text: object) -> str:
    """The text with every markdown-significant character backslash-escaped; newlines kept."""
    return _SPECIAL.sub(r"\\\1", str(text))
