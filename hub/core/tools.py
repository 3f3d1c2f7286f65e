"""The one interface every tool implements, and the registry the agent calls tools through."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any, Collection, Protocol

import jsonschema
from jsonschema.exceptions import best_match

from hub.core.messages import ToolCall, ToolSpec

_LOGGER = logging.getLogger(__name__)


@dataclass(frozen=True)
class ToolContext:
    """Who asked: passed to every tool so it can localize, log and report back."""

    conversation_id: str
    language: str = "en"
    source: str = "cli"  # cli | wyoming | mqtt | rest | fast_path
    satellite_id: str | None = None
    device_id: str | None = None
    persona: str | None = None  # None: the default persona (see hub.agent.personas)
    client: str | None = None  # who asked (TurnRequest.client): a confirmation must come from them
    request: str | None = None  # the turn it belongs to: one yes confirms a turn's held calls together
    area: str | None = None  # the speaker's area, as the home's entities name it (hub.home.places)
    floor: str | None = None  # the floor of the speaker's area, when the home has floors
    # a plan, not a turn: ToolRegistry.call validates, and a tool that `previews` goes as far as
    # its action and says what it would do (WouldCall); any other tool is not run at all
    dry_run: bool = False


@dataclass
class ToolResult:
    """A tool's outcome. `data` goes back to the model as JSON.

    `speech` is a short localized sentence for the user (used by the fast path and when the
    model is not asked to phrase the answer). `pending` marks an acknowledged action whose real
    outcome is reported later.
    """

    ok: bool
    data: dict[str, Any] = field(default_factory=dict)
    speech: str | None = None
    pending: bool = False
    changed_entities: tuple[str, ...] = ()


# A client named by what a bystander can read (an MQTT ask's fields) is only *announced*:
# "<route>:commit:<sha256 of a secret>". It proves itself with the secret: "<route>:key:<the same
# sha256>". An announced identity never confirms, not even its own held action.
ANNOUNCED, PROVEN = ":commit:", ":key:"


def may_confirm(asked: str | None, answering: str | None) -> bool:
    """Whether `answering` may confirm what was held for `asked` (TurnRequest.client values)."""
    if answering is not None and ANNOUNCED in answering:
        return False
    if asked is not None and ANNOUNCED in asked:
        return answering is not None and asked == answering.replace(PROVEN, ANNOUNCED, 1)
    return asked == answering


def same_client(identity: str) -> str:
    """One name for an announced client and its proof (to continue its conversation)."""
    return identity.replace(PROVEN, ANNOUNCED, 1)


class Tool(Protocol):
    spec: ToolSpec  # its entity_args: the arguments constrained decoding offers candidates for

    @property
    def changes_home(self) -> bool | None:
        """True: it acts on a device (questions and a stand-in model are never offered it);
        False: it only reads the home; None: neither (timers, a user's own tools)."""
        ...

    @property
    def domains(self) -> frozenset[str] | None:
        """The domains it can act on (None: any)."""
        ...

    @property
    def previews(self) -> bool:
        """In a dry run (ToolContext.dry_run) it runs up to its action and raises WouldCall there;
        a tool that does not preview is not run at all in a dry run."""
        ...

    def offered(self) -> bool:
        """Whether the model is told of it now: not while it could do nothing in this home (no
        device of its domains, no timer to change). Every tool's schema is prompt the model
        reads on every turn, and on a small machine each token of it costs time."""
        ...

    async def execute(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult: ...


class ToolTraits:
    """The traits of a tool that neither acts on a device nor only reads the home (a base class)."""

    changes_home: bool | None = None
    domains: frozenset[str] | None = None
    previews = False  # not run in a dry run

    def offered(self) -> bool:
        return True


class WouldCall(Exception):
    """Raised by a previewing tool in a dry run where it would act: what it would do, and what
    the policy would say (ActionPolicy.verdict: allowed | confirm), nothing done."""

    def __init__(self, entity_id: str, service: str, data: dict[str, Any], verdict: str,
                 changes: bool, question: str | None = None) -> None:
        super().__init__(f"would call {service} on {entity_id}")
        self.details: dict[str, Any] = {"entity_id": entity_id, "service": service, "service_data": data,
                                        "verdict": verdict, "changes": changes}
        if question is not None:
            self.details["question"] = question


class ToolError(Exception):
    """A call the hub refuses or cannot carry out; its message goes back to the model/user."""

    def __init__(self, message: str, code: str = "error", **details: Any) -> None:
        super().__init__(message)
        self.code = code
        self.details = details


class ToolRegistry:
    def __init__(self) -> None:
        self._tools: dict[str, Tool] = {}
        # one checked validator per tool: `jsonschema.validate` re-checks the schema every call
        self._validators: dict[str, jsonschema.Draft202012Validator] = {}

    def register(self, tool: Tool) -> None:
        missing = [trait for trait in ("changes_home", "domains", "previews", "offered") if not hasattr(tool, trait)]
        if missing:  # a test's or a plugin's tool: say what it lacks now, not in some later turn
            raise TypeError(f"tool {tool.spec.name!r} declares no {' or '.join(missing)} (see ToolTraits)")
        if tool.spec.name in self._tools:
            raise ValueError(f"tool {tool.spec.name!r} registered twice")
        jsonschema.Draft202012Validator.check_schema(tool.spec.parameters)
        self._tools[tool.spec.name] = tool
        self._validators[tool.spec.name] = jsonschema.Draft202012Validator(tool.spec.parameters)

    def get(self, name: str) -> Tool | None:
        return self._tools.get(name)

    def names(self) -> list[str]:
        return list(self._tools)

    def device_actions(self, domains: Collection[str] | None = None) -> frozenset[str]:
        """Names of the tools that act on devices (`changes_home`); with `domains`, only those
        that can act on one of them (a tool's optional `domains`; none declared: any)."""
        def fits(tool: Tool) -> bool:
            return domains is None or tool.domains is None or not tool.domains.isdisjoint(domains)
        return frozenset(n for n, t in self._tools.items() if t.changes_home and fits(t))

    def offered(self, names: Collection[str] | None = None) -> list[str]:
        """Of `names` (None: all), those the model is told of now (`Tool.offered`)."""
        return [n for n in (self._tools if names is None else names) if n in self._tools and self._tools[n].offered()]

    def specs(self, names: list[str] | None = None) -> list[ToolSpec]:
        chosen = self._tools if names is None else {n: self._tools[n] for n in names if n in self._tools}
        return [t.spec for t in chosen.values()]

    async def call(self, call: ToolCall, ctx: ToolContext, allowed: Collection[str] | None = None) -> ToolResult:
        """Validate and run one call. Never raises for bad calls: errors become results.

        `allowed` limits the call to the tools of the caller's persona (None: any tool).
        """
        tool = self._tools.get(call.name)
        if tool is not None and allowed is not None and call.name not in allowed:
            return ToolResult(
                ok=False,
                data={"error": "tool_not_allowed",
                      "message": f"The tool {call.name!r} is not available here.",
                      "available": [n for n in self.names() if n in allowed]},
            )
        if tool is None:
            return ToolResult(
                ok=False,
                data={"error": "unknown_tool", "message": f"No tool named {call.name!r}.",
                      "available": [n for n in self.names() if allowed is None or n in allowed]},
            )
        invalid = best_match(self._validators[call.name].iter_errors(call.arguments))
        if invalid is not None:
            return ToolResult(
                ok=False,
                data={"error": "invalid_arguments", "message": invalid.message,
                      "path": "/".join(str(p) for p in invalid.absolute_path)},
            )
        if ctx.dry_run and not tool.previews:
            # a tool that cannot tell what it would do is not run in a plan (a timer, a custom tool)
            return ToolResult(ok=True, data={"dry_run": True, "verdict": "unchecked"})
        try:
            return await tool.execute(call.arguments, ctx)
        except WouldCall as would:
            return ToolResult(ok=True, data={"dry_run": True, **would.details})
        except ToolError as err:
            return ToolResult(ok=False, data={"error": err.code, "message": str(err), **err.details})
        except Exception as err:  # a tool bug must not end the turn
            _LOGGER.exception("tool %s failed", call.name)
            return ToolResult(ok=False, data={"error": "tool_failed", "message": str(err)})
