"""Bolt Hub: a local voice hub for smart homes."""

__version__ = "0.6.0"
