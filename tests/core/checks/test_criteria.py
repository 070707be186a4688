"""Deterministic criterion checks: each type's pass/fail table, config errors and the editor's form."""

from __future__ import annotations

from pathlib import Path

import pyphen
import pytest

from santa_core.checks import CHECK_TYPES, check_config_errors, run_criterion_checks
from santa_core.checks.forms import CHECK_SPECS, check_from_form, describe_check, form_values
from santa_core.checks.reading import reading_stats
from santa_core.models import CheckOutcome, Criterion, Rubric
from santa_core.rubrics.library import load_builtin

ZW = "\u200b"  # zero-width space
SHY = "\u00ad"  # soft hyphen


def fullwidth(text: str) -> str:
    """ASCII as fullwidth forms."""
    return "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in text)


def rubric_with(check: dict, severity: str = "critical") -> Rubric:
    """A one-criterion rubric carrying `check`."""
    crit = Criterion(
        id="rule",
        name="Rule",
        category="compliance",
        pass_condition="the check passes",
        fail_signal="the check fails",
        severity=severity,  # type: ignore[arg-type]  # Literal checked by pydantic
        check=check,
    )
    return Rubric(name="t", criteria=[crit])


def outcome(check: dict, output: str) -> CheckOutcome:
    (result,) = run_criterion_checks(rubric_with(check), output)
    return result


# Secret-shaped test values are assembled at run time so this file holds no literal that a
# secret scanner (or this very check) would flag.
ANTHROPIC = "sk-ant-" + "api03-" + "Zx9Qw2Er7Ty5Ui3Op1As" * 2
OPENAI_PROJ = "sk-" + "proj-" + "Lm4Nb6Vc8Xz0Lk2Jh4Gf6Ds8"
OPENAI_LEGACY = "sk-" + "T3BlbkFJ" * 5
AWS = "AKIA" + "IOSFODNN7EXAMPLQ"
GITHUB = "ghp_" + "aB3dE5gH7jK9mN1pQ3sT5vW7yZ9bC1eF3hJ5"
GITHUB_PAT = "github_pat_" + "11ABCDEFG0" + "a1b2c3d4e5f6g7h8i9j0"
SLACK = "xoxb-" + "1234567890-" + "abcdefghijKLMN"
GOOGLE = "AIza" + "SyD4f9Gh2Jk5Lm8Nq1Rs4Tv7Wx0Yz3Ab6Cd"
STRIPE = "sk_" + "live_" + "4eC39HqLyjWDarjtT1zdp7dc"
JWT = (
    "eyJ"
    + "hbGciOiJIUzI1NiJ9"
    + "."
    + "eyJ"
    + "zdWIiOiIxMjM0NTY3ODkwIn0"
    + "."
    + "dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"
)
PRIVATE_KEY = "-----BEGIN " + "RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA0Z3VS5JJcds3xfn\n-----END RSA PRIVATE KEY-----"
ASSIGNED = "Hunter2Hunter2x9"

FORBIDDEN = {"type": "forbidden_terms", "terms": ["risk-free", "guaranteed returns", "100% safe"]}
REQUIRED = {"type": "required_phrases", "phrases": ["Capital at risk", "FCA"]}
LINKS = {"type": "links_allowed", "domains": ["example.com", "Docs.Acme.io"]}
HTTPS = {**LINKS, "require_https": True}
GRADE = {"type": "reading_grade", "max": 8}
JSON_CHECK = {"type": "valid_json"}
YAML_CHECK = {"type": "valid_yaml"}
PY_CHECK = {"type": "python_parses"}
SECRETS = {"type": "no_secrets"}

EASY = "The cat sat on the mat. It was a warm day. We had tea."
HARD = (
    "Notwithstanding considerable organizational complexity, institutional stakeholders systematically "
    "underestimate the administrative ramifications of comprehensive regulatory harmonization initiatives."
)

CASES = [
    # forbidden terms, look-alikes included
    pytest.param(FORBIDDEN, "All investments carry risk.", "PASS", id="forbidden-pass"),
    pytest.param(FORBIDDEN, "An asterisk-freeform note.", "PASS", id="forbidden-word-boundary"),
    pytest.param(FORBIDDEN, "A risk-free plan.", "FAIL", id="forbidden-fail"),
    pytest.param(FORBIDDEN, "A RISK FREE plan.", "FAIL", id="forbidden-case-and-space"),
    pytest.param(FORBIDDEN, "A r\u0456sk-free plan.", "FAIL", id="forbidden-cyrillic-i"),
    pytest.param(FORBIDDEN, "A RIS\u041a-FREE plan.", "FAIL", id="forbidden-cyrillic-capital-ka"),
    pytest.param(FORBIDDEN, "A r\u03b9sk-free plan.", "FAIL", id="forbidden-greek-iota"),
    pytest.param(FORBIDDEN, "Guaranteed r\u0435turns!", "FAIL", id="forbidden-cyrillic-e"),
    pytest.param(FORBIDDEN, f"A ri{ZW}sk\u2011free plan.", "FAIL", id="forbidden-zero-width-nb-hyphen"),
    pytest.param(FORBIDDEN, f"A risk-f{ZW}r\u200dee plan.", "FAIL", id="forbidden-zero-width-joiner"),
    pytest.param(FORBIDDEN, f"A ri{SHY}sk-free plan.", "FAIL", id="forbidden-soft-hyphen"),
    pytest.param(FORBIDDEN, "A " + fullwidth("risk-free") + " plan.", "FAIL", id="forbidden-fullwidth"),
    pytest.param(FORBIDDEN, "A risk\u2013free plan.", "FAIL", id="forbidden-en-dash"),
    pytest.param(FORBIDDEN, "A risk\u2014free plan.", "FAIL", id="forbidden-em-dash"),
    pytest.param(FORBIDDEN, "A risk\u2212free plan.", "FAIL", id="forbidden-minus-sign"),
    pytest.param(FORBIDDEN, "Guaranteed\u00a0Returns!", "FAIL", id="forbidden-nbsp"),
    pytest.param(FORBIDDEN, "It is 100 % safe.", "FAIL", id="forbidden-symbol-term"),
    # required phrases
    pytest.param(REQUIRED, "Capital at risk. Regulated by the FCA.", "PASS", id="required-pass"),
    pytest.param(REQUIRED, "Capital at r\u0456sk. Regulated by the FCA.", "PASS", id="required-look-alike-counts"),
    pytest.param(REQUIRED, "Regulated by the FCA.", "FAIL", id="required-fail"),
    # forbidden regex (runs on the original text)
    pytest.param({"type": "regex_forbidden", "pattern": r"\bTODO\b"}, "done", "PASS", id="regex-pass"),
    pytest.param({"type": "regex_forbidden", "pattern": r"\bTODO\b"}, "x TODO y", "FAIL", id="regex-fail"),
    pytest.param(
        {"type": "regex_forbidden", "pattern": "todo", "ignore_case": True}, "TODO", "FAIL", id="regex-ignore-case"
    ),
    # no secrets
    pytest.param(SECRETS, "Set ANTHROPIC_API_KEY in your environment.", "PASS", id="secrets-pass-prose"),
    pytest.param(SECRETS, 'api_key = "<your-api-key>"', "PASS", id="secrets-pass-angle-placeholder"),
    pytest.param(SECRETS, "password: changeme-please", "PASS", id="secrets-pass-changeme"),
    pytest.param(SECRETS, "SECRET=${SECRET_FROM_VAULT}", "PASS", id="secrets-pass-env-reference"),
    pytest.param(SECRETS, 'token = "xxxxxxxxxxxxxxxx"', "PASS", id="secrets-pass-xxxx"),
    pytest.param(SECRETS, 'api_key = os.environ["API_KEY"]', "PASS", id="secrets-pass-code-reference"),
    pytest.param(SECRETS, "tokenizer: bert-base-uncased-v2", "PASS", id="secrets-pass-tokenizer"),
    pytest.param(SECRETS, "password: short1", "PASS", id="secrets-pass-short-value"),
    pytest.param(SECRETS, f"key: {ANTHROPIC}", "FAIL", id="secrets-anthropic"),
    pytest.param(SECRETS, f"OPENAI_API_KEY={OPENAI_PROJ}", "FAIL", id="secrets-openai-project"),
    pytest.param(SECRETS, f"use {OPENAI_LEGACY} here", "FAIL", id="secrets-openai-legacy"),
    pytest.param(SECRETS, f"aws {AWS}", "FAIL", id="secrets-aws"),
    pytest.param(SECRETS, f"git clone https://{GITHUB}@github.com/x/y", "FAIL", id="secrets-github"),
    pytest.param(SECRETS, GITHUB_PAT, "FAIL", id="secrets-github-pat"),
    pytest.param(SECRETS, f"SLACK={SLACK}", "FAIL", id="secrets-slack"),
    pytest.param(SECRETS, f"maps key {GOOGLE}", "FAIL", id="secrets-google"),
    pytest.param(SECRETS, f"stripe.api_key = {STRIPE}", "FAIL", id="secrets-stripe"),
    pytest.param(SECRETS, f"Authorization: Bearer {JWT}", "FAIL", id="secrets-jwt"),
    pytest.param(SECRETS, PRIVATE_KEY, "FAIL", id="secrets-private-key"),
    pytest.param(SECRETS, f'db_password = "{ASSIGNED}"', "FAIL", id="secrets-assigned-password"),
    pytest.param(SECRETS, f'{{"token": "{ASSIGNED}"}}', "FAIL", id="secrets-json-token"),
    pytest.param(SECRETS, f"secret={ASSIGNED}", "FAIL", id="secrets-env-secret"),
    # links
    pytest.param(LINKS, "No links here.", "PASS", id="links-none"),
    pytest.param(LINKS, "See https://example.com/pricing.", "PASS", id="links-trailing-period"),
    pytest.param(LINKS, "Docs (https://docs.acme.io/a_(b)).", "PASS", id="links-balanced-parens"),
    pytest.param(LINKS, '[guide](https://www.example.com/guide "Guide")', "PASS", id="links-markdown-title"),
    pytest.param(LINKS, "Visit www.example.com, or <https://shop.example.com>!", "PASS", id="links-www-and-autolink"),
    pytest.param(LINKS, "[top](#top) of the page", "PASS", id="links-fragment-only"),
    pytest.param(LINKS, "Go to HTTPS://EXAMPLE.COM/X", "PASS", id="links-upper-case"),
    pytest.param(LINKS, "See https://evil-example.com/", "FAIL", id="links-suffix-not-subdomain"),
    pytest.param(LINKS, "See https://example.com.evil.io/", "FAIL", id="links-domain-as-prefix"),
    pytest.param(LINKS, "See https://example.com@evil.io/", "FAIL", id="links-userinfo-trick"),
    pytest.param(LINKS, "See https://\u0435xample.com/", "FAIL", id="links-cyrillic-e-host"),
    pytest.param(LINKS, "See https://" + fullwidth("example") + ".com/", "FAIL", id="links-fullwidth-host"),
    pytest.param(LINKS, f"See https://exam{ZW}ple.com/", "FAIL", id="links-zero-width-host"),
    pytest.param(LINKS, "See ftp://example.com/file", "FAIL", id="links-bad-scheme"),
    pytest.param(LINKS, "[click](javascript:alert(1))", "FAIL", id="links-javascript-scheme"),
    pytest.param(LINKS, "[x](https://exa mple.com)", "FAIL", id="links-space"),
    pytest.param(LINKS, "[x](/pricing)", "FAIL", id="links-relative"),
    pytest.param(LINKS, "See https:///path", "FAIL", id="links-missing-host"),
    pytest.param(LINKS, "See https://-bad-.example.com", "FAIL", id="links-invalid-label"),
    pytest.param(LINKS, "See https://example.com:99999/", "FAIL", id="links-bad-port"),
    pytest.param(LINKS, "See http://example.com", "PASS", id="links-http-allowed"),
    pytest.param(HTTPS, "See http://example.com", "FAIL", id="links-http-with-require-https"),
    pytest.param(HTTPS, "See www.example.com", "FAIL", id="links-bare-www-with-require-https"),
    pytest.param(HTTPS, "See https://example.com", "PASS", id="links-https"),
    # lengths
    pytest.param({"type": "max_words", "max": 3}, "one two three", "PASS", id="max-words-pass"),
    pytest.param({"type": "max_words", "max": 3}, "one two three four", "FAIL", id="max-words-fail"),
    pytest.param({"type": "max_chars", "max": 5}, "12345", "PASS", id="max-chars-pass"),
    pytest.param({"type": "max_chars", "max": 5}, "123456", "FAIL", id="max-chars-fail"),
    # reading grade
    pytest.param(GRADE, EASY, "PASS", id="grade-pass"),
    pytest.param(GRADE, "", "PASS", id="grade-empty"),
    pytest.param(GRADE, "42 ... 7!", "PASS", id="grade-no-words"),
    pytest.param(GRADE, HARD, "FAIL", id="grade-fail"),
    # JSON
    pytest.param(JSON_CHECK, '{"a": [1, 2]}', "PASS", id="json-pass"),
    pytest.param(JSON_CHECK, 'Here:\n```json\n{"a": 1}\n```\nDone.', "PASS", id="json-block-pass"),
    pytest.param(JSON_CHECK, '{"a": 1,}', "FAIL", id="json-fail"),
    pytest.param(JSON_CHECK, 'Here is {"a": 1}', "FAIL", id="json-prose-without-block"),
    pytest.param(JSON_CHECK, '```json\n{"a": 1}\n```\n```JSON\n{a: 1}\n```', "FAIL", id="json-second-block"),
    pytest.param(JSON_CHECK, '```json\n{"a": 1}\n', "FAIL", id="json-unclosed-fence"),
    pytest.param(JSON_CHECK, "", "FAIL", id="json-empty"),
    # YAML
    pytest.param(YAML_CHECK, "a: 1\nb: [x, y]\n", "PASS", id="yaml-pass"),
    pytest.param(YAML_CHECK, "Config:\n```yml\na: 1\n```\n", "PASS", id="yaml-block-pass"),
    pytest.param(YAML_CHECK, "a: [1, 2\n", "FAIL", id="yaml-fail"),
    pytest.param(YAML_CHECK, "Config:\n```yaml\na: b: c\n```\n", "FAIL", id="yaml-block-fail"),
    pytest.param(YAML_CHECK, "!!python/object/apply:os.system ['echo hi']", "FAIL", id="yaml-unsafe-tag"),
    # Python
    pytest.param(PY_CHECK, "def f(x):\n    return x + 1\n", "PASS", id="python-pass"),
    pytest.param(PY_CHECK, "Use:\n```py\nprint('hi')\n```\nThat's it.", "PASS", id="python-block-pass"),
    pytest.param(PY_CHECK, "def f(:\n    pass\n", "FAIL", id="python-fail"),
    pytest.param(PY_CHECK, "Use:\n```python\nprint('hi'\n```\n", "FAIL", id="python-block-fail"),
    # found in review: each of these passed once
    pytest.param(FORBIDDEN, "A RISK-FRЕЕ plan.", "FAIL", id="forbidden-cyrillic-capital-ie"),
    pytest.param(
        {"type": "forbidden_terms", "terms": ["no risk", "guaranteed", "money-back"]},
        "ΝO RISK! GUARAΝTEED ΜONEY-BACK!",
        "FAIL",
        id="forbidden-greek-capitals-nu-mu",
    ),
    pytest.param(LINKS, "See https://evil.com\\@example.com/x for more.", "FAIL", id="links-backslash-authority"),
    pytest.param(PY_CHECK, "```python\nreturn 1\n```", "FAIL", id="python-return-outside-function"),
    pytest.param(PY_CHECK, "for x in y:\n    pass\nbreak\n", "FAIL", id="python-break-outside-loop"),
    pytest.param(JSON_CHECK, '{"a": NaN}', "FAIL", id="json-nan-is-not-json"),
    pytest.param(
        SECRETS, "curl -H 'Authorization: Bearer abcdefghijklmnopqrstuvwxyz0123'", "FAIL", id="secrets-bearer"
    ),
    pytest.param(SECRETS, "DATABASE_URL=postgres://app:hunter2xyz@db.internal/app", "FAIL", id="secrets-url-password"),
    pytest.param(
        SECRETS, "Connect to postgres://db.internal/app as the app user.", "PASS", id="secrets-url-no-password"
    ),
    # second review
    pytest.param(
        {"type": "forbidden_terms", "terms": ["μηδενικός κίνδυνος"]},
        "ΜΗΔΕΝΙΚΟΣ ΚΙΝΔΥΝΟΣ!",
        "FAIL",
        id="forbidden-greek-term-upper-case-text",
    ),
    pytest.param(
        {"type": "forbidden_terms", "terms": ["ΜΗΔΕΝΙΚΟΣ ΚΙΝΔΥΝΟΣ"]},
        "μηδενικός κίνδυνος",
        "FAIL",
        id="forbidden-greek-term-lower-case-text",
    ),
    pytest.param(
        {"type": "required_phrases", "phrases": ["Δεν αποτελεί επενδυτική συμβουλή"]},
        "ΔΕΝ ΑΠΟΤΕΛΕΙ ΕΠΕΝΔΥΤΙΚΗ ΣΥΜΒΟΥΛΗ.",
        "PASS",
        id="required-greek-phrase-upper-case",
    ),
    pytest.param(SECRETS, "redis://:s3cretpassw0rd@cache:6379/0", "FAIL", id="secrets-url-password-no-user"),
    pytest.param(SECRETS, "HTTPS://admin:hunter22@host/", "FAIL", id="secrets-url-password-upper-scheme"),
    pytest.param(
        SECRETS, "The bearer instruments-and-certificates-of-deposit are listed.", "PASS", id="secrets-bearer-prose"
    ),
    pytest.param(PY_CHECK, 'x = "\\d"\n', "PASS", id="python-invalid-escape-is-still-valid"),
    pytest.param(FORBIDDEN, "Guaranteed ᏒEturns? No: ꓖuaranteed returns!", "FAIL", id="forbidden-lisu-g"),
    pytest.param({"type": "forbidden_terms", "terms": ["guaranteed"]}, "ᏀUARANTEED", "FAIL", id="forbidden-cherokee-g"),
    pytest.param(YAML_CHECK, "a: 1\nb:\n  c: 2\n  c: 3\n", "FAIL", id="yaml-duplicate-key"),
]


@pytest.mark.parametrize(("check", "output", "result"), CASES)
def test_criterion_check(check: dict, output: str, result: str) -> None:
    got = outcome(check, output)
    assert got.result == result, got.detail
    assert got.check_type == check["type"]
    assert got.criterion == "rule"
    assert got.detail


def test_every_check_type_has_passing_and_failing_cases() -> None:
    seen = {(p.values[0]["type"], p.values[2]) for p in CASES}
    assert seen == {(kind, result) for kind in CHECK_TYPES for result in ("PASS", "FAIL")}


def test_python_is_parsed_never_run(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    code = f"open({str(marker)!r}, 'w').write('x')\n"
    assert outcome(PY_CHECK, code).result == "PASS"
    assert not marker.exists()


# --- details and evidence -------------------------------------------------------------------


def test_forbidden_term_detail_and_evidence() -> None:
    output = "Our fund is r\u0456sk-free for everyone."
    got = outcome(FORBIDDEN, output)
    assert got.detail.startswith('forbidden term "risk-free" found: "')
    assert "Our fund is r\u0456sk-free for everyone." in got.detail
    assert got.evidence == "r\u0456sk-free"


def test_required_phrase_detail_names_missing_phrase() -> None:
    got = outcome({"type": "required_phrases", "phrases": ["Capital at risk"]}, "Invest now.")
    assert 'required phrase "Capital at risk" missing' in got.detail


def test_links_detail_lists_each_offending_link() -> None:
    output = "Fine: https://example.com. Bad: http://evil.io/x, then [y](https://\u0430cme.example.net)."
    got = outcome(LINKS, output)
    assert got.result == "FAIL"
    assert got.evidence == "http://evil.io/x"
    assert got.evidence in output
    assert "link \"http://evil.io/x\": host 'evil.io' is not an allowed domain" in got.detail
    assert "https://\u0430cme.example.net" in got.detail
    assert "contains non-ASCII characters" in got.detail
    assert 'link "https://example.com' not in got.detail  # the allowed link is not listed


def test_links_look_alike_host_never_counts_as_allowed() -> None:
    got = outcome({"type": "links_allowed", "domains": ["acme.com"]}, "Log in at https://\u0430cme.com/login")
    assert got.result == "FAIL"
    assert "non-ASCII" in got.detail
    assert got.evidence == "https://\u0430cme.com/login"


def test_links_pass_detail_counts_links() -> None:
    got = outcome(LINKS, "https://example.com and www.example.com.")
    assert got.detail == "2 links, all to allowed domains (example.com, docs.acme.io)"
    assert outcome(LINKS, "(https://example.com)").detail.startswith("1 link,")


def test_json_detail_names_block_line_and_column() -> None:
    output = 'Two blocks:\n```json\n{"a": 1}\n```\nand\n```json\n{\n  "b" 2\n}\n```'
    got = outcome(JSON_CHECK, output)
    assert got.detail == "JSON block 2 (fence at line 6): line 8, column 7: Expecting ':' delimiter"


def test_yaml_detail_has_line_and_column() -> None:
    got = outcome(YAML_CHECK, "a: 1\nb: [1, 2\n")
    assert got.detail.startswith("the output is not valid YAML: line 3, column 1: ")
    assert "flow sequence" in got.detail


def test_parse_pass_detail_counts_blocks() -> None:
    assert outcome(JSON_CHECK, "```json\n[1]\n```").detail == "1 JSON block found, all parse"


def test_python_detail_has_line_and_message() -> None:
    got = outcome(PY_CHECK, "Steps:\n```python\nx = 1\nif x\n    pass\n```\n")
    assert got.detail.startswith("Python block 1 (fence at line 2): line 4, column 5: ")
    assert "expected ':'" in got.detail


SECRET_KINDS = [
    pytest.param(ANTHROPIC, "Anthropic API key", id="anthropic"),
    pytest.param(OPENAI_PROJ, "OpenAI API key", id="openai-project"),
    pytest.param(OPENAI_LEGACY, "OpenAI API key", id="openai-legacy"),
    pytest.param(AWS, "AWS access key id", id="aws"),
    pytest.param(GITHUB, "GitHub token", id="github"),
    pytest.param(GITHUB_PAT, "GitHub token", id="github-pat"),
    pytest.param(SLACK, "Slack token", id="slack"),
    pytest.param(GOOGLE, "Google API key", id="google"),
    pytest.param(STRIPE, "Stripe live key", id="stripe"),
    pytest.param(JWT, "JSON Web Token", id="jwt"),
    pytest.param(PRIVATE_KEY, "private key block", id="private-key"),
    pytest.param(ASSIGNED, 'value of "api_key"', id="assignment"),
]


@pytest.mark.parametrize(("secret", "kind"), SECRET_KINDS)
def test_no_secrets_detail_never_contains_the_secret(secret: str, kind: str) -> None:
    output = f"Setup notes.\n\nStep 2:\napi_key = '{secret}'\n"
    got = outcome(SECRETS, output)
    assert got.result == "FAIL"
    assert got.detail == f"{kind} {secret[:4]}… at line 4"
    assert got.evidence == f"{secret[:4]}…"
    # The redacted form is too short to reveal any of the secret beyond its first 4 characters.
    for text in (got.detail, got.evidence):
        assert secret not in text and secret[:5] not in text


def test_no_secrets_lists_every_finding() -> None:
    got = outcome(SECRETS, f"{AWS}\n{SLACK}")
    assert got.detail == "AWS access key id AKIA… at line 1; Slack token xoxb… at line 2"


def test_reading_grade_hand_computed() -> None:
    text = "The cat sat on the mat. Extraordinary deliberation requires patience!"
    words = ["The", "cat", "sat", "on", "the", "mat", "Extraordinary", "deliberation", "requires", "patience"]
    dic = pyphen.Pyphen(lang="en_US")
    syllables = sum(len(dic.positions(w)) + 1 for w in words)
    # the(1) cat(1) sat(1) on(1) the(1) mat(1) ex-tra-or-di-nary(5) de-lib-er-a-tion(5) re-quires(2) pa-tience(2)
    assert syllables == 20
    expected = 0.39 * (10 / 2) + 11.8 * (20 / 10) - 15.59
    stats = reading_stats(text)
    assert stats is not None
    assert (stats.sentences, stats.words, stats.syllables) == (2, 10, 20)
    assert abs(stats.grade - expected) < 1e-9
    got = outcome({"type": "reading_grade", "max": 6}, text)
    assert got.result == "FAIL"
    assert got.detail == (
        f'grade {expected:.1f} (limit 6): 2 sentences, 10 words, 20 syllables; longest sentence: "The cat sat on the mat"'
    )


def test_reading_grade_empty_text_says_nothing_to_grade() -> None:
    assert outcome(GRADE, "   ").detail == "nothing to grade: the output has no words"


# --- config errors --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("check", "loc", "needle"),
    [
        pytest.param({"type": "forbidden_terms"}, ("terms",), "field required", id="forbidden-missing-terms"),
        pytest.param({"type": "forbidden_terms", "terms": []}, ("terms",), "at least 1 item", id="forbidden-empty"),
        pytest.param({"type": "forbidden_terms", "terms": [ZW]}, ("terms",), "no visible characters", id="invisible"),
        pytest.param({"type": "required_phrases", "phrases": [""]}, ("phrases", 0), "at least 1 character", id="blank"),
        pytest.param(
            {"type": "regex_forbidden", "pattern": "(["}, ("pattern",), "invalid regular expression", id="bad-regex"
        ),
        pytest.param(
            {"type": "regex_forbidden", "pattern": "x", "flags": "i"}, ("flags",), "unknown field", id="regex-extra"
        ),
        pytest.param({"type": "max_words", "max": 0}, ("max",), "greater than or equal to 1", id="max-words-zero"),
        pytest.param({"type": "max_chars", "max": -5}, ("max",), "greater than or equal to 1", id="max-chars-negative"),
        pytest.param({"type": "reading_grade", "max": 0.5}, ("max",), "greater than or equal to 1", id="grade-low"),
        pytest.param({"type": "reading_grade", "max": 25}, ("max",), "less than or equal to 20", id="grade-high"),
        pytest.param({"type": "reading_grade"}, ("max",), "field required", id="grade-missing"),
        pytest.param({"type": "links_allowed", "domains": []}, ("domains",), "at least 1 item", id="links-empty"),
        pytest.param(
            {"type": "links_allowed", "domains": ["example.com", "https://acme.io/x"]},
            ("domains", 1),
            "not a bare host",
            id="links-url-as-domain",
        ),
        pytest.param(
            {"type": "links_allowed", "domains": ["bad_host.com"]}, ("domains", 0), "not a bare host", id="links-bad"
        ),
        pytest.param(
            {"type": "links_allowed", "domains": ["\u0430cme.com"]}, ("domains", 0), "non-ASCII", id="links-look-alike"
        ),
        pytest.param(
            {"type": "links_allowed", "domains": ["a.com"], "require_https": "maybe"},
            ("require_https",),
            "valid boolean",
            id="links-bad-bool",
        ),
        pytest.param({"type": "valid_json", "strict": True}, ("strict",), "unknown field", id="json-extra"),
        pytest.param({"type": "valid_yaml", "x": 1}, ("x",), "unknown field", id="yaml-extra"),
        pytest.param({"type": "python_parses", "version": 3}, ("version",), "unknown field", id="python-extra"),
        pytest.param({"type": "no_secrets", "allow": ["x"]}, ("allow",), "unknown field", id="secrets-extra"),
        pytest.param({"type": "spellcheck"}, ("type",), "unknown check type 'spellcheck'", id="unknown-type"),
        pytest.param(["not", "a", "dict"], (), "must be a mapping", id="not-a-mapping"),
    ],
)
def test_invalid_config_is_located(check: object, loc: tuple, needle: str) -> None:
    errors = check_config_errors(check)
    assert any(got_loc == loc and needle in msg for got_loc, msg in errors), errors


def test_domains_are_lower_cased() -> None:
    assert check_config_errors({"type": "links_allowed", "domains": ["Docs.Acme.io", "EXAMPLE.com."]}) == []
    assert outcome({"type": "links_allowed", "domains": ["EXAMPLE.com."]}, "https://a.example.com").result == "PASS"


@pytest.mark.parametrize(
    ("check", "needle"),
    [
        pytest.param({"type": "spellcheck"}, "unknown check type 'spellcheck'", id="unknown-type"),
        pytest.param({"terms": ["x"]}, "unknown check type None", id="missing-type"),
        pytest.param({"type": "forbidden_terms"}, "check misconfigured: terms: field required", id="missing-terms"),
        pytest.param({"type": "forbidden_terms", "terms": [ZW]}, "no visible characters", id="invisible-term"),
        pytest.param({"type": "regex_forbidden", "pattern": "(["}, "invalid regular expression", id="bad-regex"),
        pytest.param({"type": "max_words", "max": 0}, "check misconfigured", id="zero-limit"),
        pytest.param({"type": "links_allowed", "domains": []}, "check misconfigured: domains", id="no-domains"),
    ],
)
def test_broken_check_fails_closed(check: dict, needle: str) -> None:
    got = outcome(check, "anything")
    assert got.result == "FAIL"
    assert needle in got.detail


def test_criteria_without_check_are_skipped() -> None:
    assert run_criterion_checks(load_builtin("general"), "text") == []


def test_builtin_compliance_check_catches_guarantee() -> None:
    (got,) = run_criterion_checks(load_builtin("compliance"), "Enjoy guaranteed returns!")
    assert (got.criterion, got.result) == ("no_outcome_guarantees", "FAIL")


# --- the editor's form ----------------------------------------------------------------------


def test_check_specs_cover_check_types_exactly() -> None:
    assert len(CHECK_TYPES) == len(set(CHECK_TYPES)) == 11
    assert list(CHECK_SPECS) == list(CHECK_TYPES)
    for kind, spec in CHECK_SPECS.items():
        assert spec.title and spec.explanation.endswith("."), kind
        for field in spec.fields:
            assert field.kind in ("lines", "int", "float", "bool", "text")
            assert field.label and field.help


CANONICAL = {
    "forbidden_terms": {"type": "forbidden_terms", "terms": ["risk-free", "guaranteed returns"]},
    "required_phrases": {"type": "required_phrases", "phrases": ["Capital at risk"]},
    "regex_forbidden": {"type": "regex_forbidden", "pattern": r"\bTODO\b", "ignore_case": True},
    "no_secrets": {"type": "no_secrets"},
    "links_allowed": {"type": "links_allowed", "domains": ["example.com"], "require_https": True},
    "max_words": {"type": "max_words", "max": 120},
    "max_chars": {"type": "max_chars", "max": 900},
    "reading_grade": {"type": "reading_grade", "max": 9.5},
    "valid_json": {"type": "valid_json"},
    "valid_yaml": {"type": "valid_yaml"},
    "python_parses": {"type": "python_parses"},
}


@pytest.mark.parametrize("kind", CHECK_TYPES)
def test_form_round_trip(kind: str) -> None:
    check = CANONICAL[kind]
    assert check_config_errors(check) == []
    values = form_values(check)
    assert set(values) == {f.name for f in CHECK_SPECS[kind].fields}
    assert check_from_form(kind, values) == check
    assert form_values(check_from_form(kind, values)) == values


@pytest.mark.parametrize("kind", CHECK_TYPES)
def test_form_defaults_for_missing_fields(kind: str) -> None:
    values = form_values({"type": kind})
    assert values == {f.name: list(f.default) if f.kind == "lines" else f.default for f in CHECK_SPECS[kind].fields}


def test_form_lines_are_stripped_and_blanks_dropped() -> None:
    check = check_from_form("forbidden_terms", {"terms": ["  risk-free ", "", "   ", "100% safe"]})
    assert check == {"type": "forbidden_terms", "terms": ["risk-free", "100% safe"]}
    assert check_from_form("links_allowed", {"domains": "a.com\n\n b.org \n"})["domains"] == ["a.com", "b.org"]


def test_form_drops_optional_fields_at_their_default() -> None:
    check = check_from_form("regex_forbidden", {"pattern": "x", "ignore_case": False})
    assert check == {"type": "regex_forbidden", "pattern": "x"}


def test_check_from_form_does_not_validate() -> None:
    check = check_from_form("max_words", {"max": 0})
    assert check == {"type": "max_words", "max": 0}
    assert check_config_errors(check)


def test_check_from_form_rejects_unknown_kind() -> None:
    with pytest.raises(ValueError, match="unknown check type"):
        check_from_form("spellcheck", {})


@pytest.mark.parametrize(
    ("check", "summary"),
    [
        pytest.param(
            {"type": "forbidden_terms", "terms": ["guaranteed returns", "risk-free", *"abcdefghijk"]},
            "forbidden terms: guaranteed returns, risk-free (+11 more)",
            id="forbidden",
        ),
        pytest.param(CANONICAL["required_phrases"], "required phrases: Capital at risk", id="required"),
        pytest.param(CANONICAL["regex_forbidden"], r"forbidden pattern /\bTODO\b/ (ignore case)", id="regex"),
        pytest.param(CANONICAL["links_allowed"], "links only to: example.com, https only", id="links"),
        pytest.param({"type": "max_chars", "max": 1500}, "at most 1,500 characters", id="max-chars"),
        pytest.param(CANONICAL["max_words"], "at most 120 words", id="max-words"),
        pytest.param(CANONICAL["reading_grade"], "reading grade at most 9.5", id="grade"),
        pytest.param(CANONICAL["valid_json"], "valid JSON", id="json"),
        pytest.param({"type": "forbidden_terms"}, "forbidden terms: (none)", id="incomplete"),
        pytest.param({"type": "spellcheck"}, "unknown check type 'spellcheck'", id="unknown"),
        pytest.param("nope", "invalid check (not a mapping)", id="not-a-mapping"),
    ],
)
def test_describe_check(check: object, summary: str) -> None:
    assert describe_check(check) == summary


def test_describe_check_covers_every_type() -> None:
    for kind in CHECK_TYPES:
        summary = describe_check(CANONICAL[kind])
        assert summary and "\n" not in summary and "unknown" not in summary


def test_a_catastrophic_forbidden_pattern_fails_closed_instead_of_hanging() -> None:
    from santa_core.checks import terms as cc

    rubric = Rubric(
        name="r",
        criteria=[
            Criterion(
                id="p",
                name="P",
                category="compliance",
                pass_condition="p",
                fail_signal="f",
                check={"type": "regex_forbidden", "pattern": r"(x+x+)+y"},
            )
        ],
    )
    (outcome,) = run_criterion_checks(rubric, "x" * 5000)
    assert outcome.result == "FAIL"
    assert f"took longer than {cc.REGEX_TIMEOUT_S:g} s" in outcome.detail


def test_links_never_repeat_credentials() -> None:
    got = outcome(LINKS, "Log in at https://user:hunter2secret@evil.com/x now.")
    assert got.result == "FAIL" and "hunter2secret" not in got.detail + got.evidence


def test_json_constant_error_names_its_line() -> None:
    got = outcome(JSON_CHECK, '{\n  "a": 1,\n  "b": NaN\n}')
    assert got.result == "FAIL" and "line 3" in got.detail and "NaN is not valid JSON" in got.detail


def test_a_number_past_the_digit_limit_is_a_yaml_finding_not_a_crash() -> None:
    # PyYAML builds a 10,000-digit integer with int(), which Python refuses past 4,300 digits (found by the fuzz test).
    o = outcome({"type": "valid_yaml"}, "1" * 10_000)
    assert o.result == "FAIL" and "cannot be read" in o.detail


def test_a_check_that_breaks_on_an_output_fails_closed(monkeypatch: pytest.MonkeyPatch) -> None:
    from santa_core.checks import criteria

    def broken(cfg: object, output: str, folded: object) -> tuple[bool, str, str]:
        raise IndexError("list index out of range")

    monkeypatch.setitem(criteria._RUNNERS, "max_words", broken)
    o = outcome({"type": "max_words", "max": 100}, "Three short words.")
    assert (o.result, o.evidence) == ("FAIL", "")
    assert o.detail == "the max_words check could not run on this output (IndexError: list index out of range)"


def test_yaml_aliases_of_aliases_are_walked_once() -> None:
    # "Billion laughs": each line names the one above nine times; the duplicate-key walk once went down every path
    # (9**9 of them here), minutes for 400 characters. A duplicate key after them is still found.
    lines = ['a: &a ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    lines += [f"{b}: &{b} [{', '.join([f'*{a}'] * 9)}]" for a, b in zip("abcdefghi", "bcdefghij", strict=True)]
    assert outcome({"type": "valid_yaml"}, "\n".join(lines)).result == "PASS"
    found = outcome({"type": "valid_yaml"}, "\n".join([*lines, "j: 1"]))
    assert found.result == "FAIL" and "duplicate key 'j'" in found.detail
