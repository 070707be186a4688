"""Reviewers and the fix agent: who judges an output, and what they are allowed to see.

- `base`: the Reviewer and Fixer protocols and the only request a reviewer receives.
- `prompts`: the reviewer and fix prompts (untrusted text fenced with a per-request nonce).
- `calls`: what every provider shares (one fail-closed structured call, asked again while the answer is bad).
- `anthropic`: the Anthropic Messages API adapter (structured outputs, validated here).
- `openai_compat`: the Chat Completions adapter (the `openai` SDK: OpenAI and every compatible server).
- `message_batches`: a batch sample's reviews through the Message Batches API.
- `doubles`: deterministic reviewers and fix agents for tests and benches.

The adapters are imported from their modules (the SDK is heavy; the method's core does not need it).
"""

from santa_core.reviewers.base import PERSON, FixAnswer, Fixer, FixRequest, Reviewer, ReviewRequest

__all__ = ["PERSON", "FixAnswer", "FixRequest", "Fixer", "ReviewRequest", "Reviewer"]
