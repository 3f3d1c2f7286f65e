"""The tool types a user declares in YAML: mqtt, rest, ha_service, ha_script, sequence.

Each is a `CustomTool` (`tool_base`) and satisfies `hub.core.tools.Tool`. The registry validates
arguments against the declared schema before `execute` runs, so nothing is published for bad
arguments. Every outcome is a ToolResult: failures carry `error`, a spoken `message` in the
request's language and the same sentence as `speech`. Secrets are rendered into requests only:
result and speech templates cannot see them, and any secret value a peer echoes back is masked
in results and reports.
"""

from __future__ import annotations

import asyncio
import json
import logging
from dataclasses import dataclass
from typing import Any, Awaitable, Callable, Mapping

import aiohttp
import jsonschema

from hub.custom.templates import CompiledTemplate, TemplateRenderError, render_tree
from hub.custom.tool_base import CustomTool, failure_result, redact
from hub.home.entities import Entity
from hub.backends.ha.client import HAAuthError, HAError, HAUnavailable
from hub.core.speech import speech_of
from hub.core.tools import ToolContext, ToolError, ToolResult
from hub.transport.mqtt_subscriptions import MqttMessage
from hub.core.messages import ToolCall
from hub.locales import phrase

_LOGGER = logging.getLogger(__name__)
# targets Home Assistant expands into entities the hub never sees (so the policy could not check them)
UNSEEN_TARGETS = ("area_id", "device_id", "floor_id", "label_id")


def parse_payload(payload: bytes) -> Any:
    """JSON when it is JSON, else the text."""
    text = payload.decode("utf-8", errors="replace")
    try:
        return json.loads(text)
    except ValueError:
        return text


# --- mqtt ------------------------------------------------------------------------------------------


class MqttTool(CustomTool):
    """Publish a templated payload; optionally wait for the response carrying this call's id.

    With `ack_after`, a response slower than that turns the call into an acknowledged one
    (ToolResult.pending) and the response is reported when it comes (or the timeout is).
    """

    def __init__(self, *, topic: CompiledTemplate, payload: Any, qos: int, retain: bool,
                 response_topic: CompiledTemplate | None, correlation: str | None,
                 timeout: float, ack_after: float | None, acknowledgement: CompiledTemplate | None,
                 **common: Any) -> None:
        super().__init__(**common)
        self.topic = topic
        self.payload = payload  # template tree, or None: the arguments (plus the correlation id)
        self.qos = qos
        self.retain = retain
        self.response_topic = response_topic
        self.correlation = correlation
        self.timeout = timeout
        self.ack_after = ack_after
        self.acknowledgement = acknowledgement
        self._tasks: set[asyncio.Task[None]] = set()

    async def run(self, args: dict[str, Any], ctx: ToolContext, call_id: str,
                  background: bool) -> ToolResult:
        client = self.deps.mqtt
        if client is None or not client.connected:
            raise self.failed(ctx, "mqtt_unavailable", "tool.unavailable")
        variables = self.variables(args, ctx, call_id)
        topic = self.topic.render(variables)
        payload = self._payload(variables, args, call_id)
        if self.response_topic is None:
            if not client.publish(topic, payload, qos=self.qos, retain=self.retain):
                raise self.failed(ctx, "mqtt_unavailable", "tool.unavailable")
            return self.answer(variables, None)
        response: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        unsubscribe = await client.subscribe(
            self.response_topic.render(variables), self._matcher(call_id, response), qos=1)
        handed_over = False  # to the task that waits for a late response: it unsubscribes then
        try:
            if not client.publish(topic, payload, qos=self.qos, retain=self.retain):
                raise self.failed(ctx, "mqtt_unavailable", "tool.unavailable")
            ack_after = self.ack_after if background and self.ack_after is not None \
                and self.ack_after < self.timeout else None
            try:
                received = await asyncio.wait_for(asyncio.shield(response),
                                                  self.timeout if ack_after is None else ack_after)
            except asyncio.TimeoutError:
                if ack_after is None:
                    raise self.failed(ctx, "timeout", "tool.timeout", timeout_s=self.timeout) from None
                task = asyncio.ensure_future(self._report_later(
                    response, unsubscribe, variables, ctx, self.timeout - ack_after))
                handed_over = True
                self._tasks.add(task)
                task.add_done_callback(self._tasks.discard)
                return self._acknowledged(variables, ctx, call_id)
            return self.answer(variables, received)
        finally:
            if not handed_over:
                unsubscribe()

    def _payload(self, variables: Mapping[str, Any], args: dict[str, Any], call_id: str) -> Any:
        payload = dict(args) if self.payload is None else render_tree(self.payload, variables)
        if self.correlation and isinstance(payload, dict):
            payload.setdefault(self.correlation, call_id)
        return payload

    def _matcher(self, call_id: str, response: asyncio.Future[Any]) -> Callable[[MqttMessage], Awaitable[None]]:
        async def on_message(message: MqttMessage) -> None:
            data = parse_payload(message.payload)
            if self.correlation and (not isinstance(data, dict) or str(data.get(self.correlation)) != call_id):
                return  # another call's response
            if not response.done():
                response.set_result(data)
        return on_message

    def _acknowledged(self, variables: Mapping[str, Any], ctx: ToolContext, call_id: str) -> ToolResult:
        seen = {k: v for k, v in variables.items() if k != "secrets"}
        speech = (self.acknowledgement.render(seen) if self.acknowledgement is not None
                  else phrase(ctx.language, "tool.waiting", name=self.spoken_name(ctx.language)))
        return ToolResult(ok=True, pending=True, speech=speech,
                          data={"status": "pending", "id": call_id,
                                "instruction": "Tell the user it is under way; the outcome is reported later."})

    async def _report_later(self, response: asyncio.Future[Any], unsubscribe: Callable[[], None],
                            variables: Mapping[str, Any], ctx: ToolContext, remaining: float) -> None:
        call_id = variables["id"]
        try:
            try:
                received = await asyncio.wait_for(response, remaining)
            except asyncio.TimeoutError:
                result = failure_result(self.failed(ctx, "timeout", "tool.timeout", timeout_s=self.timeout))
            else:
                try:
                    result = self.answer(variables, received)
                except TemplateRenderError as err:
                    result = failure_result(self.failed(ctx, "template_error", detail=str(err)))
            result = self.mask(result)
            text = speech_of(result, ctx.language)
            await self.deps.reporter(ctx, text, "action",
                                     {"tool": self.name, "id": call_id, "ok": result.ok, **result.data})
        except Exception:
            _LOGGER.exception("could not report the late answer of %s", self.name)
        finally:
            unsubscribe()

    async def close(self) -> None:
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)


# --- rest ------------------------------------------------------------------------------------------


class RestTool(CustomTool):
    """An HTTP request with a templated URL, headers and body; the response becomes the result."""

    def __init__(self, *, method: str, url: CompiledTemplate, headers: dict[str, CompiledTemplate],
                 body: Any, timeout: float, result_path: tuple[str, ...] | None, verify_ssl: bool,
                 **common: Any) -> None:
        super().__init__(**common)
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
        self.timeout = timeout
        self.result_path = result_path
        self.verify_ssl = verify_ssl

    async def run(self, args: dict[str, Any], ctx: ToolContext, call_id: str,
                  background: bool) -> ToolResult:
        variables = self.variables(args, ctx, call_id)
        url = str(self.url.render(variables))
        headers = {k: str(t.render(variables)) for k, t in self.headers.items()}
        body = render_tree(self.body, variables)
        request: dict[str, Any] = {}
        if isinstance(body, (dict, list)):
            request["json"] = body
        elif body is not None:
            request["data"] = str(body).encode("utf-8")
        try:
            async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=self.timeout)) as session:
                async with session.request(self.method, url, headers=headers, ssl=self.verify_ssl,
                                           **request) as reply:
                    status = reply.status
                    text = await reply.text()
        except asyncio.TimeoutError:
            raise self.failed(ctx, "timeout", "tool.timeout", timeout_s=self.timeout) from None
        except (aiohttp.ClientError, ValueError) as err:
            raise self.failed(ctx, "unreachable", "tool.unavailable", detail=f"{type(err).__name__}: {err}") from None
        response = parse_payload(text.encode("utf-8"))
        if status >= 400:
            raise self.failed(ctx, "http_error", status=status, response=response)
        if self.result_path is not None:
            response = self._extract(response, ctx)
        return self.answer(variables, response)

    def _extract(self, response: Any, ctx: ToolContext) -> Any:
        value = response
        for part in self.result_path or ():
            if isinstance(value, dict) and part in value:
                value = value[part]
            elif isinstance(value, list) and part.isdigit() and int(part) < len(value):
                value = value[int(part)]
            else:
                raise self.failed(ctx, "bad_response", path="/".join(self.result_path or ()),
                                  detail=f"the response has no {part!r} there")
        return value


def parse_result_path(path: str) -> tuple[str, ...]:
    """"/a/b~1c/0" (JSON pointer) or "a.b.0" (dotted) → its parts."""
    if path.startswith("/"):
        return tuple(p.replace("~1", "/").replace("~0", "~") for p in path[1:].split("/"))
    return tuple(path.split(".")) if path else ()


# --- Home Assistant --------------------------------------------------------------------------------


class HaServiceTool(CustomTool):
    """A Home Assistant service call with templated data, under the same policy as the home tools.

    It acts only on the hub's own entities (`entity_id` in the data or its `target`), each as its
    backend has it (its own name and device class: a garage door asks for a yes): an entity the
    hub does not have is not found, an untargeted one is not allowed, and an area, device, floor
    or label target (entities the policy cannot see) is refused. A call without targets is
    checked as the pseudo-entity `<domain>.<service>`.
    """

    def __init__(self, *, domain: str, service: str, data: Any, **common: Any) -> None:
        super().__init__(**common)
        self.domain = domain
        self.service = service
        self.data = data  # template tree (a mapping)

    async def run(self, args: dict[str, Any], ctx: ToolContext, call_id: str,
                  background: bool) -> ToolResult:
        variables = self.variables(args, ctx, call_id)
        data = self.service_data(variables)
        if not isinstance(data, dict):
            raise self.failed(ctx, "template_error", detail="the service data must render to a mapping")
        return await self._call(self.domain, self.service, data, args, ctx, variables)

    def service_data(self, variables: Mapping[str, Any]) -> Any:
        return render_tree(self.data, variables) if self.data is not None else {}

    def targets(self, data: dict[str, Any], ctx: ToolContext) -> list[Entity]:
        """The hub's entities the call acts on (ToolError for any other target)."""
        ids: list[str] = []
        target = data.get("target")
        for holder in (data, target if isinstance(target, dict) else {}):
            unseen = [key for key in UNSEEN_TARGETS if holder.get(key)]
            if unseen:
                raise ToolError(phrase(ctx.language, "policy.not_allowed", name=self.spoken_name(ctx.language)),
                                code="not_allowed", tool=self.name,
                                detail=f"{unseen[0]}: a tool names the entities it acts on by entity_id")
            found = holder.get("entity_id")
            ids += [found] if isinstance(found, str) else [str(i) for i in found or ()]
        if not ids:
            pseudo = f"{self.domain}.{self.service}"
            return [Entity(pseudo, name=pseudo)]
        return [self._own_entity(i, ctx) for i in dict.fromkeys(ids)]

    def _own_entity(self, entity_id: str, ctx: ToolContext) -> Entity:
        entities = self.deps.entities
        known = entities.known(entity_id)
        if known is None:
            spoken = entity_id.split(".", 1)[-1].replace("_", " ")
            raise ToolError(phrase(ctx.language, "entity.not_found", name=spoken), code="unknown_entity",
                            tool=self.name, entity_id=entity_id)
        if entities.get(entity_id) is None:  # the user untargeted it (hub.home.name_book): never acted on
            raise ToolError(phrase(ctx.language, "policy.not_allowed", name=known.name), code="not_allowed",
                            tool=self.name, entity_id=entity_id)
        return known

    async def _call(self, domain: str, service: str, data: dict[str, Any], args: dict[str, Any],
                    ctx: ToolContext, variables: Mapping[str, Any]) -> ToolResult:
        ha = self.deps.home_assistant
        if ha is None:
            raise ToolError(phrase(ctx.language, "error.ha_unavailable"), code="ha_unavailable", tool=self.name)
        entities = self.targets(data, ctx)
        for entity in entities:  # raises not_allowed, rate_limited or confirmation_required
            if entity.domain != self.domain:
                raise ToolError(phrase(ctx.language, "policy.not_allowed", name=entity.name),
                                code="not_allowed", entity_id=entity.entity_id)
            self.deps.policy.check(entity, self.service, ToolCall(self.name, dict(args)), ctx)
        logged = redact(data, self._secret_values)
        try:
            changed = await ha.call_service(domain, service, data)
        except HAError as err:
            for entity in entities:
                self.deps.policy.record(entity, self.service, logged, ctx, f"failed: {redact(str(err), self._secret_values)}")
            key = ("error.ha_auth" if isinstance(err, HAAuthError)
                   else "error.ha_unavailable" if isinstance(err, HAUnavailable) else None)
            if key is not None:
                raise ToolError(phrase(ctx.language, key), code="ha_error", tool=self.name, detail=str(err)) from None
            raise self.failed(ctx, "ha_error", detail=str(err)) from None
        for entity in entities:
            self.deps.policy.record(entity, self.service, logged, ctx, "ok")
        states = changed if isinstance(changed, list) else []
        response = {"changed": [s.get("entity_id") for s in states if isinstance(s, dict)]}
        return self.answer(variables, response)


class HaScriptTool(HaServiceTool):
    """Run `script.<name>` with templated variables (`script.turn_on`, as the home tools do)."""

    def __init__(self, *, script: str, variables: Any, **common: Any) -> None:
        super().__init__(domain="script", service="turn_on", data=variables, **common)
        self.script = script  # "script.robot_wave"

    def service_data(self, variables: Mapping[str, Any]) -> Any:
        script_variables = render_tree(self.data, variables) if self.data is not None else {}
        if not isinstance(script_variables, dict):
            return script_variables
        return {"entity_id": self.script, "variables": script_variables}


# --- sequence --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Step:
    name: str  # how later steps and templates refer to its result: steps.<name>
    tool: str
    args: Any  # template tree


class SequenceTool(CustomTool):
    """Several tools in order; stops at the first failure. Later steps see `steps.<name>`."""

    def __init__(self, *, steps: tuple[Step, ...], tools: Mapping[str, CustomTool], **common: Any) -> None:
        super().__init__(**common)
        self.steps = steps
        self._tools = tools  # every custom tool by name (filled in by the loader)

    async def run(self, args: dict[str, Any], ctx: ToolContext, call_id: str,
                  background: bool) -> ToolResult:
        variables = self.variables(args, ctx, call_id)
        done: dict[str, dict[str, Any]] = {}
        last: ToolResult | None = None
        for step in self.steps:
            tool = self._tools[step.tool]
            step_args = render_tree(step.args, {**variables, "steps": done}) if step.args is not None else {}
            try:
                jsonschema.validate(step_args, tool.spec.parameters)
            except jsonschema.ValidationError as err:
                result = failure_result(self.failed(ctx, "invalid_arguments", detail=err.message))
            else:
                result = await tool.run_safe(step_args, ctx, background=False)
            done[step.name] = {"tool": step.tool, "ok": result.ok, "data": result.data, "speech": result.speech}
            if not result.ok:
                return ToolResult(ok=False, speech=result.speech, data={
                    "error": "step_failed", "step": step.name, "message": result.data.get("message"),
                    "steps": done})
            last = result
        outcome = self.answer(variables, done, extra="steps")
        if self.outputs.result is None:
            outcome.data = {"steps": done}
        if outcome.speech is None and last is not None:
            outcome.speech = last.speech
        return outcome
