"""MQTT devices found by discovery: the configs, their value templates, the tracked devices."""
