"""The OpenAI-compatible endpoint through OpenAI's own Python client, against a real hub
(SmolLM2 through llama-cpp-python): errors, `stop`, refused parameters, streaming, models.
The small model's words are not judged, only the conventions."""

from __future__ import annotations

import openai
import pytest

from helpers.live_hub import TOKEN

TIMEOUT = 240  # a model turn on two busy cores
HELLO = [{"role": "user", "content": "Count from one to ten in words, separated by commas."}]


@pytest.fixture(scope="module")
def client(live_hub) -> openai.OpenAI:
    return openai.OpenAI(base_url=f"{live_hub.url}/v1", api_key=TOKEN, timeout=TIMEOUT, max_retries=0)


def model_of(client: openai.OpenAI) -> str:
    return client.models.list().data[0].id


def test_models_list_and_retrieve_use_a_slug_id(client):
    models = client.models.list().data
    assert len(models) == 1
    model = models[0]
    assert model.id == model.id.lower() and " " not in model.id and model.owned_by == "bolt-hub"
    assert client.models.retrieve(model.id).id == model.id
    with pytest.raises(openai.NotFoundError) as caught:
        client.models.retrieve("gpt-4o")
    assert caught.value.code == "model_not_found" and "gpt-4o" in caught.value.message


def test_a_wrong_key_is_an_authentication_error_with_a_message(live_hub):
    wrong = openai.OpenAI(base_url=f"{live_hub.url}/v1", api_key="nope", max_retries=0, timeout=30)
    with pytest.raises(openai.AuthenticationError) as caught:
        wrong.models.list()
    assert "API token" in caught.value.message


def test_a_bad_body_names_the_parameter(client):
    with pytest.raises(openai.BadRequestError) as caught:
        client.chat.completions.create(model="any", messages=[{"role": "wizard", "content": "hi"}])
    error = caught.value
    assert error.param == "messages.[0].role" and error.type == "invalid_request_error"
    assert "wizard" in error.message  # the client shows the message, not just "Error code: 400"


@pytest.mark.parametrize("extra,param", [
    ({"n": 2}, "n"),
    ({"logprobs": True}, "logprobs"),
    ({"top_logprobs": 3}, "top_logprobs"),
    ({"response_format": {"type": "json_object"}}, "response_format"),
    ({"modalities": ["text", "audio"], "audio": {"voice": "alloy", "format": "wav"}}, "audio"),
])
def test_unsupported_parameters_are_refused_by_name(client, extra, param):
    with pytest.raises(openai.BadRequestError) as caught:
        client.chat.completions.create(model="any", messages=HELLO, max_tokens=4, **extra)
    assert caught.value.param == param and caught.value.code == "unsupported_parameter"
    assert param in caught.value.message


@pytest.mark.parametrize("extra,param", [
    ({"top_p": -1}, "top_p"),
    ({"top_p": 1.5}, "top_p"),
    ({"parallel_tool_calls": "yes"}, "parallel_tool_calls"),
    ({"presence_penalty": 3}, "presence_penalty"),
    ({"seed": "lucky"}, "seed"),
])
def test_out_of_range_values_are_refused_as_openai_refuses_them(client, extra, param):
    """Issue #30 item 6: 0.6.0 accepted top_p -1 and parallel_tool_calls "yes"."""
    with pytest.raises(openai.BadRequestError) as caught:
        client.chat.completions.create(model="any", messages=HELLO, max_tokens=4, extra_body=extra)
    assert caught.value.param == param and caught.value.type == "invalid_request_error"


def test_supported_values_of_those_parameters_are_accepted(client):
    completion = client.chat.completions.create(model=model_of(client), messages=HELLO, max_tokens=4, n=1,
                                                logprobs=False, response_format={"type": "text"}, top_p=0.9,
                                                presence_penalty=0.5, seed=7, user="kitchen-panel")
    assert completion.choices[0].message.role == "assistant"
    assert completion.model == model_of(client)


def test_stop_ends_the_text_before_the_sequence(client):
    free = client.chat.completions.create(model="any", messages=HELLO, max_tokens=40, temperature=0)
    text = free.choices[0].message.content
    assert text and len(text) > 4
    stop = text[len(text) // 2: len(text) // 2 + 3]  # a sequence the model writes at temperature 0
    assert stop.strip()
    stopped = client.chat.completions.create(model="any", messages=HELLO, max_tokens=40, temperature=0,
                                             stop=[stop, "never written"])
    choice = stopped.choices[0]
    assert choice.finish_reason == "stop"
    assert stop not in (choice.message.content or "")
    assert text.startswith(choice.message.content or "")
    assert len(choice.message.content or "") <= text.index(stop)
    # the generation was halted at the stop sequence, and what it did until then is still counted
    assert stopped.usage.prompt_tokens == free.usage.prompt_tokens > 0
    assert 0 < stopped.usage.completion_tokens <= free.usage.completion_tokens


def test_streaming_honours_stop_and_ends_once(client):
    free = client.chat.completions.create(model="any", messages=HELLO, max_tokens=40, temperature=0)
    text = free.choices[0].message.content
    stop = text[len(text) // 2: len(text) // 2 + 3]
    chunks = list(client.chat.completions.create(model="any", messages=HELLO, max_tokens=40, temperature=0,
                                                 stop=stop, stream=True, stream_options={"include_usage": True}))
    streamed = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    finishes = [c.choices[0].finish_reason for c in chunks if c.choices and c.choices[0].finish_reason]
    assert finishes == ["stop"]
    assert stop not in streamed and text.startswith(streamed)
    assert len({c.id for c in chunks}) == 1
    usage = chunks[-1].usage  # a halted generation's usage still comes, last
    assert usage is not None and usage.prompt_tokens == free.usage.prompt_tokens
    assert 0 < usage.completion_tokens <= free.usage.completion_tokens


def test_streaming_with_usage(client):
    chunks = list(client.chat.completions.create(model="any", messages=HELLO, max_tokens=8, stream=True,
                                                 stream_options={"include_usage": True}))
    assert chunks[0].choices[0].delta.role == "assistant"
    assert "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert chunks[-1].usage is not None and 0 < chunks[-1].usage.completion_tokens <= 8


def test_a_required_call_over_a_huge_schema_is_refused_and_the_model_stays_free(client):
    """Issue #30 item 6: a tool schema with anyOf over 500 values and tool_choice "required" held
    the model for 30 s (then 504). It is refused with a 400 naming the tools, and the next request
    is served."""
    values = [{"const": f"value_{i}"} for i in range(500)]
    tool = {"type": "function", "function": {"name": "pick", "parameters": {
        "type": "object", "properties": {"choice": {"anyOf": values}}, "required": ["choice"]}}}
    with pytest.raises(openai.BadRequestError) as caught:
        client.chat.completions.create(model="any", messages=HELLO, max_tokens=8, tools=[tool],
                                       tool_choice="required")
    assert caught.value.param == "tools" and caught.value.code == "grammar_too_large"
    small = {"type": "function", "function": {"name": "pick", "parameters": {
        "type": "object", "properties": {"choice": {"enum": ["red", "green"]}}, "required": ["choice"]}}}
    completion = client.chat.completions.create(model="any", messages=HELLO, max_tokens=64, tools=[small],
                                                tool_choice="required")
    assert completion.choices[0].message.tool_calls[0].function.name == "pick"
