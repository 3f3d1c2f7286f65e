"""The OpenAI-compatible remote engine.

Against a real server (llama-cpp-python's `llama_cpp.server` with SmolLM2): the same agent turns
as the in-process engine, a tool call on the demo home and a streamed reply; cancellation; an
unreachable server. Against a scripted SSE server (unit logic only): assembling split tool-call
deltas, reasoning deltas, markers in text, usage figures, and every error a server can answer.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any, AsyncIterator

import pytest
from aiohttp import web

from hub.agent.types import ReplyChunk, TurnDone, TurnRequest
from hub.config import validate
from hub.llm.factory import create_engine
from hub.options import hub_options
from hub.llm.llama_engine import LlamaEngine
from hub.llm.openai_engine import OpenAIEngine, openai_messages
from hub.core.messages import Message, ToolCall, ToolSpec
from hub.llm.types import (
    Delta,
    Done,
    EngineBusy,
    EngineError,
    GenerationRequest,
    MalformedToolCall,
    PromptTooLong,
    Reasoning,
    ReasoningMode,
    TextDelta,
    ThinkingDelta,
    ToolCallDelta,
    ToolConstraint,
)

from perf.agent_rig import RecordingEngine, build_agent, demo_store
from perf.remote_server import LlamaCppServer, free_port

TURN_ON = ToolSpec("turn_on", "Turn a device on", {
    "type": "object", "properties": {"entity_id": {"type": "string"}}, "required": ["entity_id"]},
    entity_args=("entity_id",))


async def collect(stream: AsyncIterator[Delta]) -> list[Delta]:
    return [delta async for delta in stream]


# --- a real server ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def server(smollm_path: Path, tmp_path_factory: pytest.TempPathFactory) -> LlamaCppServer:
    running = LlamaCppServer(smollm_path, n_ctx=4096, log=tmp_path_factory.mktemp("server") / "server.log").wait_ready()
    yield running
    running.stop()


@pytest.fixture(scope="module")
def local_smollm(smollm_path: Path) -> LlamaEngine:
    engine = LlamaEngine(smollm_path, n_ctx=4096, seed=7)
    yield engine
    asyncio.run(engine.close())


@pytest.fixture(params=["local", "remote"])
async def engine(request: pytest.FixtureRequest) -> Any:
    if request.param == "local":
        yield request.getfixturevalue("local_smollm")
        return
    server = request.getfixturevalue("server")
    remote = OpenAIEngine(server.url, constrained_tools="always")  # SmolLM is small: same path as local
    yield remote
    await remote.close()


@pytest.mark.slow
async def test_tool_call_turn_acts_on_the_demo_home(engine: Any) -> None:
    assert engine.uses_constrained_tools
    store = demo_store()
    agent, _, _ = build_agent(engine, store, max_tokens=64)
    result = await agent.ask(TurnRequest("turn on the kitchen light", conversation_id="k"))
    assert result.ok, result
    assert result.tool_calls, result
    first = result.tool_calls[0]
    assert first.call.arguments.get("entity_id") == "light.kitchen" and first.ok, first


@pytest.mark.slow
async def test_streamed_turn_reaches_the_listener_in_pieces(engine: Any) -> None:
    recording = RecordingEngine(engine)
    agent, _, _ = build_agent(recording, demo_store(), max_tokens=40, temperature=0.0)
    chunks, done = [], None
    async for event in agent.run(TurnRequest("Tell me a joke about France.", conversation_id="f")):
        if isinstance(event, ReplyChunk):
            chunks.append(event.text)
        elif isinstance(event, TurnDone):
            done = event
    assert done is not None and done.result.ok, done
    assert chunks and done.result.reply.strip()
    usage = recording.generations[-1].usage
    assert usage.completion_tokens >= 1 and usage.first_token_s <= usage.total_s


@pytest.mark.slow
async def test_remote_stream_is_incremental_and_cancellable(server: LlamaCppServer) -> None:
    remote = OpenAIEngine(server.url)
    try:
        request = GenerationRequest([Message("user", "Write a long story about a lighthouse.")], max_tokens=300)
        stream = remote.stream(request)
        first = [await stream.__anext__() for _ in range(3)]
        assert all(isinstance(d, (TextDelta, ThinkingDelta)) for d in first)
        await stream.aclose()  # the connection closes: the server stops generating
        deltas = await asyncio.wait_for(collect(remote.stream(GenerationRequest([Message("user", "Hi")], max_tokens=6))), 120)
        assert isinstance(deltas[-1], Done) and sum(isinstance(d, TextDelta) for d in deltas) > 1
    finally:
        await remote.close()


@pytest.mark.slow
async def test_a_halted_remote_stream_ends_with_the_done_of_what_it_read(server: LlamaCppServer) -> None:
    remote = OpenAIEngine(server.url)
    try:
        request = GenerationRequest([Message("user", "Write a long story about a lighthouse.")], max_tokens=300)
        deltas: list[Delta] = []
        async for delta in remote.stream(request):
            deltas.append(delta)
            if len(deltas) == 3:
                request.halt.set()
        assert len(deltas) == 4 and isinstance(deltas[-1], Done), deltas  # after the halt only its Done
        usage = deltas[-1].usage
        assert usage.stop_reason == "halted" and 3 <= usage.completion_tokens < 300
        # the engine left the response (the server stops that generation) and serves the next request
        deltas = await asyncio.wait_for(collect(remote.stream(GenerationRequest([Message("user", "Hi")], max_tokens=6))), 120)
        assert isinstance(deltas[-1], Done)
    finally:
        await remote.close()


async def test_unreachable_server_is_a_clear_error_and_a_failed_turn() -> None:
    remote = OpenAIEngine(f"http://127.0.0.1:{free_port()}/v1", model="m")
    try:
        with pytest.raises(EngineError, match="cannot reach the model server"):
            await collect(remote.stream(GenerationRequest([Message("user", "Hi")])))
        agent, _, _ = build_agent(remote, demo_store())
        result = await agent.ask(TurnRequest("what is the weather like?", conversation_id="w"))
        assert not result.ok and result.error == "model" and result.reply
    finally:
        await remote.close()


async def test_factory_builds_the_configured_engine(tmp_path: Path) -> None:
    with pytest.raises(EngineError, match="remote_url"):
        await create_engine(hub_options(validate({"engine": "openai"})).llm)
    with pytest.raises(EngineError, match="cannot reach"):
        await create_engine(hub_options(validate({"engine": "openai", "remote_url": f"http://127.0.0.1:{free_port()}/v1"})).llm)
    with pytest.raises(EngineError, match="http"):
        OpenAIEngine("gpu-box:8080/v1")


@pytest.mark.slow
async def test_factory_connects_to_a_real_server(server: LlamaCppServer) -> None:
    remote = await create_engine(hub_options(validate({"engine": "openai", "remote_url": server.url})).llm)
    try:
        assert isinstance(remote, OpenAIEngine) and remote.info.name.endswith(".gguf")
    finally:
        await remote.close()


# --- a scripted SSE server (unit logic) ------------------------------------------------------


class ScriptedServer:
    """Answers /chat/completions with scripted SSE chunks (or an HTTP error) and keeps the bodies."""

    def __init__(self) -> None:
        self.chunks: list[dict[str, Any] | str] = []
        self.status = 200
        self.error_body = ""
        self.bodies: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []

    async def handle(self, request: web.Request) -> web.StreamResponse:
        self.bodies.append(await request.json())
        self.headers.append(dict(request.headers))
        if self.status != 200:
            return web.Response(status=self.status, text=self.error_body)
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)
        for chunk in self.chunks:
            payload = chunk if isinstance(chunk, str) else json.dumps(chunk)
            await response.write(f"data: {payload}\n\n".encode())
        await response.write(b"data: [DONE]\n\n")
        return response


@pytest.fixture
async def scripted() -> tuple[ScriptedServer, str]:
    script = ScriptedServer()
    app = web.Application()
    app.router.add_post("/v1/chat/completions", script.handle)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # noqa: SLF001
    yield script, f"http://127.0.0.1:{port}/v1"
    await runner.cleanup()


def delta(**fields: Any) -> dict[str, Any]:
    return {"choices": [{"index": 0, "delta": fields, "finish_reason": None}]}


async def test_split_tool_call_deltas_reasoning_and_usage(scripted: tuple[ScriptedServer, str]) -> None:
    script, url = scripted
    script.chunks = [
        delta(role="assistant"),
        delta(reasoning_content="The user wants "), delta(reasoning_content="the kitchen light."),
        # llama-cpp-python repeats the name in every delta; OpenAI sends it once
        delta(tool_calls=[{"index": 0, "id": "abc", "type": "function", "function": {"name": "turn_on", "arguments": '{"entity'}}]),
        delta(tool_calls=[{"index": 0, "function": {"name": "turn_on", "arguments": '_id": "light.kitchen"}'}}]),
        delta(tool_calls=[{"index": 1, "id": "def", "function": {"name": "turn_on", "arguments": "{bad json"}}]),
        {"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]},
        {"choices": [], "usage": {"prompt_tokens": 120, "completion_tokens": 30,
                                  "prompt_tokens_details": {"cached_tokens": 100},
                                  "completion_tokens_details": {"reasoning_tokens": 7}}},
    ]
    remote = OpenAIEngine(url, model="m", api_key="secret-key", server="llama_server")
    try:
        deltas = await collect(remote.stream(GenerationRequest(
            [Message("user", "Turn on the kitchen light")], tools=[TURN_ON],
            reasoning=Reasoning(ReasoningMode.BUDGET, 64))))
    finally:
        await remote.close()
    thinking = "".join(d.text for d in deltas if isinstance(d, ThinkingDelta))
    assert thinking == "The user wants the kitchen light."
    calls = [d.call for d in deltas if isinstance(d, ToolCallDelta)]
    assert calls == [ToolCall("turn_on", {"entity_id": "light.kitchen"}, "abc")]
    bad = [d for d in deltas if isinstance(d, MalformedToolCall)]
    assert len(bad) == 1 and "{bad json" in bad[0].raw
    usage = deltas[-1].usage
    assert (usage.prompt_tokens, usage.reused_prompt_tokens, usage.evaluated_prompt_tokens) == (120, 100, 20)
    assert usage.thinking_tokens == 7 and usage.stop_reason == "tool_call"
    body = script.bodies[0]
    assert script.headers[0]["Authorization"] == "Bearer secret-key"
    assert body["chat_template_kwargs"] == {"enable_thinking": True} and body["thinking_budget_tokens"] == 64
    assert body["tools"][0]["function"]["name"] == "turn_on" and body["stream"] is True


async def test_markers_in_plain_text_are_parsed(scripted: tuple[ScriptedServer, str]) -> None:
    script, url = scripted
    text = '<think>plan it</think>Sure.<tool_call>{"name": "turn_on", "arguments": {"entity_id": "light.hall"}}</tool_call>'
    script.chunks = [delta(content=text[i:i + 7]) for i in range(0, len(text), 7)]
    script.chunks.append({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}],
                          "timings": {"prompt_n": 12, "cache_n": 300, "prompt_ms": 40.0}})
    remote = OpenAIEngine(url, model="m")
    try:
        deltas = await collect(remote.stream(GenerationRequest([Message("user", "hall light on")])))
    finally:
        await remote.close()
    assert "".join(d.text for d in deltas if isinstance(d, ThinkingDelta)) == "plan it"
    assert "".join(d.text for d in deltas if isinstance(d, TextDelta)) == "Sure."
    assert [d.call.arguments for d in deltas if isinstance(d, ToolCallDelta)] == [{"entity_id": "light.hall"}]
    usage = deltas[-1].usage
    assert (usage.evaluated_prompt_tokens, usage.reused_prompt_tokens) == (12, 300)
    assert usage.completion_tokens == len(script.chunks) - 1  # no usage sent: one token per delta


async def test_a_halted_stream_leaves_the_response_and_ends_with_its_done(scripted: tuple[ScriptedServer, str]) -> None:
    script, url = scripted
    script.chunks = [delta(content="One. "), delta(content="Two. "), delta(content="Three."),
                     delta(tool_calls=[{"index": 0, "id": "a", "function": {"name": "turn_on", "arguments": "{}"}}]),
                     {"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]}]
    remote = OpenAIEngine(url, model="m")
    request = GenerationRequest([Message("user", "Count")])
    deltas: list[Delta] = []
    try:
        async for item in remote.stream(request):
            deltas.append(item)
            request.halt.set()
    finally:
        await remote.close()
    assert deltas[:-1] == [TextDelta("One. ")]  # nothing after the halt: no text, no call
    usage = deltas[-1].usage
    assert usage.stop_reason == "halted" and usage.completion_tokens == 1  # the pieces read (no usage came)


@pytest.mark.parametrize(("status", "body", "error", "words"), [
    (401, '{"error": {"message": "bad key"}}', EngineError, "remote_api_key"),
    (429, '{"error": {"message": "slow down"}}', EngineBusy, "slow down"),
    (503, "overloaded", EngineBusy, "overloaded"),
    (400, '{"error": {"message": "the request exceeds the available context size"}}', PromptTooLong, "context"),
    (404, '{"error": {"message": "model nope not found"}}', EngineError, "nope"),
    (500, "<html>boom</html>", EngineError, "500"),
])
async def test_http_errors_become_clear_engine_errors(
    scripted: tuple[ScriptedServer, str], status: int, body: str, error: type, words: str
) -> None:
    script, url = scripted
    script.status, script.error_body = status, body
    remote = OpenAIEngine(url, model="m")
    try:
        with pytest.raises(error, match=words):
            await collect(remote.stream(GenerationRequest([Message("user", "Hi")])))
    finally:
        await remote.close()


async def test_an_error_event_mid_stream_ends_it_clearly(scripted: tuple[ScriptedServer, str]) -> None:
    script, url = scripted
    script.chunks = [delta(content="Hel"), "not json at all", {"error": {"message": "slot crashed"}}]
    remote = OpenAIEngine(url, model="m")
    seen: list[Delta] = []
    try:
        with pytest.raises(EngineError, match="slot crashed"):
            async for item in remote.stream(GenerationRequest([Message("user", "Hi")])):
                seen.append(item)
    finally:
        await remote.close()
    assert seen == [TextDelta("Hel")]  # what came before the error was delivered


async def test_constrained_request_asks_for_schema_json_and_reads_it(scripted: tuple[ScriptedServer, str]) -> None:
    script, url = scripted
    script.chunks = [delta(content='{"name": "turn_on", '), delta(content='"arguments": {"entity_id": "light.b"}}')]
    remote = OpenAIEngine(url, model="m", server="vllm", constrained_tools="always")
    constraint = ToolConstraint(("turn_on",), ("light.a", "light.b"))
    try:
        deltas = await collect(remote.stream(GenerationRequest(
            [Message("system", "You control a home."), Message("user", "b on")], tools=[TURN_ON], constraint=constraint)))
    finally:
        await remote.close()
    assert [d.call for d in deltas if isinstance(d, ToolCallDelta)] == [ToolCall("turn_on", {"entity_id": "light.b"}, "call_1")]
    body = script.bodies[0]
    schema = body["response_format"]["json_schema"]["schema"]
    assert schema["properties"]["arguments"]["properties"]["entity_id"]["enum"] == ["light.a", "light.b"]
    assert "tools" not in body and "turn_on" in body["messages"][0]["content"]
    assert body["chat_template_kwargs"] == {"enable_thinking": False}


# --- request bodies --------------------------------------------------------------------------


@pytest.mark.parametrize(("server", "mode", "expected"), [
    ("llama_server", ReasoningMode.OFF, {"chat_template_kwargs": {"enable_thinking": False}}),
    ("vllm", ReasoningMode.BUDGET, {"chat_template_kwargs": {"enable_thinking": True}, "thinking_token_budget": 200}),
    ("nvidia", ReasoningMode.BUDGET, {"chat_template_kwargs": {"enable_thinking": True}, "reasoning_budget": 200}),
    ("nvidia", ReasoningMode.ON, {"chat_template_kwargs": {"enable_thinking": True}}),
    ("ollama", ReasoningMode.OFF, {"reasoning_effort": "none"}),
    ("ollama", ReasoningMode.BUDGET, {"reasoning_effort": "low"}),
    ("openai", ReasoningMode.ON, {}),
])
def test_reasoning_switches_per_server_kind(server: str, mode: ReasoningMode, expected: dict[str, Any]) -> None:
    remote = OpenAIEngine("http://127.0.0.1:9/v1", model="m", server=server)
    body = remote.request_body(GenerationRequest([Message("user", "Hi")], reasoning=Reasoning(mode, 200)))
    extra = {k: v for k, v in body.items() if k in ("chat_template_kwargs", "reasoning_effort",
                                                   "thinking_budget_tokens", "thinking_token_budget", "reasoning_budget")}
    assert extra == expected


def test_history_with_calls_gets_matching_ids() -> None:
    messages = [
        Message("user", "both lamps on"),
        Message("assistant", "", tool_calls=[ToolCall("turn_on", {"entity_id": "light.a"}),
                                             ToolCall("turn_on", {"entity_id": "light.b"}, "x7")]),
        Message("tool", '{"ok": true}', name="turn_on"),
        Message("tool", '{"ok": true}', name="turn_on", tool_call_id="x7"),
        Message("assistant", "Done."),
    ]
    out = openai_messages(messages)
    ids = [c["id"] for c in out[1]["tool_calls"]]
    assert ids == ["call_1", "x7"]
    assert [out[2]["tool_call_id"], out[3]["tool_call_id"]] == ["call_1", "x7"]
    assert json.loads(out[1]["tool_calls"][0]["function"]["arguments"]) == {"entity_id": "light.a"}


def test_bad_options_are_refused() -> None:
    with pytest.raises(EngineError, match="remote_server"):
        OpenAIEngine("http://x/v1", server="tgi")
    with pytest.raises(EngineError, match="constrained_tools"):
        OpenAIEngine("http://x/v1", constrained_tools="sometimes")
