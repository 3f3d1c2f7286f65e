"""Who may use the HTTP API: a bearer token, or Home Assistant's ingress proxy inside the add-on."""

from __future__ import annotations

import hashlib
import hmac
import logging
import re
import secrets
from pathlib import Path
from typing import Awaitable, Callable

from aiohttp import web
from aiohttp.typedefs import Middleware

from hub.state_files import write_atomic

_LOGGER = logging.getLogger(__name__)

SUPERVISOR_INGRESS_ADDRESS = "172.30.32.2"
INGRESS_HEADER = "X-Ingress-Path"
TOKEN_FILE = "api_token"
_INGRESS_PATH = re.compile(r"^/[A-Za-z0-9/_.\-]*$")

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


def load_or_create_token(configured: str | None, state_dir: Path) -> tuple[str, bool]:
    """The configured token, else the one saved in the state folder, else a new saved one; and
    whether it was generated now."""
    if configured:
        return configured, False
    path = state_dir / TOKEN_FILE
    try:
        saved = path.read_text(encoding="utf-8").strip()
    except FileNotFoundError:
        saved = ""
    if saved:
        _LOGGER.info("HTTP API token: read from %s", path)
        return saved, False
    token = secrets.token_urlsafe(32)
    write_atomic(path, (token + "\n").encode("utf-8"), mode=0o600)
    _LOGGER.warning("No api_token configured: generated one and saved it in %s "
                    "(send it as 'Authorization: Bearer <token>')", path)
    return token, True


def ingress_path(request: web.Request) -> str | None:
    """The ingress prefix when the request came through the Supervisor's ingress proxy."""
    value = request.headers.get(INGRESS_HEADER)
    if value and _INGRESS_PATH.match(value):
        return value.rstrip("/")
    return None


class Authenticator:
    def __init__(self, token: str, *, trust_ingress: bool) -> None:
        self._token = token.encode()
        self._trust_ingress = trust_ingress

    def is_ingress(self, request: web.Request) -> bool:
        return (self._trust_ingress and request.remote == SUPERVISOR_INGRESS_ADDRESS
                and ingress_path(request) is not None)

    def allows(self, request: web.Request) -> bool:
        if self.is_ingress(request):
            return True
        scheme, _, given = request.headers.get("Authorization", "").partition(" ")
        # aiohttp keeps a header's non-UTF-8 bytes as surrogates: give them back, never raise
        given_bytes = given.strip().encode("utf-8", "surrogateescape")
        return scheme.lower() == "bearer" and hmac.compare_digest(given_bytes, self._token)

    def client_of(self, request: web.Request) -> str:
        """Who an allowed request comes from (TurnRequest.client): the ingress user, else a
        digest of the bearer token (never the token itself) and the address it came from (one
        token may be shared by every client on the LAN)."""
        if self.is_ingress(request):
            return f"rest:ingress:{request.headers.get('X-Remote-User-Id', '')}"
        given = request.headers.get("Authorization", "").partition(" ")[2].strip()
        digest = hashlib.sha256(given.encode("utf-8", "replace")).hexdigest()[:16]
        return f"rest:token:{digest}@{request.remote or ''}"

    def middleware(self, public: Callable[[web.Request], bool],
                   body: Callable[[web.Request, str, str], object] | None = None) -> Middleware:
        """aiohttp middleware: 401 with a JSON error unless the route is public or the caller allowed.
        `body(request, code, message)` shapes the error (the OpenAI routes use OpenAI's)."""

        @web.middleware
        async def check(request: web.Request, handler: Handler) -> web.StreamResponse:
            if public(request) or self.allows(request):
                return await handler(request)
            message = "Send the hub's API token as 'Authorization: Bearer <token>'."
            return web.json_response(
                body(request, "unauthorized", message) if body else {"error": "unauthorized", "message": message},
                status=401, headers={"WWW-Authenticate": 'Bearer realm="bolt-hub"'},
            )

        return check
