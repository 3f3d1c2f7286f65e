"""Primed prefix states survive a restart on disk (issue 20.1), checked by evaluated tokens.

After a restart with a saved state the first turn evaluates only its new message, also when it
arrives while the start's priming runs; a changed home or another model file discards the saved
state; a damaged file is never loaded: it is set aside beside the others (hub.state_files) and said.
"""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path

import numpy as np
import pytest

from hub.llm.kv_cache import common_prefix
from hub.llm.llama_engine import LlamaEngine
from hub.core.messages import Message
from hub.llm.types import Done, GenerationRequest, Usage
from hub.state_files import set_aside_under

pytestmark = pytest.mark.slow


def stable(home: str) -> GenerationRequest:
    rooms = ["kitchen", "hall", "attic", "cellar", "garage"] * 6
    return GenerationRequest([Message("system", f"You control {home}. " + " ".join(
        f"Lamp {i} is in the {room}." for i, room in enumerate(rooms)))])


def engine(model: Path, folder: Path) -> LlamaEngine:
    return LlamaEngine(model, n_ctx=1024, seed=7, state_dir=folder, threads=1)


def turn_of(request: GenerationRequest) -> GenerationRequest:
    return GenerationRequest([*request.messages, Message("user", "Is lamp 3 on?")], max_tokens=2, temperature=0.0)


async def first_turn(engine: LlamaEngine, request: GenerationRequest) -> Usage:
    async for delta in engine.stream(turn_of(request)):
        if isinstance(delta, Done):
            await engine.wait_idle()
            return delta.usage
    raise AssertionError("no Done")


def new_tokens(engine: LlamaEngine, request: GenerationRequest) -> int:
    """What a turn on a primed `request` must evaluate: where its prompt leaves the prefix (Gemma
    folds the system text into the user turn, so the prefix's last markup differs too)."""
    prefix = np.asarray(engine.prompt_tokens(request, add_generation_prompt=False))
    turn = np.asarray(engine.prompt_tokens(turn_of(request)))
    return len(turn) - common_prefix(prefix, turn)


async def primed_and_closed(model: Path, folder: Path, request: GenerationRequest) -> None:
    """A hub run that primed its stable prefix, then stopped."""
    first = engine(model, folder)
    try:
        assert await first.prime(request, keep_as="default")
        await first.wait_idle()
    finally:
        await first.close()


async def after_restart(model: Path, folder: Path) -> LlamaEngine:
    """A run primed the Smith home and stopped; the next run's engine, nothing evaluated yet."""
    await primed_and_closed(model, folder, stable("the Smith home"))
    assert len(list(folder.glob("*.kvstate"))) == 1
    return engine(model, folder)


async def test_after_a_restart_the_first_turn_evaluates_only_its_new_message(
        gemma_path: Path, tmp_path: Path) -> None:
    restarted = await after_restart(gemma_path, tmp_path / "states")
    try:
        usage = await first_turn(restarted, stable("the Smith home"))  # before any priming
        assert usage.evaluated_prompt_tokens == new_tokens(restarted, stable("the Smith home")) < 20, usage
    finally:
        await restarted.close()


async def test_a_turn_during_the_first_priming_after_a_restart_uses_the_restored_state(
        gemma_path: Path, tmp_path: Path) -> None:
    restarted = await after_restart(gemma_path, tmp_path / "states")
    request = stable("the Smith home")
    try:
        priming = asyncio.create_task(restarted.prime(request, keep_as="default"))  # the primer at start
        await asyncio.sleep(0)  # it holds the model now: the turn interrupts it or waits for it
        usage = await first_turn(restarted, request)
        await priming
        assert usage.evaluated_prompt_tokens == new_tokens(restarted, request) < 20, usage
    finally:
        await restarted.close()


async def test_a_changed_home_evaluates_from_its_change_and_replaces_the_saved_state(
        gemma_path: Path, tmp_path: Path) -> None:
    folder = tmp_path / "states"
    restarted = await after_restart(gemma_path, folder)
    old_file = next(folder.glob("*.kvstate")).read_bytes()
    try:
        changed = stable("the Jones home")  # differs early: the lamps after it are re-evaluated
        usage = await first_turn(restarted, changed)
        assert usage.evaluated_prompt_tokens > usage.prompt_tokens * 0.8, usage
        assert await restarted.prime(changed, keep_as="default")  # the primer, after the change
        await restarted.wait_idle()
        old = np.asarray(restarted.prompt_tokens(stable("the Smith home"), add_generation_prompt=False))
        assert all(common_prefix(s.tokens, old) < len(old) for s in restarted._prompt_cache.states)  # gone
        files = list(folder.glob("*.kvstate"))
        assert len(files) == 1 and files[0].read_bytes() != old_file
    finally:
        await restarted.close()


async def test_another_model_file_or_a_damaged_file_discards_the_saved_state(
        gemma_path: Path, tmp_path: Path) -> None:
    folder = tmp_path / "states"
    request = stable("the Smith home")
    await primed_and_closed(gemma_path, folder, request)
    copy = tmp_path / "other.gguf"
    shutil.copy(gemma_path, copy)  # the same bytes, another file: its states are not trusted
    other = engine(copy, folder)
    try:
        usage = await first_turn(other, request)
        assert usage.evaluated_prompt_tokens == usage.prompt_tokens, usage
        assert not list(folder.glob("*.kvstate"))  # deleted, not kept for later
    finally:
        await other.close()
    await primed_and_closed(gemma_path, folder, request)
    saved = next(folder.glob("*.kvstate"))
    damaged = bytearray(saved.read_bytes())
    damaged[-100] ^= 0xFF
    saved.write_bytes(bytes(damaged))
    again = engine(gemma_path, folder)
    try:
        usage = await first_turn(again, request)
        assert usage.evaluated_prompt_tokens == usage.prompt_tokens, usage
        [aside] = set_aside_under(folder)
        assert aside.path == saved and aside.problem == "its checksum does not match"
        assert aside.copy is not None and aside.copy.read_bytes() == bytes(damaged)
    finally:
        await again.close()
