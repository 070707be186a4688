"""The pages' tests share one scan for Streamlit components (tests/support/component_scan.py) and one compile of
each page script (tests/support/script_bytecode.py) per test process."""

from tests.support.component_scan import scan_once
from tests.support.script_bytecode import compile_once

scan_once()
compile_once()
