"""How the engine turns chat messages into prompt text: the model directory's own chat template, generation prompt
on. One function, so training (narrator), benchmarks and the serving worker render a prompt identically."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any


def render_chat(tokenizer: Any, messages: Sequence[Mapping[str, str]]) -> str:
    """`messages` ({"role", "content"}) rendered with `tokenizer`'s chat template, ready for the assistant's turn."""
    text = tokenizer.apply_chat_template(list(messages), tokenize=False, add_generation_prompt=True)
    if not isinstance(text, str):  # tokenize=False returns text; anything else is a broken tokenizer
        raise TypeError(f"chat template rendered {type(text).__name__}, not text")
    return text
