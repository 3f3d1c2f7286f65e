"""Wyoming, MQTT and HTTP interfaces."""
