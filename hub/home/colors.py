"""Colour names a light can be set to (a subset of the CSS names HA's `color_name` accepts)."""

from __future__ import annotations

COLORS: dict[str, tuple[int, int, int]] = {
    "white": (255, 255, 255),
    "red": (255, 0, 0),
    "orange": (255, 165, 0),
    "yellow": (255, 255, 0),
    "green": (0, 128, 0),
    "lime": (0, 255, 0),
    "cyan": (0, 255, 255),
    "turquoise": (64, 224, 208),
    "blue": (0, 0, 255),
    "navy": (0, 0, 128),
    "purple": (128, 0, 128),
    "violet": (238, 130, 238),
    "magenta": (255, 0, 255),
    "pink": (255, 192, 203),
    "gold": (255, 215, 0),
    "coral": (255, 127, 80),
    "lavender": (230, 230, 250),
    "brown": (165, 42, 42),
}

# HA's colour modes in which a light shows a colour (not white or a colour temperature)
COLOR_MODES = frozenset({"hs", "rgb", "rgbw", "rgbww", "xy"})


def color_key(name: str) -> str:
    return "".join(name.lower().split())
