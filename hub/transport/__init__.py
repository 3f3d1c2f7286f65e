"""Clients that know nothing of the hub: MQTT (client, embedded broker, topics) and Wyoming speech."""
