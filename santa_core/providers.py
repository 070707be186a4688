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
from collections.abc import Mapping
from dataclasses import dataclass

ANTHROPIC, OPENAI = "anthropic", "openai"
MESSAGES_API, CHAT_COMPLETIONS = "messages", "chat_completions"
PERSON_FAMILY = "person"

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

_NAME = re.compile(r"^[a-z][a-z0-9_-]{0,31}$")
_ENV_PROVIDER = re.compile(r"^SANTA_PROVIDER_([A-Z][A-Z0-9_]*)_BASE_URL$")


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
    return name.upper().replace("-", "_")


def configured_providers(env: Mapping[str, str] | None = None) -> list[Provider]:
    """Anthropic, OpenAI, then the named endpoints in name order (whether or not their keys are present)."""
    env = os.environ if env is None else env
    found = [
        Provider(ANTHROPIC, MESSAGES_API, env.get("ANTHROPIC_BASE_URL") or None, "ANTHROPIC_API_KEY", CLAUDE_MODELS),
        Provider(OPENAI, CHAT_COMPLETIONS, env.get("OPENAI_BASE_URL") or None, "OPENAI_API_KEY",
                 _models(env.get("SANTA_OPENAI_MODELS")) or OPENAI_MODELS),
    ]
    names = sorted({m.group(1).lower().replace("_", "-") for k in env if (m := _ENV_PROVIDER.match(k))})
    for name in names:
        if name in (ANTHROPIC, OPENAI) or not _NAME.match(name):
            continue
        prefix = f"SANTA_PROVIDER_{_env_name(name)}_"
        base = (env.get(prefix + "BASE_URL") or "").strip()
        if not base:
            continue
        found.append(Provider(name, CHAT_COMPLETIONS, base, (env.get(prefix + "API_KEY_ENV") or "").strip() or None,
                              _models(env.get(prefix + "MODELS")),
                              strict=(env.get(prefix + "STRICT") or "1").strip().lower() not in ("0", "false", "no")))
    return found


def _models(value: str | None) -> tuple[str, ...]:
    return tuple(dict.fromkeys(m.strip() for m in (value or "").split(",") if m.strip()))


def provider_settings_to_env(table: Mapping, env: dict | None = None) -> None:
    """`[santa.providers.<name>]` of secrets.toml as SANTA_PROVIDER_<NAME>_* variables (values already set win)."""
    env = os.environ if env is None else env
    for name, row in (table or {}).items():
        if not isinstance(row, Mapping) or not _NAME.match(str(name)):
            continue
        prefix = f"SANTA_PROVIDER_{_env_name(str(name))}_"
        for key in ("base_url", "api_key_env", "models", "strict"):
            value = row.get(key)
            if value is None:
                continue
            if isinstance(value, list | tuple):
                value = ",".join(map(str, value))
            env.setdefault(prefix + key.upper(), str(value).lower() if isinstance(value, bool) else str(value))


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


class ProviderProblem(ValueError):
    """A model id the desk cannot call as configured: an unknown provider or a missing key (one line)."""


def key_problem(model_id: str, providers: list[Provider] | None = None,
                env: Mapping[str, str] | None = None) -> str | None:
    """Why `model_id` cannot be called here (one line naming the provider and what to set), else None."""
    providers = configured_providers(env) if providers is None else providers
    name, model = split_model(model_id)
    provider = provider_of(model_id, providers)
    if provider is None:
        known = ", ".join(p.name for p in providers)
        return (f"unknown provider {name!r} in model id {model_id!r} (configured: {known}); add it as "
                f"SANTA_PROVIDER_{_env_name(name)}_BASE_URL or [santa.providers.{name}] in .streamlit/secrets.toml")
    if not model:
        return f"model id {model_id!r} names no model after {name!r}:"
    if not provider.key_present(env):
        return (f"no API key for provider {provider.name!r} (needed by {model_id}): set {provider.key_env} "
                "in the environment or .streamlit/secrets.toml")
    return None


def usable_model_ids(providers: list[Provider] | None = None, env: Mapping[str, str] | None = None) -> list[str]:
    """The ids the pickers offer: every listed model of every provider whose key is present."""
    providers = configured_providers(env) if providers is None else providers
    return [mid for p in providers if p.key_present(env) for mid in p.model_ids()]


# --- families ---------------------------------------------------------------------------------

FAMILIES: tuple[tuple[str, str], ...] = (
    ("Claude", r"claude"),
    ("DeepSeek", r"deepseek"),
    ("GPT", r"(^|/)(gpt|chatgpt|o[1-9](-|$)|codex|davinci|babbage)"),
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
    if provider == ANTHROPIC:
        return "Claude"
    name = model.lower()
    for fam, pattern in _FAMILY_RES:
        if pattern.search(name):
            return fam
    first = re.split(r"[-_:./\s]+", name.rsplit("/", 1)[-1])[0]
    return first or name


def spans_two_families(reviewer_b: str, reviewer_c: str) -> bool:
    """Whether the panel's two reviewers come from different families (a person counts as their own)."""
    return family(reviewer_b) != family(reviewer_c)


def diversity_warning(reviewer_b: str, reviewer_c: str, providers: list[Provider] | None = None,
                      env: Mapping[str, str] | None = None) -> str | None:
    """A warning when B and C are not independent (one model, or one family), else None. A person in a slot
    is independent of any model."""
    if PERSON_FAMILY in (reviewer_b, reviewer_c):
        return None
    if canonical(reviewer_b) == canonical(reviewer_c):
        return (f"Reviewers B and C are both {reviewer_b}. Two instances of one model share blind spots; pick "
                "a model of another family for one slot.")
    fam = family(reviewer_b)
    if fam != family(reviewer_c):
        return None
    other = other_family_model(fam, providers, env)
    hint = (f"pick a model of another family (for example {other}) for one slot" if other
            else second_key_hint(fam))
    return (f"Reviewers B and C are both {fam} models ({reviewer_b}, {reviewer_c}): one family shares blind "
            f"spots, so their misses are not independent; {hint}.")


def other_family_model(fam: str, providers: list[Provider] | None = None,
                       env: Mapping[str, str] | None = None) -> str | None:
    """The first usable model of another family than `fam` (None: only `fam` is configured)."""
    return next((m for m in usable_model_ids(providers, env) if family(m) != fam), None)


def second_key_hint(fam: str = "Claude") -> str:
    """What a second family's key would add, for a desk with one family configured."""
    if fam == "GPT":
        return "set ANTHROPIC_API_KEY to add Claude reviewers"
    return ("set OPENAI_API_KEY (or add an OpenAI-compatible endpoint: Gemini, Mistral, a local server) so the "
            "second reviewer comes from another family")


def default_panel(providers: list[Provider] | None = None,
                  env: Mapping[str, str] | None = None) -> tuple[str, str, str]:
    """(reviewer B, reviewer C, fix agent) for a desk with these providers: with keys for two families, one
    reviewer from each; with Claude only, Sonnet and Haiku; with one other provider only, its first two models."""
    providers = configured_providers(env) if providers is None else providers
    ready = [p for p in providers if p.key_present(env) and p.models]
    claude = next((p for p in ready if p.name == ANTHROPIC), None)
    others = [p for p in ready if p.name != ANTHROPIC]
    if claude is not None:
        second = next((p.model_id(m) for p in others for m in p.models if family(p.model_id(m)) != "Claude"), None)
        return "claude-sonnet-5-5", second or "claude-haiku-5-5", "claude-opus-5-5"
    if others:
        ids = others[0].model_ids()
        b = ids[0]
        c = next((m for p in others for m in p.model_ids() if family(m) != family(b)), ids[1] if len(ids) > 1 else b)
        return b, c, b
    return "claude-sonnet-5-5", "claude-haiku-5-5", "claude-opus-5-5"


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
    return (f"the Message Batches API is Anthropic's: {', '.join(others)} cannot review through it; turn Message "
            "Batches off (the sample is then reviewed with synchronous calls) or pick Claude models for both slots")
