"""No I/O: the Tool protocol, the tool registry and what a tool call returns."""
