"""Home Assistant: its REST/WebSocket client and the registry that mirrors its entities."""
