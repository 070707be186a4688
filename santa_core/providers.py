"""Model providers and model families: which API answers a model id, and whose blind spots it shares.

A model id is `provider:model` (`openai:gpt-5.4-mini`, `local:qwen3:32b`); an id with no provider
(`claude-sonnet-5-5`) is Anthropic's, so runs, settings and files written before there was a second
provider keep working. Two wire protocols: the Anthropic Messages API, and the OpenAI Chat Completions
API that OpenAI itself and every compatible server (Gemini's compatible endpoint, Mistral, DeepSeek,
OpenRouter, Ollama, vLLM, LM Studio) speak.

Providers are configuration, read from the environment only (the app and the command line export
`.streamlit/secrets.toml` into it, `santa_core.config.export_to_env`):

- `anthropic`: ANTHROPIC_API_KEY (or ANTHROPIC_AUTH_TOKEN), ANTHROPIC_BASE_URL.
- `openai`: OPENAI_API_KEY, OPENAI_BASE_URL, as the openai SDK reads them.
- any number of named endpoints: SANTA_PROVIDER_<NAME>_BASE_URL (required),
  SANTA_PROVIDER_<NAME>_API_KEY_ENV (the variable holding its key; unset: the server needs none),
  SANTA_PROVIDER_<NAME>_MODELS (comma-separated), SANTA_PROVIDER_<NAME>_STRICT (0: the server does not
  take strict JSON schemas) — or `[santa.providers.<name>]` in secrets.toml with the same keys in lower case.

Pure: reads a mapping of environment variables, never a key's value beyond "is it there".
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping, MutableMapping
from dataclasses import dataclass
from urllib.parse import urlsplit

ANTHROPIC, OPENAI = "anthropic", "openai"
MESSAGES_API, CHAT_COMPLETIONS = "messages", "chat_completions"
PERSON_FAMILY = "person"
UNKNOWN_FAMILY = "unknown "
"""How a family the desk does not know begins: `unknown (acme)` (never counted as a second family)."""

CLAUDE_MODELS = (
    "claude-sonnet-5-5",
    "claude-haiku-5-5",
    "claude-opus-5-5",
    "claude-fable-5-1",
    "claude-opus-5",
    "claude-sonnet-5",
    "claude-haiku-4-5",
)
"""Claude models the pickers offer (ids without a provider: Anthropic's)."""
OPENAI_MODELS = ("gpt-5.4-mini", "gpt-5.5", "gpt-5.4", "gpt-5.4-nano")
"""OpenAI models the pickers offer, the default reviewer first (priced in rates.toml)."""

_NAME = re.compile(r"^[a-z][a-z0-9_]{0,31}$")
"""A provider name: lower-case letters, digits and `_` (so SANTA_PROVIDER_<NAME>_* maps back to one name)."""
_ENV_PROVIDER = re.compile(r"^SANTA_PROVIDER_([A-Z][A-Z0-9_]*)_BASE_URL$")
_ENV_VAR = re.compile(r"^[A-Z][A-Z0-9_]{0,63}$")
"""An environment variable's name as keys are named (GEMINI_API_KEY): upper case, digits and _."""
_FALSE = frozenset({"0", "false", "no", "off", "n", "f"})
_TRUE = frozenset({"1", "true", "yes", "on", "y", "t", ""})


@dataclass(frozen=True)
class Provider:
    """One place models answer from: its name (the prefix of its model ids), wire protocol, endpoint, where
    its key is read from (None: the server needs no key), the models offered for it and whether it takes
    strict JSON schemas."""

    name: str
    protocol: str
    base_url: str | None
    key_env: str | None
    models: tuple[str, ...] = ()
    strict: bool = True

    def key_present(self, env: Mapping[str, str] | None = None) -> bool:
        """Whether a key is configured (or none is needed); the key itself is never read out."""
        env = os.environ if env is None else env
        if self.key_env is None:
            return True
        if self.name == ANTHROPIC:
            return bool(env.get("ANTHROPIC_API_KEY") or env.get("ANTHROPIC_AUTH_TOKEN"))
        return bool(env.get(self.key_env))

    def model_id(self, model: str) -> str:
        """The desk's id of one of this provider's models (Claude ids stay bare)."""
        return model if self.name == ANTHROPIC else f"{self.name}:{model}"

    def model_ids(self) -> list[str]:
        """The ids of the models offered for this provider."""
        return [self.model_id(m) for m in self.models]


def _env_name(name: str) -> str:
    return name.upper()


def _strict(value: str | None) -> bool | None:
    """A strict setting as written (`false`, `no`, `0`, `off` …); None when it is not a yes or a no."""
    word = (value or "").strip().lower()
    return False if word in _FALSE else True if word in _TRUE else None


def _base_url_problem(url: str) -> str | None:
    """Why a base URL cannot be used (not http(s), no host), without echoing it (it may hold a password)."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return "its base_url must be an http:// or https:// URL"
    return None


def configured_providers(env: Mapping[str, str] | None = None) -> list[Provider]:
    """Anthropic, OpenAI, then the usable named endpoints in name order (whether or not their keys are present);
    `provider_problems` says why a configured one was left out."""
    env = os.environ if env is None else env
    found = [
        Provider(ANTHROPIC, MESSAGES_API, env.get("ANTHROPIC_BASE_URL") or None, "ANTHROPIC_API_KEY", CLAUDE_MODELS),
        Provider(
            OPENAI,
            CHAT_COMPLETIONS,
            env.get("OPENAI_BASE_URL") or None,
            "OPENAI_API_KEY",
            _models(env.get("SANTA_OPENAI_MODELS")) or OPENAI_MODELS,
            strict=_strict(env.get("SANTA_OPENAI_STRICT")) is not False,
        ),
    ]
    for name in _named(env):
        if _named_problem(name, env) is None:
            prefix = f"SANTA_PROVIDER_{_env_name(name)}_"
            found.append(
                Provider(
                    name,
                    CHAT_COMPLETIONS,
                    env[prefix + "BASE_URL"].strip(),
                    (env.get(prefix + "API_KEY_ENV") or "").strip() or None,
                    _models(env.get(prefix + "MODELS")),
                    strict=_strict(env.get(prefix + "STRICT")) is not False,
                )
            )
    return found


def _named(env: Mapping[str, str]) -> list[str]:
    return sorted({m.group(1).lower() for k in env if (m := _ENV_PROVIDER.match(k))})


def _named_problem(name: str, env: Mapping[str, str]) -> str | None:
    """Why the named endpoint `name` is left out (one line that never echoes a value), else None."""
    prefix = f"SANTA_PROVIDER_{_env_name(name)}_"
    if name in (ANTHROPIC, OPENAI):
        return (
            f"provider {name!r} is built in: configure it with {name.upper()}_API_KEY and {name.upper()}_BASE_URL"
            + (" (and SANTA_OPENAI_MODELS, SANTA_OPENAI_STRICT)" if name == OPENAI else "")
        )
    if not _NAME.match(name):
        return f"provider name {name[:40]!r} is not lower-case letters, digits and _ (at most 32)"
    if problem := _base_url_problem((env.get(prefix + "BASE_URL") or "").strip()):
        return f"provider {name!r} left out: {problem}"
    key_env = (env.get(prefix + "API_KEY_ENV") or "").strip()
    if key_env and (not _ENV_VAR.match(key_env) or ("_" not in key_env and len(key_env) > 20)):
        return (
            f"provider {name!r} left out: api_key_env must be the NAME of the variable holding the key "
            "(upper-case letters, digits and _, such as GEMINI_API_KEY), not the key itself"
        )
    if _strict(env.get(prefix + "STRICT")) is None:
        return f"provider {name!r} left out: strict must be true or false"
    return None


def provider_problems(env: Mapping[str, str] | None = None) -> list[str]:
    """Every configured provider the desk leaves out, and why (for Settings and the command line's stderr)."""
    env = os.environ if env is None else env
    problems = [p for name in _named(env) if (p := _named_problem(name, env))]
    problems += [
        f"secrets table [santa.providers.{name[:40]}] left out: {why}" for name, why in _SECRETS_PROBLEMS.items()
    ]
    return problems


_SECRETS_PROBLEMS: dict[str, str] = {}
"""Provider tables of secrets.toml that could not be exported, by name (filled by `provider_settings_to_env`)."""


def _models(value: str | None) -> tuple[str, ...]:
    return tuple(dict.fromkeys(m.strip() for m in (value or "").split(",") if m.strip()))


def provider_settings_to_env(table: Mapping, env: MutableMapping[str, str] | None = None) -> None:
    """`[santa.providers.<name>]` of secrets.toml as SANTA_PROVIDER_<NAME>_* variables (values already set win).
    `[santa.providers.openai]` sets the built-in OpenAI provider (OPENAI_BASE_URL, SANTA_OPENAI_MODELS,
    SANTA_OPENAI_STRICT; its key stays OPENAI_API_KEY); a table that cannot be used is listed by
    `provider_problems`."""
    target: MutableMapping[str, str] = os.environ if env is None else env
    for name, row in (table or {}).items():
        name = str(name)
        if not isinstance(row, Mapping):
            _SECRETS_PROBLEMS[name] = "it is not a table"
            continue
        if name == ANTHROPIC or not _NAME.match(name):
            _SECRETS_PROBLEMS[name] = (
                "Anthropic is configured with ANTHROPIC_API_KEY and ANTHROPIC_BASE_URL"
                if name == ANTHROPIC
                else "a provider name is lower-case letters, digits and _ (at most 32)"
            )
            continue
        _SECRETS_PROBLEMS.pop(name, None)
        if name == OPENAI:
            names = {"base_url": "OPENAI_BASE_URL", "models": "SANTA_OPENAI_MODELS", "strict": "SANTA_OPENAI_STRICT"}
        else:
            prefix = f"SANTA_PROVIDER_{_env_name(name)}_"
            names = {key: prefix + key.upper() for key in ("base_url", "api_key_env", "models", "strict")}
        for key, var in names.items():
            value = row.get(key)
            if value is None:
                continue
            if isinstance(value, list | tuple):
                value = ",".join(map(str, value))
            target.setdefault(var, str(value).lower() if isinstance(value, bool) else str(value))


# --- model ids --------------------------------------------------------------------------------


def split_model(model_id: str) -> tuple[str, str]:
    """(provider, model) of a model id; no provider prefix means Anthropic. The model part may hold colons
    (Ollama tags: `local:qwen3:32b`)."""
    provider, sep, model = model_id.partition(":")
    if not sep or not _NAME.match(provider):
        return ANTHROPIC, model_id
    return provider, model


def canonical(model_id: str) -> str:
    """One spelling per model: `anthropic:claude-x` is `claude-x`; other ids as written (trimmed)."""
    provider, model = split_model(model_id.strip())
    return model if provider == ANTHROPIC else f"{provider}:{model}"


def provider_of(model_id: str, providers: list[Provider] | None = None) -> Provider | None:
    """The configured provider that answers `model_id` (None: no such provider is configured)."""
    name, _ = split_model(model_id)
    return next((p for p in providers or configured_providers() if p.name == name), None)


_SPACE_OR_CONTROL = re.compile(r"[\s\x00-\x1f\x7f-\x9f]")


def id_problem(model_id: str) -> str | None:
    """Why `model_id` is not a model id at all (spaces, control characters, an empty or upper-case provider, a
    bare id that is not Claude's), else None. Never echoes a control character."""
    if not model_id or _SPACE_OR_CONTROL.search(model_id):
        return f"model id {model_id.strip()[:60]!r} is empty or holds a space or control character"
    prefix, sep, model = model_id.partition(":")
    if sep and not _NAME.match(prefix):
        hint = f"; did you mean {prefix.lower()}:{model}?" if _NAME.match(prefix.lower()) else ""
        return f"model id {model_id[:80]!r}: a provider name is lower-case letters, digits and _{hint}"
    if not sep and not model_id.startswith("claude-"):
        return (
            f"model id {model_id[:80]!r} names no provider: only Claude ids (claude-…) may go without one; "
            f"write <provider>:<model>, e.g. openai:{model_id[:60]} (or anthropic:{model_id[:60]} for a model "
            "behind ANTHROPIC_BASE_URL)"
        )
    return None


def key_problem(
    model_id: str, providers: list[Provider] | None = None, env: Mapping[str, str] | None = None
) -> str | None:
    """Why `model_id` cannot be called here (one line naming the provider and what to set), else None."""
    if problem := id_problem(model_id):
        return problem
    env = os.environ if env is None else env
    providers = configured_providers(env) if providers is None else providers
    name, model = split_model(model_id)
    provider = provider_of(model_id, providers)
    if provider is None:
        if f"SANTA_PROVIDER_{_env_name(name)}_BASE_URL" in env and (left_out := _named_problem(name, env)):
            return left_out
        known = ", ".join(p.name for p in providers)
        return (
            f"unknown provider {name!r} in model id {model_id!r} (configured: {known}); add it as "
            f"SANTA_PROVIDER_{_env_name(name)}_BASE_URL or [santa.providers.{name}] in .streamlit/secrets.toml"
        )
    if not model:
        return f"model id {model_id!r} names no model after {name!r}:"
    if not provider.key_present(env):
        return (
            f"no API key for provider {provider.name!r} (needed by {model_id}): set {provider.key_env} "
            "in the environment or .streamlit/secrets.toml"
        )
    return None


def usable_model_ids(providers: list[Provider] | None = None, env: Mapping[str, str] | None = None) -> list[str]:
    """The ids the pickers offer: every listed model of every provider whose key is present."""
    providers = configured_providers(env) if providers is None else providers
    return [mid for p in providers if p.key_present(env) for mid in p.model_ids()]


# --- families ---------------------------------------------------------------------------------

FAMILIES: tuple[tuple[str, str], ...] = (
    ("Claude", r"claude"),
    ("DeepSeek", r"deepseek"),
    ("GPT", r"(^|[/:._-])(gpt|chatgpt|o[1-9](-|$)|codex|davinci|babbage)"),
    ("Gemini", r"gemini|gemma|learnlm"),
    ("Llama", r"llama"),
    ("Mistral", r"mistral|mixtral|codestral|ministral|magistral|devstral|pixtral"),
    ("Qwen", r"qwen|qwq"),
    ("Grok", r"grok"),
    ("Phi", r"(^|/)phi"),
    ("Command", r"command|cohere|(^|/)aya"),
    ("Kimi", r"kimi|moonshot"),
    ("GLM", r"(^|/)(chat)?glm"),
    ("Nova", r"(^|/)(amazon\.)?nova"),
)
"""Family name and the pattern of its model names, most specific first (a DeepSeek distill of Llama is
DeepSeek's). Models of one family share training data and methods, so they share blind spots."""
_FAMILY_RES = tuple((name, re.compile(pattern)) for name, pattern in FAMILIES)


def family(model_id: str) -> str:
    """The model family of an id: every model on the Anthropic API is Claude; elsewhere the model name decides
    (`openai:gpt-5.4-mini` → GPT, `openrouter:meta-llama/llama-3.3-70b` → Llama); a name of no known family is
    its own family, named by its first word. A person is their own family."""
    if model_id == PERSON_FAMILY:
        return PERSON_FAMILY
    provider, model = split_model(model_id)
    name = model.lower()
    for fam, pattern in _FAMILY_RES:
        if pattern.search(name):
            return fam
    if provider == ANTHROPIC:  # a gateway behind ANTHROPIC_BASE_URL may serve others, named as such (above)
        return "Claude"
    first = re.split(r"[-_:./\s]+", name.rsplit("/", 1)[-1])[0]
    return f"{UNKNOWN_FAMILY}({first or name})"


def family_known(model_id: str) -> bool:
    """Whether the desk knows the family of `model_id` (a person, any model on the Anthropic API, or a name that
    matches one of `FAMILIES`); a model of no known family cannot be said to differ from another."""
    if model_id == PERSON_FAMILY or split_model(model_id)[0] == ANTHROPIC:
        return True
    name = split_model(model_id)[1].lower()
    return any(pattern.search(name) for _, pattern in _FAMILY_RES)


def spans_two_families(reviewer_b: str, reviewer_c: str) -> bool:
    """Whether the panel's two reviewers come from different known families (a person counts as their own; a
    model of unknown family never counts as a second family)."""
    return family_known(reviewer_b) and family_known(reviewer_c) and family(reviewer_b) != family(reviewer_c)


def diversity_warning(
    reviewer_b: str, reviewer_c: str, providers: list[Provider] | None = None, env: Mapping[str, str] | None = None
) -> str | None:
    """A warning when B and C are not independent (one model, or one family), else None. A person in a slot
    is independent of any model."""
    if PERSON_FAMILY in (reviewer_b, reviewer_c):
        return None
    if canonical(reviewer_b) == canonical(reviewer_c):
        return (
            f"Reviewers B and C are both {reviewer_b}. Two instances of one model share blind spots; pick "
            "a model of another family for one slot."
        )
    unknown = [m for m in (reviewer_b, reviewer_c) if not family_known(m)]
    if unknown:
        return (
            f"The model family of {', '.join(unknown)} is not known to the desk (its name matches none of "
            f"{', '.join(name for name, _ in FAMILIES)}), so it cannot tell whether B and C share blind spots; "
            "pick models of two known families."
        )
    fam = family(reviewer_b)
    if fam != family(reviewer_c):
        return None
    other = other_family_model(fam, providers, env)
    hint = f"pick a model of another family (for example {other}) for one slot" if other else second_key_hint(fam)
    return (
        f"Reviewers B and C are both {fam} models ({reviewer_b}, {reviewer_c}): one family shares blind "
        f"spots, so their misses are not independent; {hint}."
    )


def other_family_model(
    fam: str, providers: list[Provider] | None = None, env: Mapping[str, str] | None = None
) -> str | None:
    """The first usable model of another family than `fam` (None: only `fam` is configured)."""
    return next((m for m in usable_model_ids(providers, env) if family(m) != fam), None)


def second_key_hint(fam: str = "Claude") -> str:
    """What a second family's key would add, for a desk with one family configured."""
    if fam == "GPT":
        return "set ANTHROPIC_API_KEY to add Claude reviewers"
    return (
        "set OPENAI_API_KEY (or add an OpenAI-compatible endpoint: Gemini, Mistral, a local server) so the "
        "second reviewer comes from another family"
    )


def screen_candidates(providers: list[Provider] | None = None, env: Mapping[str, str] | None = None) -> list[str]:
    """The cheapest usable model of each provider with a key, in the providers' order (the screen reads every
    distinct text twice and only has to repeat a key or quote sentences): Claude Haiku, GPT-5.4-nano (else the
    first OpenAI model listed), a named endpoint's first model."""
    providers = configured_providers(env) if providers is None else providers
    found = []
    for p in (p for p in providers if p.key_present(env) and p.models):
        cheap = "claude-haiku-5-5" if p.name == ANTHROPIC else "gpt-5.4-nano" if p.name == OPENAI else ""
        found.append(p.model_id(cheap if cheap in p.models else p.models[0]))
    return found


def default_screen_model(
    providers: list[Provider] | None = None, env: Mapping[str, str] | None = None, reviewers: Iterable[str] = ()
) -> str:
    """The injection screen's default model: of `screen_candidates`, the first of a known family other than every
    reviewer's when keys allow (issue 36: a text written to take over the reviewers' family must then take over a
    third one too, and the screen's blind spots are not the panel's), else the first (Claude Haiku with an
    Anthropic key, else GPT-5.4-nano with an OpenAI key, else a named endpoint's first model). An explicit
    SANTA_SCREEN_MODEL or a saved setting wins over it (`config.effective_defaults`)."""
    candidates = screen_candidates(providers, env)
    if not candidates:
        return "claude-haiku-5-5"
    taken = {family(r) for r in reviewers if r and r != PERSON_FAMILY}
    return next((m for m in candidates if family_known(m) and family(m) not in taken), candidates[0])


def panel_families(reviewer_b: str, reviewer_c: str) -> str:
    """'Claude + GPT' — the families of a panel, for records and the runs list."""
    return f"{family(reviewer_b)} + {family(reviewer_c)}"


def message_batches_problem(reviewer_b: str, reviewer_c: str) -> str | None:
    """Why a batch sample cannot go through Anthropic's Message Batches API with this panel, else None.

    Reviewers on another provider review a sample with synchronous calls: the OpenAI Batch API has its own
    file-upload protocol and a 24-hour window, and the compatible servers (Gemini's endpoint, Ollama, vLLM)
    mostly do not offer it, so one synchronous path serves every provider the same way.
    """
    others = [m for m in (reviewer_b, reviewer_c) if m != PERSON_FAMILY and split_model(m)[0] != ANTHROPIC]
    if not others:
        return None
    return (
        f"the Message Batches API is Anthropic's: {', '.join(others)} cannot review through it; turn Message "
        "Batches off (the sample is then reviewed with synchronous calls) or pick Claude models for both slots"
    )


_KEY_LIKE = re.compile(r"\b(sk-[A-Za-z0-9_\-]{6,}|AIza[0-9A-Za-z_\-]{20,}|gsk_[A-Za-z0-9]{16,})")
"""Keys by their providers' well-known prefixes (OpenAI and Anthropic sk-, Google AIza, Groq gsk_)."""


def scrub_keys(text: str, env: Mapping[str, str] | None = None) -> str:
    """`text` with every configured key's value, and anything shaped like a key, replaced by *** — for error
    messages a server may echo a key into (they are stored, shown on pages and printed)."""
    env = os.environ if env is None else env
    names = {
        "ANTHROPIC_API_KEY",
        "ANTHROPIC_AUTH_TOKEN",
        "OPENAI_API_KEY",
        *(p.key_env for p in configured_providers(env) if p.key_env),
    }
    for value in sorted({env.get(n) or "" for n in names}, key=len, reverse=True):
        if len(value) >= 12:  # a placeholder such as "ollama" is no secret, and replacing it mangles the text
            text = text.replace(value, "***")
    return _KEY_LIKE.sub("***", text)
