"""User-defined personas and tools from a YAML file (issue 11): no Python needed.

`loader.load_custom_file` reads and checks the file against `shape`; `tools` holds the tool
types (mqtt, rest, ha_service, ha_script, sequence) and `tool_base` what they share; `templates`
is the sandboxed Jinja they render with.
"""
