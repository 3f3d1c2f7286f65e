"""JSON from the network (MQTT, REST, Wyoming): parsed with one clear error, never a crash.

`json.loads` alone raises RecursionError on input nested about 1,000 deep, and it turns a
`"\\ud800"` escape into a lone surrogate that no UTF-8 encoder (the tokenizer, MQTT, HTTP) can
write later; both become BadJson here, so the sender gets a bad-request answer at once.
"""

from __future__ import annotations

import json
from typing import Any


class BadJson(ValueError):
    """Input that is not usable JSON text; the message says why, for the sender."""


def loads(raw: bytes | str, **options: Any) -> Any:
    """Parse UTF-8 JSON (options go to `json.loads`); BadJson when it is not, is nested too
    deeply, or holds a string that is not Unicode text."""
    try:
        data = json.loads(raw.decode("utf-8") if isinstance(raw, bytes) else raw, **options)
    except UnicodeDecodeError:
        raise BadJson("it is not UTF-8") from None
    except RecursionError:
        raise BadJson("it is nested too deeply") from None
    except ValueError as err:
        raise BadJson(str(err)) from None
    check_text(data)
    return data


def check_text(data: Any) -> None:
    """BadJson when a string (or key) anywhere in `data` holds a lone surrogate."""
    try:
        json.dumps(data, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        raise BadJson("it holds a lone surrogate (\\ud800-\\udfff), which is not Unicode text") from None
    except (RecursionError, ValueError):
        raise BadJson("it is nested too deeply") from None
