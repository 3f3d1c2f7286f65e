"""A request as the prompt a llama evaluates: its chat format's text, and the tokens of that text."""

from __future__ import annotations

from llama_cpp import Llama

from hub.llm.chat_format import ChatFormat, RenderedPrompt
from hub.llm.control_tokens import ControlTokenGuard
from hub.llm.llama_internals import adds_bos, control_token_test, token_text
from hub.llm.template_format import chat_format_for
from hub.llm.types import GenerationRequest, ReasoningMode


class LlamaPrompt:
    """Renders and tokenizes requests for one llama (any thread: only its vocabulary). Control
    tokens come only from the chat format's markup, never from the text of a message."""

    def __init__(self, llm: Llama) -> None:
        self._llm = llm
        self.chat_format: ChatFormat = chat_format_for(
            llm.metadata, bos_token=self._token_text(llm.token_bos()), eos_token=self._token_text(llm.token_eos()),
        )
        self._add_bos = adds_bos(llm)
        self._guard = ControlTokenGuard(
            lambda text, special: llm.tokenize(text.encode("utf-8"), add_bos=False, special=special),
            control_token_test(llm), self._token_text)

    def text(self, request: GenerationRequest) -> RenderedPrompt:
        """The exact prompt text `request` is evaluated as."""
        rendered = self._render(self._guard.request(request))
        return RenderedPrompt(self._guard.restore(rendered.text), rendered.starts_in_thinking)

    def evaluated(self, request: GenerationRequest) -> tuple[RenderedPrompt, list[int]]:
        """What a generation evaluates: the rendered prompt (message text guarded) and its tokens."""
        rendered = self._render(self._guard.request(request))
        return rendered, self._tokens_of(rendered.text)

    def tokens(self, request: GenerationRequest, *, add_generation_prompt: bool = True) -> list[int]:
        """The token ids of `request`'s prompt (without the generation prompt: its stable start)."""
        if add_generation_prompt:
            return self.evaluated(request)[1]
        guarded = self._guard.request(request)
        return self._tokens_of(self.chat_format.render(
            guarded.messages, guarded.tools, thinking=_thinking_enabled(guarded),
            conversational=guarded.conversational, add_generation_prompt=False).text)

    def _tokens_of(self, rendered: str) -> list[int]:
        tokens = self._guard.tokenize(rendered)
        if self._add_bos and (not tokens or tokens[0] != self._llm.token_bos()):
            tokens.insert(0, self._llm.token_bos())
        return tokens

    def _render(self, request: GenerationRequest) -> RenderedPrompt:
        rendered = self.chat_format.render(
            request.messages, request.tools, thinking=_thinking_enabled(request),
            conversational=request.conversational)
        if request.constraint is not None:
            return RenderedPrompt(rendered.text + self.chat_format.constrained_call_prefix, False)
        return rendered

    def _token_text(self, token: int) -> str:
        return token_text(self._llm, token)


def _thinking_enabled(request: GenerationRequest) -> bool:
    if request.constraint is not None:
        return False
    mode = request.reasoning.mode
    return mode is ReasoningMode.ON or (mode is ReasoningMode.BUDGET and request.reasoning.budget > 0)
