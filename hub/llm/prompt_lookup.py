"""Prompt-lookup speculative decoding without `logits_all`.

Tool calls copy entity ids and names from the prompt, so the tokens that followed the latest
earlier occurrence of the last few generated tokens are a cheap, often right, guess of what
comes next. Each step decodes the sampled token plus up to `max_draft` guessed tokens in one
batch, asking llama.cpp for logits at exactly those positions (llama-cpp-python's
`LlamaPromptLookupDecoding` needs `logits_all=True`: n_ctx × vocabulary floats, 8 GiB for
Gemma), then samples position by position with the request's own sampler (grammar included)
and keeps guesses while they equal what was sampled. Every emitted token is sampled from the
model's distribution given the tokens before it, so the output is what plain decoding gives;
rejected guesses are dropped from the KV cache.
"""

from __future__ import annotations

from typing import Any, Callable, Generator, Sequence

import numpy as np
from llama_cpp import Llama
from llama_cpp.llama_grammar import LlamaGrammar

from hub.llm.kv_cache import common_prefix
from hub.llm.llama_internals import decode_with_logits, drop_from, new_sampler, resident_tokens, rewind, sample_at


def lookup_draft(history: np.ndarray, *, max_ngram: int = 3, min_ngram: int = 2, max_draft: int = 8) -> list[int]:
    """The tokens that followed the latest earlier occurrence of the longest matching tail n-gram
    (at least `min_ngram` tokens long: a single token is too weak a hint to pay for a draft)."""
    n = len(history)
    for size in range(min(max_ngram, n - 1), min_ngram - 1, -1):
        tail = history[n - size:]
        windows = np.lib.stride_tricks.sliding_window_view(history[: n - 1], size)
        hits = np.flatnonzero((windows == tail).all(axis=1))
        if hits.size:
            start = int(hits[-1]) + size
            draft: list[int] = history[start: min(start + max_draft, n)].tolist()
            return draft
    return []


class PromptLookupDecoder:
    """Drives one `Llama` like `Llama.generate` does, with prompt-lookup drafts.

    `evaluate(tokens)` evaluates prompt tokens the ordinary way (the engine's counting,
    cancellable `Llama.eval`); drafts are verified with batches that carry their own logits.
    """

    def __init__(self, llm: Llama, evaluate: Callable[[Sequence[int]], None], *, max_draft: int = 8) -> None:
        self._llm = llm
        self._evaluate = evaluate
        self.max_draft = max(1, min(max_draft, llm.n_batch - 1))
        self._draft_size = self.max_draft  # adapts: doubles after a full hit, halves after a miss
        self.drafted = 0
        self.accepted = 0

    def generate(self, prompt: Sequence[int], sampling: dict[str, Any], grammar: LlamaGrammar | None) -> Generator[int, None, None]:
        llm = self._llm
        sampler = new_sampler(llm, grammar, sampling)
        tokens = np.asarray(prompt, dtype=np.intc)
        shared = common_prefix(resident_tokens(llm), tokens)
        shared = min(shared, len(tokens) - 1)  # at least one token to evaluate: fresh logits
        rewind(llm, shared)
        self._evaluate(tokens[shared:].tolist())
        history = list(prompt)
        token = sample_at(llm, sampler, -1)
        while True:
            yield token
            history.append(token)
            draft = lookup_draft(np.asarray(history, dtype=np.intc), max_draft=self._draft_size)
            draft = draft[: max(0, llm.n_ctx() - llm.n_tokens - 1)]
            n_past = llm.n_tokens
            decode_with_logits(llm, [token, *draft], n_past)
            self.drafted += len(draft)
            for position in range(len(draft) + 1):
                sampled = sample_at(llm, sampler, position)
                if position < len(draft) and sampled == draft[position]:
                    self.accepted += 1
                    yield sampled
                    history.append(sampled)
                    continue
                self._adapt(position, len(draft))
                keep = n_past + position + 1  # the head token and the accepted guesses
                if keep < llm.n_tokens:
                    drop_from(llm, keep)
                token = sampled
                break

    def _adapt(self, accepted: int, drafted: int) -> None:
        if not drafted:
            return
        if accepted == drafted:
            self._draft_size = min(self.max_draft, self._draft_size * 2)
        elif accepted == 0:
            self._draft_size = max(1, self._draft_size // 2)
