"""The servers: Wyoming, MQTT API, HTTP (REST, OpenAI-compatible, web page) and the voice pipeline."""
