"""Constrained decoding for small models: the output must be one call to an allowed tool,
or (when the constraint allows it) an answer in words.

From the live ToolSpecs and a ToolConstraint we build a JSON schema
`{"name": <const>, "arguments": {...}}`, one alternative per allowed tool (`anyOf`), where every
entity argument (`ToolSpec.entity_args`) is an enum of the candidate entity ids; llama-cpp-python turns it into a GBNF
grammar (`LlamaGrammar.from_json_schema`). Pass it to generation as `grammar=`
(llama-cpp-python ignores a `json_schema` argument silently). With `constraint.answer` one more
alternative, `{"name": "answer", "arguments": {"text": …}}`, lets the model reply in words, so a
question or a chat is never forced into a device action; `constrained_delta` turns it into text.
"""

from __future__ import annotations

import copy
import json
from typing import Any, Sequence

from llama_cpp.llama_grammar import LlamaGrammar

from hub.core.messages import ToolCall, ToolSpec
from hub.llm.types import Delta, EngineError, MalformedToolCall, TextDelta, ToolCallDelta, ToolConstraint

ANSWER = "answer"  # the grammar's name for "no call: say this"
_ANSWER_ALTERNATIVE = {
    "type": "object",
    "properties": {"name": {"const": ANSWER}, "arguments": {
        "type": "object", "properties": {"text": {"type": "string", "minLength": 1}},
        "required": ["text"], "additionalProperties": False}},
    "required": ["name", "arguments"],
    "additionalProperties": False,
}


def _entity_argument(schema: dict[str, Any], entity_ids: list[str]) -> dict[str, Any]:
    """An entity argument restricted to the candidates (a string, or a list of strings)."""
    kinds = schema.get("type")
    if kinds == "array" or (isinstance(kinds, list) and "array" in kinds):
        return {"type": "array", "items": {"type": "string", "enum": entity_ids}, "minItems": 1}
    restricted = {"type": "string", "enum": entity_ids}
    if schema.get("description"):
        restricted["description"] = schema["description"]
    return restricted


def _arguments_schema(
    spec: ToolSpec, entity_ids: list[str], keep_optional: bool
) -> dict[str, Any] | None:
    """The tool's argument schema with entity enums; None when the tool cannot be called."""
    parameters = copy.deepcopy(spec.parameters) or {"type": "object", "properties": {}}
    properties: dict[str, Any] = parameters.get("properties", {})
    required = list(parameters.get("required", []))
    kept: dict[str, Any] = {}
    for name, schema in properties.items():
        if name in spec.entity_args:
            if not entity_ids:
                if name in required:
                    return None  # nothing it may act on
                continue
            kept[name] = _entity_argument(schema, entity_ids)
        elif keep_optional or name in required:
            kept[name] = schema
    return {
        "type": "object",
        "properties": kept,
        "required": [name for name in required if name in kept],
        "additionalProperties": False,
    }


def tool_call_schema(
    tools: Sequence[ToolSpec],
    constraint: ToolConstraint,
    *,
    keep_optional: bool = True,
) -> dict[str, Any]:
    """JSON schema of one call to one of `constraint.tool_names` (in the order of `tools`).

    `keep_optional=False` drops optional non-entity arguments (for models too small to fill
    them sensibly).
    """
    allowed = set(constraint.tool_names)
    entity_ids = list(dict.fromkeys(constraint.entity_ids))
    alternatives = []
    for spec in tools:
        if spec.name not in allowed:
            continue
        arguments = _arguments_schema(spec, entity_ids, keep_optional)
        if arguments is None:
            continue
        alternatives.append(
            {
                "type": "object",
                "properties": {"name": {"const": spec.name}, "arguments": arguments},
                "required": ["name", "arguments"],
                "additionalProperties": False,
            }
        )
    if constraint.answer:
        alternatives.append(_ANSWER_ALTERNATIVE)
    if not alternatives:
        offered = ", ".join(constraint.tool_names) or "none"
        raise EngineError(
            f"constrained tool call impossible: no allowed tool ({offered}) is known and callable "
            f"with the {len(entity_ids)} candidate entities"
        )
    return alternatives[0] if len(alternatives) == 1 else {"anyOf": alternatives}


def tool_call_grammar(
    tools: Sequence[ToolSpec],
    constraint: ToolConstraint,
    *,
    keep_optional: bool = True,
) -> LlamaGrammar:
    schema = tool_call_schema(tools, constraint, keep_optional=keep_optional)
    try:
        return LlamaGrammar.from_json_schema(json.dumps(schema), verbose=False)
    except Exception as err:  # the converter raises plain exceptions for schemas it cannot express
        raise EngineError(f"cannot build a grammar for the tool schemas: {err}") from None


def constrained_delta(text: str, call_id: str, stop_reason: str) -> Delta:
    """The JSON a grammar-bound generation wrote → its call, its answer in words, or (cut short
    or unreadable) a MalformedToolCall."""
    try:
        data = json.loads(text.strip())
    except (ValueError, RecursionError) as err:
        return MalformedToolCall(raw=text, error=f"constrained call unreadable ({stop_reason}): {err}")
    if not isinstance(data, dict) or not isinstance(data.get("name"), str) or not isinstance(
        data.get("arguments"), dict
    ):
        return MalformedToolCall(raw=text, error=f"constrained call unreadable ({stop_reason}): "
                                                 "expected {\"name\": ..., \"arguments\": {...}}")
    if data["name"] == ANSWER and isinstance(data["arguments"].get("text"), str):
        return TextDelta(data["arguments"]["text"])
    return ToolCallDelta(ToolCall(data["name"], data["arguments"], call_id))
