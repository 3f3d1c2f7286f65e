"""Hostile bytes on the real HTTP server get a clear 4xx, never a 500 (issue #17 point 12)."""

from __future__ import annotations

import json
import socket

import pytest
import requests

pytestmark = pytest.mark.timeout(120)


def raw_request(port: int, head: bytes, body: bytes = b"") -> tuple[int, bytes]:
    """One HTTP/1.1 request written byte for byte (clients refuse to send non-UTF-8 headers)."""
    with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
        sock.sendall(head + f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n".encode() + body)
        answer = b""
        while chunk := sock.recv(65536):
            answer += chunk
    status = int(answer.split(b" ", 2)[1])
    return status, answer.split(b"\r\n\r\n", 1)[1]


@pytest.mark.parametrize("value", [b"Bearer \xff\xfe\xfa", b"Bearer t\xc3\x28", b"\xe9\xe9 token"])
def test_a_non_utf8_authorization_header_is_401(live_hub, value: bytes) -> None:
    head = b"GET /api/status HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: " + value + b"\r\n"
    status, body = raw_request(live_hub.api.port, head)
    assert status == 401, body
    assert json.loads(body)["error"] == "unauthorized"


def test_a_lone_surrogate_in_an_ask_is_a_bad_request(live_hub, auth) -> None:
    body = b'{"text": "unlock the \\ud800 front door", "conversation_id": "surrogate"}'
    response = requests.post(f"{live_hub.url}/api/ask", data=body, timeout=60,
                             headers={**auth, "Content-Type": "application/json"})
    assert response.status_code == 400, response.text
    answer = response.json()
    assert answer["error"] == "invalid_json" and "lone surrogate" in answer["message"], answer
