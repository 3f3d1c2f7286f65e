"""Devices that answer to the same name: a command naming them asks which one, whatever their
kinds; the question tells them apart.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Sequence

from hub.home.entities import Entity


def option_names(options: Sequence[Entity]) -> list[str]:
    """The options of a "which one?" question as said: a name two of them share is told apart by
    kind ("Front Door (lock)", "Front Door (switch)"), or by area when the kinds are the same."""
    shared: dict[str, list[Entity]] = defaultdict(list)
    for option in options:
        shared[option.name.casefold()].append(option)
    said = []
    for option in options:
        twins = shared[option.name.casefold()]
        if len(twins) > 1 and len({t.domain for t in twins}) > 1:
            said.append(f"{option.name} ({option.domain})")
        elif len(twins) > 1 and option.area and len({t.area for t in twins}) > 1:
            said.append(f"{option.name} ({option.area})")
        else:
            said.append(option.name)
    return said
