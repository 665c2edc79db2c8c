"""Reading a structured reply that did not parse as it came, the way real servers send them.

Grammar-constrained servers enforce a JSON shape but not number bounds (a judge's `useful: 2`);
servers that ignore `tool_choice` answer in text, often JSON followed by an explanation or inside
a code fence. What can be read is read: the function call's arguments, else the first JSON object
in the text; numbers outside a field's bounds are clamped into them. Anything else is left to one
repair call and then the caller's fallback (threadsage/adapters/reasoning/llm/calls.py).
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from typing import Any, TypeVar

from annotated_types import Ge, Gt, Le, Lt
from langchain_core.messages import AIMessage
from pydantic import BaseModel, ValidationError

T = TypeVar("T", bound=BaseModel)


def salvaged(schema: type[T], reply: AIMessage) -> T | None:
    """`schema` read from whatever the reply holds, or None when nothing in it fits."""
    for data in _candidates(schema, reply):
        try:
            return schema.model_validate(clamped(schema, data))
        except ValidationError:
            continue
    return None


def clamped(schema: type[BaseModel], data: dict[str, Any]) -> dict[str, Any]:
    """`data` with each number of a bounded field moved into its bounds (`ge`/`le` as given,
    `gt`/`lt` as their limits)."""
    out = dict(data)
    for name, field in schema.model_fields.items():
        value = out.get(name)
        low, high = _bounds(field.metadata)
        if (low, high) == (-math.inf, math.inf):
            continue
        if isinstance(value, str):
            try:
                value = float(value)
            except ValueError:
                continue
        if not isinstance(value, int | float) or isinstance(value, bool):
            continue
        out[name] = min(max(value, low), high)
    return out


def _bounds(metadata: list[Any]) -> tuple[float, float]:
    """A field's numeric bounds (a strict bound taken as its limit: the only values worth keeping)."""
    low, high = -math.inf, math.inf
    for bound in metadata:
        if isinstance(bound, Ge | Gt):
            low = float(bound.ge if isinstance(bound, Ge) else bound.gt)  # type: ignore[arg-type]
        elif isinstance(bound, Le | Lt):
            high = float(bound.le if isinstance(bound, Le) else bound.lt)  # type: ignore[arg-type]
    return low, high


def first_json_object(text: str) -> dict[str, Any] | None:
    """The first JSON object in `text`, whatever comes before or after it (a fence, an explanation)."""
    decoder = json.JSONDecoder()
    start = text.find("{")
    while start != -1:
        try:
            value, _ = decoder.raw_decode(text, start)
        except ValueError:
            start = text.find("{", start + 1)
            continue
        if isinstance(value, dict):
            return value
        start = text.find("{", start + 1)
    return None


def reply_text(reply: AIMessage) -> str:
    """The reply's text content (a provider may send a list of content blocks)."""
    content = reply.content
    if isinstance(content, str):
        return content
    return "".join(str(block.get("text", "")) if isinstance(block, dict) else str(block) for block in content)


def _candidates(schema: type[BaseModel], reply: AIMessage) -> Iterator[dict[str, Any]]:
    """The objects the reply may mean: its calls of the schema's function first (any call when it
    made one only), then those whose arguments did not parse, then JSON in its text."""
    calls = reply.tool_calls
    for call in calls:
        if call["name"] == schema.__name__ or len(calls) == 1:
            yield call["args"]
    for broken in reply.invalid_tool_calls:
        if found := first_json_object(broken.get("args") or ""):
            yield found
    if found := first_json_object(reply_text(reply)):
        # a model may wrap the object in its function's name: {"Verdict": {...}}
        inner = found.get(schema.__name__)
        yield inner if isinstance(inner, dict) and len(found) == 1 else found
