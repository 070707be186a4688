"""One money format everywhere (`santa_core.words.usd`): 4 significant figures under $1, trailing zeros dropped but
never fewer than 2 decimals; 2 decimals from $1. Every expected string is written by hand."""

from __future__ import annotations

import pytest

from santa_core.words import usd


@pytest.mark.parametrize(
    ("amount", "text"),
    [
        pytest.param(0.000751, "$0.000751", id="a-cheap-review-call"),
        pytest.param(0.00259, "$0.00259", id="no-padding-zero"),
        pytest.param(0.019, "$0.019", id="cents"),
        pytest.param(0.0190001, "$0.019", id="fifth-figure-dropped"),
        pytest.param(0.123456, "$0.1235", id="four-significant-figures"),
        pytest.param(0.00123449, "$0.001234", id="rounds-down"),
        pytest.param(0.5, "$0.50", id="half-a-dollar-keeps-two-decimals"),
        pytest.param(0.1, "$0.10", id="ten-cents"),
        pytest.param(0.0999999, "$0.10", id="rounding-up-a-place"),
        pytest.param(0.99996, "$1.00", id="rounds-up-to-a-dollar"),
        pytest.param(1, "$1.00", id="a-dollar"),
        pytest.param(1.5, "$1.50", id="dollars-two-decimals"),
        pytest.param(12.345, "$12.35", id="dollars-rounded"),
        pytest.param(1234.5, "$1,234.50", id="thousands-separator"),
        pytest.param(0, "$0.00", id="zero"),
        pytest.param(0.0000004, "$0.0000004", id="never-rounds-a-real-cost-to-zero"),
        pytest.param(-0.0012, "-$0.0012", id="negative-sign-before-the-dollar"),
        pytest.param(-12.5, "-$12.50", id="negative-dollars"),
    ],
)
def test_usd(amount: float, text: str) -> None:
    assert usd(amount) == text
