"""Prompt-lookup speculative decoding: drafts come from earlier text, and the output is what
plain decoding gives (greedy, real Gemma 3 270M), free and grammar-constrained."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from hub.llm.llama_engine import LlamaEngine
from hub.llm.prompt_lookup import lookup_draft
from hub.core.messages import Message, ToolSpec
from hub.llm.types import Done, GenerationRequest, TextDelta, ToolCallDelta, ToolConstraint


def test_draft_is_what_followed_the_latest_match_of_the_tail() -> None:
    history = np.array([5, 6, 7, 8, 9, 1, 5, 6, 7, 3, 4, 2, 6, 7], dtype=np.intc)
    assert lookup_draft(history, max_draft=3) == [3, 4, 2]  # "6 7" last seen before "3 4 2"
    assert lookup_draft(history, max_draft=1) == [3]
    assert lookup_draft(np.array([1, 2, 3, 4], dtype=np.intc)) == []  # no earlier match
    assert lookup_draft(np.array([1, 2, 9, 2], dtype=np.intc)) == []  # one token is too weak a hint
    assert lookup_draft(np.array([1, 2, 9, 2], dtype=np.intc), min_ngram=1) == [9, 2]


SET_LIGHT = ToolSpec("turn_on", "Turn a device on", {
    "type": "object", "properties": {"entity_id": {"type": "string"}}, "required": ["entity_id"]},
    entity_args=("entity_id",))
HOME = Message("system", "Devices: " + ", ".join(
    f"light.{room}_{kind}_light" for room in ("attic", "kitchen", "office", "garage") for kind in ("ceiling", "corner")))


async def outputs(engine: LlamaEngine, request: GenerationRequest) -> tuple[str, list, Done]:
    deltas = [d async for d in engine.stream(request)]
    text = "".join(d.text for d in deltas if isinstance(d, TextDelta))
    return text, [d.call for d in deltas if isinstance(d, ToolCallDelta)], deltas[-1]


@pytest.mark.slow
async def test_drafted_output_equals_plain_output(gemma_path: Path) -> None:
    plain = LlamaEngine(gemma_path, n_ctx=2048, seed=1)
    drafting = LlamaEngine(gemma_path, n_ctx=2048, seed=1, draft_tokens=8)
    try:
        free = GenerationRequest([HOME, Message("user", "List the devices again: light.attic_ceiling_light, light.")],
                                 max_tokens=40, temperature=0.0)
        constrained = GenerationRequest([HOME, Message("user", "turn on the office corner light")], tools=[SET_LIGHT],
                                        max_tokens=40, temperature=0.0, constraint=ToolConstraint(
                                            ("turn_on",), ("light.office_corner_light", "light.office_ceiling_light")))
        for request in (free, constrained):
            text_a, calls_a, done_a = await outputs(plain, request)
            text_b, calls_b, done_b = await outputs(drafting, request)
            assert (text_a, calls_a) == (text_b, calls_b)
            # prompt reuse and evaluated-token counting work as without drafts
            assert done_b.usage.evaluated_prompt_tokens == done_a.usage.evaluated_prompt_tokens
            assert done_b.usage.evaluated_prompt_tokens + done_b.usage.reused_prompt_tokens == done_b.usage.prompt_tokens
        assert drafting._drafter.accepted > 0  # drafts were taken, not just tried
    finally:
        await plain.close()
        await drafting.close()
