"""No I/O: the Tool protocol, the tool registry, what a tool call returns and how it is spoken."""
