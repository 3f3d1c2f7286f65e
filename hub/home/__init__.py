"""Entities, their resolution, tools and policy; Home Assistant and MQTT device backends."""
