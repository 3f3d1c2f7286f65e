"""Every report ("acknowledge, then report") published as JSON on `<base>/report`; a broadcast
in a home with no voice satellite on `<base>/announce`."""

from __future__ import annotations

from hub.core.tools import ToolContext
from hub.home.later import Report
from hub.transport.mqtt_client import MqttClient


class MqttReportPublisher:
    """Publishes each report on `<base>/report` (QoS 1, kept while the broker is away): a report sink."""

    def __init__(self, client: MqttClient, base_topic: str) -> None:
        self._client = client
        self.topic = f"{base_topic.rstrip('/')}/report"

    def __call__(self, report: Report) -> None:
        self._client.publish(self.topic, report.as_json(), qos=1)


class MqttAnnouncements:
    """A broadcast in a home with no voice satellite entity, published as JSON on
    `<base>/announce` (QoS 1) for the speakers that listen there: an outlet of
    hub.home.broadcast.Broadcast."""

    def __init__(self, client: MqttClient, base_topic: str) -> None:
        self._client = client
        self.topic = f"{base_topic.rstrip('/')}/announce"

    def __call__(self, message: str, ctx: ToolContext) -> None:
        self._client.publish(self.topic, {
            "message": message, "language": ctx.language, "conversation_id": ctx.conversation_id,
            "source": ctx.source, "satellite_id": ctx.satellite_id, "device_id": ctx.device_id}, qos=1)
