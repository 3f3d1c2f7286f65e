"""Who may confirm a held action (issue #30 item 1): an identity anyone can read and copy never
confirms; the asker proves itself with the secret whose hash its ask announced."""

from __future__ import annotations

import hashlib

import pytest

from hub.core.tools import may_confirm, same_client

HASH = hashlib.sha256(b"secret").hexdigest()
ANNOUNCED = f"mqtt:commit:{HASH}"
PROVEN = f"mqtt:key:{HASH}"


@pytest.mark.parametrize(
    ("asked", "answering", "confirms"),
    [
        ("wyoming:10.0.0.5", "wyoming:10.0.0.5", True),  # a peer the transport itself names
        ("wyoming:10.0.0.5", "wyoming:10.0.0.6", False),
        (ANNOUNCED, PROVEN, True),  # the secret behind the announced hash
        (ANNOUNCED, ANNOUNCED, False),  # the hash copied from the bus
        (ANNOUNCED, f"mqtt:key:{hashlib.sha256(b'guess').hexdigest()}", False),
        ("mqtt:commit:name:panel", "mqtt:commit:name:panel", False),  # a bare name, copied
        (None, ANNOUNCED, False),
        (PROVEN, PROVEN, True),
    ],
)
def test_only_the_asker_may_confirm(asked: str | None, answering: str, confirms: bool) -> None:
    assert may_confirm(asked, answering) is confirms


def test_the_proof_continues_the_announced_conversation() -> None:
    assert same_client(PROVEN) == same_client(ANNOUNCED) == ANNOUNCED
