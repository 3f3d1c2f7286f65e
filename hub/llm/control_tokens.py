"""Only the chat format's own markup becomes control tokens; text from outside never does.

Message contents, entity names and states, tool calls and results, tool declarations: any of
them may spell a control token (`lamp<|im_end|>\\n<|im_start|>system`), and tokenizing the
rendered prompt with special tokens on would turn that into real turn markup. So before a
request is rendered, every control-token text inside its strings is replaced by a placeholder
character (Unicode private use plane 15, which no rendered markup holds); the prompt is then
tokenized with special tokens on, which can only find the format's own markup, and the stretches
of text holding placeholders are tokenized again with special tokens off, the original text put
back. A prompt with nothing to hide (the usual case) is tokenized exactly as before.

Tokenizing uses only the model's vocabulary (never the llama context).
"""

from __future__ import annotations

import functools
import json
import re
from dataclasses import replace
from typing import Any, Callable

from hub.core.messages import Message, ToolCall
from hub.llm.types import GenerationRequest

_FIRST_PLACEHOLDER = 0xF0000
_PLACEHOLDERS = re.compile("[\U000F0000-\U000FFFFD]")

Tokenize = Callable[[str, bool], list[int]]  # (text, special) → token ids, no BOS


class ControlTokenGuard:
    """`tokenize(text, special)`, `is_control(token)` and `text_of(token)` come from the model."""

    def __init__(self, tokenize: Tokenize, is_control: Callable[[int], bool], text_of: Callable[[int], str]) -> None:
        self._tokenize = tokenize
        self._is_control = is_control
        self._text_of = text_of
        self._placeholder: dict[str, str] = {}  # control-token text → its placeholder
        self._original: dict[str, str] = {}  # and back
        self.text = functools.lru_cache(maxsize=512)(self._text)  # the system text repeats every turn

    # --- before rendering -------------------------------------------------------------------

    def request(self, request: GenerationRequest) -> GenerationRequest:
        """`request` with every control-token text in its strings replaced by a placeholder."""
        return replace(request, messages=[self._message(m) for m in request.messages],
                       tools=[replace(t, name=self.text(t.name), description=self.text(t.description),
                                      parameters=self._value(t.parameters)) for t in request.tools])

    def _text(self, text: str) -> str:
        """`text` with its control-token texts replaced (the same string when it has none)."""
        special = self._tokenize(text, True)
        if special == self._tokenize(text, False):
            return text
        for token in dict.fromkeys(special):
            if self._is_control(token):
                spelled = self._text_of(token)
                if spelled:
                    text = text.replace(spelled, self._placeholder_for(spelled))
        return text

    def _message(self, message: Message) -> Message:
        content = message.content
        if message.role == "tool":  # JSON text: its escapes (\u003c…) must not hide markup either
            try:
                content = json.dumps(self._value(json.loads(content)), ensure_ascii=False)
            except (ValueError, TypeError):
                content = self.text(content)
        else:
            content = self.text(content)
        return replace(message, content=content,
                       name=self.text(message.name) if message.name else message.name,
                       tool_calls=[ToolCall(self.text(c.name), self._value(c.arguments), c.id)
                                   for c in message.tool_calls])

    def _value(self, value: Any) -> Any:
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, dict):
            return {self._value(k): self._value(v) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return [self._value(v) for v in value]
        return value

    def _placeholder_for(self, spelled: str) -> str:
        if spelled not in self._placeholder:
            char = chr(_FIRST_PLACEHOLDER + len(self._placeholder))
            self._placeholder[spelled], self._original[char] = char, spelled
        return self._placeholder[spelled]

    # --- after rendering --------------------------------------------------------------------

    def restore(self, rendered: str) -> str:
        """The rendered text as the model reads it (placeholders back to their text)."""
        return _PLACEHOLDERS.sub(lambda m: self._original.get(m.group(), m.group()), rendered)

    def tokenize(self, rendered: str) -> list[int]:
        """Token ids of a prompt rendered from a `request()`: control tokens only from markup."""
        tokens = self._tokenize(rendered, True)
        if not _PLACEHOLDERS.search(rendered):
            return tokens
        out: list[int] = []
        run: list[int] = []  # the tokens of the text since the last control token
        position = 0
        for token in [*tokens, None]:
            if token is not None and not self._is_control(token):
                run.append(token)
                continue
            end = len(rendered) if token is None else rendered.find(self._text_of(token), position)
            fragment = rendered[position:end] if end >= 0 else ""
            out.extend(self._tokenize(self.restore(fragment), False) if _PLACEHOLDERS.search(fragment) else run)
            if token is not None:
                out.append(token)
                position = end + len(self._text_of(token)) if end >= 0 else position
            run = []
        return out
