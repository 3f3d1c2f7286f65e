"""Every report ("acknowledge, then report") published as JSON on `<base>/report`."""

from __future__ import annotations

from hub.home.later import Report
from hub.transport.mqtt_client import MqttClient


class MqttReportPublisher:
    """Publishes each report on `<base>/report` (QoS 1, kept while the broker is away): a report sink."""

    def __init__(self, client: MqttClient, base_topic: str) -> None:
        self._client = client
        self.topic = f"{base_topic.rstrip('/')}/report"

    def __call__(self, report: Report) -> None:
        self._client.publish(self.topic, report.as_json(), qos=1)
