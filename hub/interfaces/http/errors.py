"""Client mistakes as JSON: `ClientError` ends a request with a 4xx (or 503) and a JSON body."""

from __future__ import annotations

from typing import Any

from aiohttp import web
from aiohttp.typedefs import Handler

from hub.interfaces.http.openai_compat import error_body


class ClientError(Exception):
    """Ends a request with a 4xx JSON error."""

    def __init__(self, status: int, code: str, message: str, param: str | None = None) -> None:
        super().__init__(message)
        self.status, self.code, self.message, self.param = status, code, message, param


@web.middleware
async def json_errors(request: web.Request, handler: Handler) -> web.StreamResponse:
    """ClientError and aiohttp's own 4xx (404, 405, 413) become JSON errors."""
    try:
        return await handler(request)
    except ClientError as err:
        headers = {"Retry-After": "2"} if err.status == 503 else None
        return web.json_response(json_error_body(request, err.code, err.message, err.status, err.param),
                                 status=err.status, headers=headers)
    except web.HTTPException as err:
        if err.status < 400 or err.status >= 500:
            raise
        code = (err.reason or "error").lower().replace(" ", "_")
        return web.json_response(json_error_body(request, code, f"{err.reason}: {request.method} {request.path}",
                                                 err.status),
                                 status=err.status, headers={k: v for k, v in err.headers.items()
                                                             if k in ("Allow",)})


def json_error_body(request: web.Request, code: str, message: str, status: int = 401,
                    param: str | None = None) -> dict[str, Any]:
    """The hub's `{"error": code, "message"}`, or OpenAI's shape on its routes."""
    if request.path.startswith("/v1/"):
        return error_body(status, code, message, param)
    return {"error": code, "message": message}
