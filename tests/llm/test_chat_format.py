"""Prompt rendering: the GGUF's own template, the built-in formats, and prefix stability."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from hub.llm.builtin_formats import ChatMLFormat, Gemma3Format, Gemma4Format
from hub.llm.chat_format import ChatFormat
from hub.llm.inspect import inspect_gguf
from hub.llm.template_format import TemplateChatFormat, chat_format_for
from hub.core.messages import Message, ToolCall, ToolSpec
from hub.llm.types import EngineError

TURN_ON = ToolSpec(
    "turn_on",
    "Turn a device on",
    {"type": "object", "properties": {"entity_id": {"type": "string", "description": "the device"}},
     "required": ["entity_id"]},
)
SET_LIGHT = ToolSpec(
    "set_light",
    "Set a light",
    {"type": "object",
     "properties": {"entity_id": {"type": "string"}, "brightness": {"type": "integer", "description": "0-100"},
                    "mode": {"type": "string", "enum": ["warm", "cold"]}},
     "required": ["entity_id"]},
)

# A minimal template in the shape of tool-aware HF templates: it reads tools, tool_calls,
# role "tool" and enable_thinking, and a conversational switch.
NATIVE_TEMPLATE = """{{ bos_token }}{% if tools %}[TOOLS]{{ tools | tojson }}[/TOOLS]{% endif %}
{%- if conversational_mode is defined and conversational_mode %}[CHATTY]{% endif %}
{%- for m in messages %}
{%- if m.role == 'tool' %}[RESULT {{ m.tool_call_id }}]{{ m.content }}[/RESULT]
{%- else %}[{{ m.role }}]{{ m.content }}{% if m.tool_calls %}{% for c in m.tool_calls %}[CALL {{ c.id }}]{{ c.function.name }}{{ c.function.arguments | tojson }}{% endfor %}{% endif %}[/{{ m.role }}]
{%- endif %}{% endfor %}
{%- if add_generation_prompt %}[assistant]{% if enable_thinking %}<think>{% endif %}{% endif %}"""

# Gemma 2 style: no system role, roles must alternate.
STRICT_TEMPLATE = """{{ bos_token }}{% if messages[0]['role'] == 'system' %}{{ raise_exception('System role not supported') }}{% endif %}
{%- for m in messages %}{% if (m['role'] == 'user') != (loop.index0 % 2 == 0) %}{{ raise_exception('roles must alternate') }}{% endif %}
{{- '<start_of_turn>' + ('model' if m['role'] == 'assistant' else m['role']) + '\n' + m['content'] + '<end_of_turn>\n' }}{% endfor %}
{%- if add_generation_prompt %}<start_of_turn>model\n{% endif %}"""


@pytest.fixture(scope="module")
def smollm_format(smollm_path: Path) -> ChatFormat:
    report = inspect_gguf(smollm_path)
    return chat_format_for(report.metadata, bos_token="<|im_start|>", eos_token="<|im_end|>")


def conversation() -> list[Message]:
    """A turn with a tool round trip, then a follow-up question."""
    return [
        Message("system", "You control a home."),
        Message("user", "Turn on the kitchen light"),
        Message("assistant", "", tool_calls=[ToolCall("turn_on", {"entity_id": "light.kitchen"}, "call_1")]),
        Message("tool", json.dumps({"ok": True, "state": "on"}), name="turn_on", tool_call_id="call_1"),
        Message("assistant", "The kitchen light is on."),
        Message("user", "And the hall?"),
    ]


# --- the GGUF's own template -----------------------------------------------------------------


def test_smollm_renders_through_its_embedded_chatml_template(smollm_format: ChatFormat) -> None:
    assert isinstance(smollm_format, TemplateChatFormat)
    prompt = smollm_format.render([Message("system", "Be brief."), Message("user", "Hi")])
    assert prompt.text == (
        "<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n"
    )
    assert not prompt.starts_in_thinking
    assert "<|im_end|>" in smollm_format.stop
    # without a system message the template adds its own default one
    assert smollm_format.render([Message("user", "Hi")]).text.startswith(
        "<|im_start|>system\nYou are a helpful AI assistant named SmolLM"
    )


def test_template_without_tool_support_gets_tools_and_results_as_text(smollm_format: ChatFormat) -> None:
    caps = smollm_format.capabilities
    assert not caps.native_tools and not caps.thinking_switch
    text = smollm_format.render(conversation(), [TURN_ON]).text
    system = text.split("<|im_end|>")[0]
    assert system.startswith("<|im_start|>system\nYou control a home.")
    assert '"name": "turn_on"' in system and "<tool_call>" in system
    assert ('<|im_start|>assistant\n<tool_call>{"name": "turn_on", "arguments": {"entity_id": "light.kitchen"}}'
            "</tool_call><|im_end|>") in text
    # the result is a user-side message, the one role the template is sure to know
    assert '<|im_start|>user\n<tool_response>{"name": "turn_on", "result": {"ok": true, "state": "on"}}' in text
    assert "<|im_start|>tool" not in text
    assert smollm_format.constrained_call_prefix == "<tool_call>"


def test_thinking_forced_open_when_the_template_has_no_switch(smollm_format: ChatFormat) -> None:
    prompt = smollm_format.render([Message("user", "Why?")], thinking=True)
    assert prompt.text.endswith("<|im_start|>assistant\n<think>\n")
    assert prompt.starts_in_thinking
    assert smollm_format.close_thinking.startswith("</think>")


def test_native_template_gets_tools_calls_and_switches_in_openai_shape() -> None:
    fmt = TemplateChatFormat.from_template(NATIVE_TEMPLATE, bos_token="<s>", eos_token="</s>")
    caps = fmt.capabilities
    assert caps.native_tools and caps.thinking_switch and caps.conversational_variable == "conversational_mode"
    text = fmt.render(conversation(), [TURN_ON], thinking=True, conversational=True).text
    assert text.startswith('<s>[TOOLS][{"type": "function", "function": {"name": "turn_on"')
    assert "[CHATTY]" in text
    assert '[CALL call_1]turn_on{"entity_id": "light.kitchen"}' in text
    assert '[RESULT call_1]{"ok": true, "state": "on"}[/RESULT]' in text
    assert text.endswith("[assistant]<think>")
    off = fmt.render(conversation(), [TURN_ON], thinking=False, conversational=False).text
    assert not off.endswith("<think>") and "[CHATTY]" not in off
    # the switch is the template's: no marker is forced on top of it
    assert fmt.render(conversation(), thinking=True).starts_in_thinking


def test_template_without_system_role_gets_the_system_text_in_the_first_user_turn() -> None:
    fmt = TemplateChatFormat.from_template(STRICT_TEMPLATE, bos_token="<bos>")
    assert not fmt.capabilities.system_role
    text = fmt.render([Message("system", "Rules."), Message("user", "Hi"), Message("user", "Still there?")]).text
    assert text == "<bos><start_of_turn>user\nRules.\n\nHi\n\nStill there?<end_of_turn>\n<start_of_turn>model\n"


def test_invalid_template_and_empty_conversation_are_clear_errors(smollm_format: ChatFormat) -> None:
    with pytest.raises(EngineError, match="not valid Jinja"):
        TemplateChatFormat.from_template("{% for m in messages %}")
    with pytest.raises(EngineError, match="empty message list"):
        smollm_format.render([])


def test_template_runs_sandboxed() -> None:
    fmt = TemplateChatFormat.from_template("{{ messages.__class__.__mro__[1].__subclasses__() }}")
    with pytest.raises(EngineError):
        fmt.render([Message("user", "x")])


# --- built-in formats ------------------------------------------------------------------------


def test_no_template_picks_the_architecture_format_never_llama2() -> None:
    assert isinstance(chat_format_for({"general.architecture": "gemma3"}), Gemma3Format)
    assert isinstance(chat_format_for({"general.architecture": "gemma3n"}), Gemma3Format)
    assert isinstance(chat_format_for({"general.architecture": "gemma4"}), Gemma4Format)
    assert isinstance(chat_format_for({"general.architecture": "qwen3"}), ChatMLFormat)
    for arch in ("gemma3", "gemma4", "llama", ""):
        text = chat_format_for({"general.architecture": arch}).render([Message("user", "Hi")]).text
        assert "[INST]" not in text and "<<SYS>>" not in text


def test_gemma3_turns_fold_the_system_text_and_alternate() -> None:
    text = Gemma3Format().render(conversation(), [TURN_ON]).text
    turns = text.split("<end_of_turn>\n")
    assert turns[0].startswith("<start_of_turn>user\nYou control a home.\n\nYou can call these tools.")
    assert turns[0].endswith("\n\nTurn on the kitchen light")
    assert turns[1] == (
        '<start_of_turn>model\n<tool_call>{"name": "turn_on", "arguments": {"entity_id": "light.kitchen"}}</tool_call>'
    )
    assert turns[2].startswith("<start_of_turn>user\n<tool_response>")
    assert turns[3] == "<start_of_turn>model\nThe kitchen light is on."
    assert turns[4] == "<start_of_turn>user\nAnd the hall?"
    assert turns[5] == "<start_of_turn>model\n"
    roles = [t.split("\n")[0] for t in turns[:-1]]
    assert all(a != b for a, b in zip(roles, roles[1:])), roles


def test_gemma3_exact_prompt() -> None:
    text = Gemma3Format().render([Message("system", "Be brief."), Message("user", "Hi")]).text
    assert text == "<start_of_turn>user\nBe brief.\n\nHi<end_of_turn>\n<start_of_turn>model\n"


def test_gemma4_builtin_format() -> None:
    fmt = Gemma4Format()
    assert (fmt.think_open, fmt.think_close) == ("<|channel>thought", "<channel|>")
    text = fmt.render(conversation(), [TURN_ON, SET_LIGHT]).text
    assert text.startswith("<|turn>system\nYou control a home.<|tool>declaration:turn_on{")
    assert ('<|tool>declaration:turn_on{description:<|"|>Turn a device on<|"|>,parameters:{properties:{'
            'entity_id:{description:<|"|>the device<|"|>,type:<|"|>STRING<|"|>}},required:[<|"|>entity_id<|"|>],'
            'type:<|"|>OBJECT<|"|>}}<tool|>') in text
    assert 'mode:{enum:[<|"|>warm<|"|>,<|"|>cold<|"|>],type:<|"|>STRING<|"|>}' in text
    # call and result share the model turn, and the answer follows in the same turn
    assert ('<|turn>model\n<|tool_call>call:turn_on{entity_id:<|"|>light.kitchen<|"|>}<tool_call|>'
            '<|tool_response>response:turn_on{ok:true,state:<|"|>on<|"|>}<tool_response|>'
            "The kitchen light is on.<turn|>\n") in text
    assert text.endswith("<|turn>user\nAnd the hall?<turn|>\n<|turn>model\n<|channel>thought\n<channel|>")
    thinking = fmt.render(conversation(), [TURN_ON], thinking=True)
    assert thinking.text.startswith("<|turn>system\n<|think|>You control a home.")
    assert thinking.text.endswith("<|turn>model\n") and not thinking.starts_in_thinking


def test_gemma4_generation_right_after_tool_results_continues_the_model_turn() -> None:
    messages = conversation()[:4]
    text = Gemma4Format().render(messages).text
    assert text.endswith("<tool_response|><|channel>thought\n<channel|>")
    assert text.count("<|turn>model\n") == 1


def test_gemma4_drops_earlier_thinking_from_history() -> None:
    messages = [Message("user", "Hi"), Message("assistant", "<|channel>thought\nhmm<channel|>Hello!"),
                Message("user", "Bye")]
    text = Gemma4Format().render(messages).text
    assert "hmm" not in text and "<|turn>model\nHello!<turn|>" in text


# --- determinism and prefix stability -------------------------------------------------------


def all_formats(smollm_format: ChatFormat) -> list[ChatFormat]:
    return [
        smollm_format,
        TemplateChatFormat.from_template(NATIVE_TEMPLATE, bos_token="<s>"),
        ChatMLFormat(),
        Gemma3Format(),
        Gemma4Format(),
    ]


@pytest.mark.parametrize("thinking", [False, True])
def test_same_first_messages_give_the_same_leading_text(smollm_format: ChatFormat, thinking: bool) -> None:
    """Prefix reuse depends on it: the stable start may never change with what follows."""
    base = conversation()
    tools = [TURN_ON, SET_LIGHT]
    continuations = [
        [],
        [Message("user", "Turn it on")],
        [Message("assistant", "", tool_calls=[ToolCall("turn_on", {"entity_id": "light.hall"}, "call_2")]),
         Message("tool", '{"ok": true}', name="turn_on", tool_call_id="call_2")],
    ]
    for fmt in all_formats(smollm_format):
        renders = []
        for cut in range(2, len(base) + 1):
            head = fmt.render(base[:cut], tools, thinking=thinking, add_generation_prompt=False).text
            for more in continuations:
                full = fmt.render(base[:cut] + more, tools, thinking=thinking).text
                assert full == fmt.render(base[:cut] + more, tools, thinking=thinking).text
                renders.append(full)
                merged = more and (more[0].role == base[cut - 1].role
                                   or {more[0].role, base[cut - 1].role} == {"user", "tool"})
                if not merged:
                    assert full.startswith(head), (fmt.name, cut, more)
        # instructions and every tool declaration lead every prompt, byte for byte
        common = os.path.commonprefix(renders)
        assert "You control a home." in common and "set_light" in common and "turn_on" in common, fmt.name


# A template in Gemma 4's shape (results ride on the model message that made the call).
GEMMA4_SHAPED_TEMPLATE = """{{ bos_token }}<|turn>system
{% if enable_thinking %}<|think|>{% endif %}{% for t in tools or [] %}<|tool>{{ t.function.name }}<tool|>{% endfor %}<turn|>
{% for m in messages %}{% if m.role == 'assistant' %}<|turn>model
{% for c in m.tool_calls or [] %}<|tool_call>call:{{ c.function.name }}{{ c.function.arguments | tojson }}<tool_call|>{% endfor %}
{%- for r in m.tool_responses or [] %}<|tool_response>response:{{ r.name }}{{ r.response | tojson }}<tool_response|>{% endfor %}
{{- m.content }}{% if not (m.tool_responses and not m.content) %}<turn|>
{% endif %}{% else %}<|turn>{{ m.role }}
{{ m.content }}<turn|>
{% endif %}{% endfor %}{% if add_generation_prompt %}{% if not (messages[-1].tool_responses and not messages[-1].content) %}<|turn>model
{% endif %}{% if not enable_thinking %}<|channel>thought
<channel|>{% endif %}{% endif %}"""


def test_gemma4_shaped_template_gets_results_in_the_calling_model_turn() -> None:
    fmt = TemplateChatFormat.from_template(GEMMA4_SHAPED_TEMPLATE, bos_token="<bos>")
    assert fmt.capabilities.native_tools and fmt.capabilities.thinking_switch
    assert (fmt.think_open, fmt.think_close) == ("<|channel>thought", "<channel|>")
    assert "<|tool_response>" in fmt.stop and "<turn|>" in fmt.stop
    text = fmt.render(conversation(), [TURN_ON]).text
    assert ('<|turn>model\n<|tool_call>call:turn_on{"entity_id": "light.kitchen"}<tool_call|>'
            '<|tool_response>response:turn_on{"ok": true, "state": "on"}<tool_response|>'
            "The kitchen light is on.<turn|>\n<|turn>user\nAnd the hall?") in text
    pending = fmt.render(conversation()[:4], [TURN_ON]).text
    assert pending.endswith("<tool_response|><|channel>thought\n<channel|>")
    assert fmt.render(conversation(), [TURN_ON], thinking=True).text.startswith("<bos><|turn>system\n<|think|>")
