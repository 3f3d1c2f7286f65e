"""The custom file is checked whole at load time: every mistake is a clear CustomConfigError
naming the file and the key, templates cannot reach Python internals, secrets parse strictly."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from hub.custom.loader import CustomConfigError, parse_secrets
from hub.llm.types import ReasoningMode

from custom.conftest import tool_of

ROOT = Path(__file__).resolve().parents[2]


def tool_with_payload_item(template: str) -> str:
    return f"""
tools:
  craft_item:
    type: mqtt
    description: Craft an item.
    topic: game/forge/craft
    payload:
      item: {template!r}
"""


ESCAPES = [
    ("{{ args.__class__ }}", "access to '__class__' is not allowed"),
    ("{{ ''.__class__.__mro__[1].__subclasses__() }}", "is not allowed"),
    ("{{ args['__globals__'] }}", "access to '__globals__' is not allowed"),
    ("{{ args._private }}", "access to '_private' is not allowed"),
    ("{{ args|attr('__class__') }}", "No filter named 'attr'"),
    ("{{ args|map(attribute='__class__')|list }}", "attribute '__class__' is not allowed"),
    ("{{ '{0.__class__}'.format(args) }}", "access to 'format' is not allowed"),
    ("{{ self }}", "'self' is not available"),
    ("{{ cycler() }}", "unknown template variable(s) cycler"),
    ("{{ joiner() }}", "unknown template variable(s) joiner"),
    ("{{ namespace() }}", "unknown template variable(s) namespace"),
    ("{{ lipsum() }}", "unknown template variable(s) lipsum"),
    ("{{ config }}", "unknown template variable(s) config"),
    ("{{ request.environ }}", "unknown template variable(s) request"),
    ("{{ range(10) }}", "unknown template variable(s) range"),
    ("{% include 'secrets.yaml' %}", "include, import and extends are not available"),
    ("{{ args.gi_frame.f_globals }}", "access to 'gi_frame' is not allowed"),
    ("{{ args.item", "template syntax error"),
    ("{{ response.item }}", "unknown template variable(s) response"),  # requests see no response
    ("{{ secrets.nope }}", "unknown secret 'nope'"),
]


@pytest.mark.parametrize(("template", "reason"), ESCAPES, ids=[e[0] for e in ESCAPES])
def test_unsafe_or_broken_templates_are_refused_at_load_time(make_setup, template, reason):
    with pytest.raises(CustomConfigError) as caught:
        make_setup(tool_with_payload_item(template), secrets={"shop_key": "x"})
    message = str(caught.value)
    assert re.search(r"custom\.yaml: tools\.craft_item\.payload\.item: ", message), message
    assert reason in message


def test_speech_and_result_templates_cannot_use_secrets(make_setup):
    text = """
tools:
  pay:
    type: rest
    description: Pay.
    url: http://127.0.0.1:1/pay
    speech: "{{ secrets.key }}"
"""
    with pytest.raises(CustomConfigError, match=r"tools\.pay\.speech: unknown template variable\(s\) secrets"):
        make_setup(text, secrets={"key": "x"})


BAD_FILES = [
    ("tools:\n  t:\n    type: telnet\n    description: x\n", r"tools\.t\.type: unknown tool type 'telnet'"),
    ("tools:\n  Craft-Item:\n    type: mqtt\n    description: x\n    topic: a\n",
     r"tools\.Craft-Item: 'Craft-Item' is not a valid name"),
    ("tools:\n  t:\n    type: mqtt\n    description: x\n", r"tools\.t\.topic: required key not provided"),
    ("tools:\n  t:\n    type: mqtt\n    description: x\n    topic: a\n    qos: 3\n", r"tools\.t\.qos"),
    ("tools:\n  t:\n    type: mqtt\n    description: x\n    topic: a\n    colour: red\n", r"tools\.t\.colour: unknown key"),
    ("tools:\n  t:\n    type: mqtt\n    description: x\n    topic: a\n    parameters: {type: object, properties: {n: {type: integr}}}\n",
     r"tools\.t\.parameters \(properties/n/type\): not a valid JSON schema"),
    ("tools:\n  t:\n    type: mqtt\n    description: x\n    topic: a\n    parameters: {type: array}\n",
     r"tools\.t\.parameters: the arguments schema must have type: object"),
    ("tools:\n  t:\n    type: mqtt\n    description: x\n    topic: a\n  t:\n    type: mqtt\n    description: y\n    topic: b\n",
     r"'t' is defined twice"),
    ("tools:\n  t:\n    type: mqtt\n    description: x\n    topic: a\n    ack_after: 2\n",
     r"tools\.t\.ack_after: needs a response_topic"),
    ("tools:\n  s:\n    type: sequence\n    description: x\n    steps: [{tool: nowhere}]\n",
     r"tools\.s\.steps\[0\]\.tool: no tool named 'nowhere'"),
    ("tools:\n  s:\n    type: sequence\n    description: x\n    steps: [{tool: s}]\n",
     r"tools\.s\.steps\[0\]\.tool: a sequence cannot call itself"),
    ("tools:\n  a:\n    type: sequence\n    description: x\n    steps: [{tool: b}]\n"
     "  b:\n    type: sequence\n    description: x\n    steps: [{tool: a}]\n", r"in a circle: a → b → a"),
    ("tools:\n  h:\n    type: ha_service\n    description: x\n    service: turn_on\n", r"tools\.h\.service: expected domain\.service"),
    ("tools:\n  t:\n    type: mqtt\n    description: {xx: hi}\n    topic: a\n", r"tools\.t\.description: unknown language code"),
    ("personas:\n  smith:\n    name: Brom\n    instructions: Be Brom.\n    tools: [ghost]\n",
     r"personas\.smith\.tools\[0\]: no tool named 'ghost'"),
    ("personas:\n  smith:\n    name: Brom\n    instructions: Be Brom.\n    reasoning: maybe\n", r"personas\.smith\.reasoning"),
    ("personas:\n  smith:\n    name: Brom\n", r"personas\.smith\.instructions: required key not provided"),
    ("default_persona: nobody\npersonas: {}\n", r"default_persona: no persona named 'nobody'"),
    ("tools: [a, b]\n", r"tools: expected a mapping of names to entries"),
    ("tools:\n  t: [1\n", r"not valid YAML"),
]


@pytest.mark.parametrize(("text", "pattern"), BAD_FILES)
def test_bad_files_are_clear_config_errors(make_setup, text, pattern):
    with pytest.raises(CustomConfigError) as caught:
        make_setup(text)
    assert "custom.yaml: " in str(caught.value)
    assert re.search(pattern, str(caught.value)), str(caught.value)


def test_a_missing_file_is_a_clear_error(make_setup, tmp_path):
    from hub.custom.loader import ToolDeps, load_custom_file
    from hub.home.entities import EntityStore
    from hub.home.policy import ActionPolicy

    deps = ToolDeps({}, ActionPolicy(), reporter=None, entities=EntityStore())  # type: ignore[arg-type]
    with pytest.raises(CustomConfigError, match=r"nothere\.yaml: cannot read the custom file"):
        load_custom_file(tmp_path / "nothere.yaml", deps)


def test_personas_and_tools_load_with_their_fields(make_setup):
    setup = make_setup("""
default_persona: smith
personas:
  smith:
    name: Brom the blacksmith
    instructions: You are Brom.
    language: de
    conversational: false
    reasoning: budget
    reasoning_budget: 64
    greeting: Willkommen!
    satellites: [assist_satellite.forge]
    tools: [craft]
  robot:
    name: Robbie
    instructions: You are a robot.
    home: true
tools:
  craft:
    type: mqtt
    description: {en: Craft an item., de: Einen Gegenstand schmieden.}
    topic: game/craft
""", language="de")
    smith, robot = setup.personas
    assert (smith.key, smith.name, smith.language, smith.conversational) == ("smith", "Brom the blacksmith", "de", False)
    assert smith.reasoning.mode is ReasoningMode.BUDGET and smith.reasoning.budget == 64
    assert smith.tools == ("craft",) and smith.satellites == ("assist_satellite.forge",)
    assert smith.greeting == "Willkommen!" and smith.home is False
    assert robot.home is True and robot.tools == () and robot.reasoning is None
    assert setup.default_persona == "smith"
    craft = tool_of(setup, "craft")
    assert craft.spec.description == "Einen Gegenstand schmieden."  # the configured language
    assert craft.descriptions["en"] == "Craft an item."  # the mapping is kept
    assert craft.spec.parameters["type"] == "object"


def test_the_docs_example_loads(make_setup):
    docs = (ROOT / "DOCS.md").read_text(encoding="utf-8")
    section = docs.split("## Personas and your own tools", 1)[1]
    example = section.split("```yaml\n", 1)[1].split("```", 1)[0]
    setup = make_setup(example, secrets={"shop_key": "abc"})
    assert {t.spec.name for t in setup.tools} == {
        "check_payment", "craft_item", "weather", "forge_light", "robot_wave", "forge_order"}


def test_parse_secrets():
    assert parse_secrets(None) == {} and parse_secrets("") == {}
    assert parse_secrets("shop_key=abc=123; token = xyz \n\nother=1;") == {
        "shop_key": "abc=123", "token": "xyz", "other": "1"}


@pytest.mark.parametrize(("text", "pattern"), [
    ("novalue", r"entry 1 is not name=value"),
    ("a=1;bad name=2", r"entry 2 is not name=value"),
    ("a=1;a=2", r"'a' is given twice"),
    ("a=", r"'a' has an empty value"),
])
def test_bad_secrets_are_clear_errors_that_never_echo_a_value(text, pattern):
    with pytest.raises(CustomConfigError, match=pattern) as caught:
        parse_secrets(text)
    assert "tool_secrets" in str(caught.value)
    assert "2" not in str(caught.value).replace("entry 2", "")  # no value in the message
