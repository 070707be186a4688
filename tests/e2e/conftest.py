"""The browser tests share one scan for Streamlit components per test process (tests/support/component_scan.py)."""

from tests.support.component_scan import scan_once

scan_once()
