"""Where the hub's own MQTT messages live: one place for the topic layout.

Base topic `<mqtt_base_topic>/<slug of instance_name>` (default `bolt_hub/bolt_hub`):
  availability            `online` / `offline` (retained, last will)
  ask                     JSON ask  →  reply  (JSON, same `id`)
  event                   tool calls, tool results, replies and reports as JSON events
  tool_called             each finished tool call (device trigger / event entity feed)
  state                   hub status, last reply, last latency (retained JSON)
  settings                runtime settings (retained JSON); `settings/<name>/set` changes one
  greet                   {"persona", "conversation_id"?, "id"?}  →  reply: the persona's greeting
  ask_text/set            plain-text ask (the discovered text entity)
  clear                   clears all conversations (the discovered button)
  tool/<name>             direct tool call (JSON)  →  tool/<name>/result (JSON, same `id`)
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

_NON_SLUG = re.compile(r"[^a-z0-9]+")


def slugify(text: str, default: str = "unnamed") -> str:
    """ASCII slug like Home Assistant's: "Küche Licht" → "kuche_licht"."""
    folded = unicodedata.normalize("NFKD", str(text)).encode("ascii", "ignore").decode("ascii")
    slug = _NON_SLUG.sub("_", folded.lower()).strip("_")
    return slug or default


@dataclass(frozen=True)
class TopicOptions:
    instance_name: str
    mqtt_base_topic: str
    mqtt_discovery_prefix: str


@dataclass(frozen=True)
class HubTopics:
    base: str
    node_id: str  # the hub's device id in discovery topics and unique ids
    discovery_prefix: str = "homeassistant"

    @classmethod
    def from_options(cls, options: TopicOptions) -> "HubTopics":
        instance = slugify(options.instance_name, "bolt_hub")
        base_root = options.mqtt_base_topic.strip("/") or "bolt_hub"
        return cls(
            base=f"{base_root}/{instance}",
            node_id=slugify(f"{base_root}_{instance}"),
            discovery_prefix=options.mqtt_discovery_prefix.strip("/") or "homeassistant",
        )

    @property
    def availability(self) -> str:
        return f"{self.base}/availability"

    @property
    def ask(self) -> str:
        return f"{self.base}/ask"

    @property
    def greet(self) -> str:
        return f"{self.base}/greet"

    @property
    def reply(self) -> str:
        return f"{self.base}/reply"

    @property
    def event(self) -> str:
        return f"{self.base}/event"

    @property
    def tool_called(self) -> str:
        return f"{self.base}/tool_called"

    @property
    def state(self) -> str:
        return f"{self.base}/state"

    @property
    def settings(self) -> str:
        return f"{self.base}/settings"

    def setting_command(self, name: str) -> str:
        return f"{self.base}/settings/{name}/set"

    @property
    def ask_text(self) -> str:
        return f"{self.base}/ask_text/set"

    @property
    def ask_text_state(self) -> str:
        return f"{self.base}/ask_text"

    @property
    def clear(self) -> str:
        return f"{self.base}/clear"

    @property
    def tool_calls(self) -> str:
        """The filter direct tool calls arrive on (`hub.interfaces.mqtt.tool_api`)."""
        return f"{self.base}/tool/+"

    def tool_result(self, name: str) -> str:
        return f"{self.base}/tool/{name}/result"

    @property
    def discovery(self) -> str:
        return f"{self.discovery_prefix}/device/{self.node_id}/config"

    @property
    def ha_status(self) -> str:
        return f"{self.discovery_prefix}/status"
