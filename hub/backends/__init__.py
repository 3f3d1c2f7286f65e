"""Where entities come from and where services go: Home Assistant, MQTT devices, the demo homes.

Each backend implements `hub.home.entities.EntityBackend`; only the composition root builds one.
"""
