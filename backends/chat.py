"""Render a model's own Jinja chat template (the GGUF's `tokenizer.chat_template`).

Same environment as Hugging Face's `apply_chat_template` (sandboxed, trim_blocks,
lstrip_blocks, loop controls, `raise_exception`, `strftime_now`, a `tojson` that keeps
non-ASCII), so a template renders the same text in every backend.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import datetime

# Used by the reference backend and by any GGUF that ships no template of its own.
CHATML = (
    "{% for message in messages %}"
    "{{ '<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n' }}"
    "{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}"
)


class ChatTemplate:
    """A compiled chat template. render(messages) -> prompt text."""

    def __init__(self, source: str, *, bos_token: str = "", eos_token: str = ""):
        import jinja2
        from jinja2.ext import loopcontrols
        from jinja2.sandbox import ImmutableSandboxedEnvironment

        def raise_exception(message: str):
            raise jinja2.exceptions.TemplateError(message)

        def tojson(value, indent=None, ensure_ascii=False, sort_keys=False):
            return json.dumps(value, indent=indent, ensure_ascii=ensure_ascii, sort_keys=sort_keys)

        env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True, extensions=[loopcontrols])
        env.filters["tojson"] = tojson
        env.globals["raise_exception"] = raise_exception
        env.globals["strftime_now"] = lambda fmt: datetime.now().strftime(fmt)
        self.source = source
        self._template = env.from_string(source)
        self._specials = {"bos_token": bos_token, "eos_token": eos_token}

    def render(self, messages: Sequence[dict], *, add_generation_prompt: bool = True) -> str:
        return self._template.render(
            messages=list(messages),
            add_generation_prompt=add_generation_prompt,
            tools=None,
            **self._specials,
        )
