"""Milvus filters whose values never become expression syntax.

A filter is built as a template (`path in {path}`) with its values apart. A Milvus server (2.5 and
later) takes them apart too, as `filter_params`: a value is never parsed as part of the
expression, whatever quotes it holds. Milvus Lite (3.2) does not read `filter_params` — a `{` in
the expression is a syntax error — so for it, and only for it, each value is quoted into the
expression here, backslashes and double quotes escaped. Values reach filters from document paths
and ids (a file may be named `a" or path != "b.md`), so this is the one place that quotes them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

FilterArgs = tuple[str, dict[str, list[str]]]  # (expression, values for its placeholders)


@dataclass(frozen=True)
class Filter:
    template: str = ""  # "" matches every row
    values: Mapping[str, Sequence[str]] = field(default_factory=dict)

    def __and__(self, other: Filter) -> Filter:
        if not other.template:
            return self
        if not self.template:
            return other
        return Filter(f"{self.template} and {other.template}", {**self.values, **other.values})

    def render(self, inline: bool) -> FilterArgs:
        """The expression and `filter_params` to send: values apart, or quoted in (`inline`)."""
        if inline:
            return self.template.format_map({name: _quoted_list(v) for name, v in self.values.items()}), {}
        return self.template, {name: list(v) for name, v in self.values.items()}


def field_in(name: str, values: Sequence[str], negated: bool = False) -> Filter:
    """Rows whose `name` is one of `values` (or none of them); the placeholder is the field's name."""
    return Filter(f"{name} {'not in' if negated else 'in'} {{{name}}}", {name: values})


def _quoted_list(values: Sequence[str]) -> str:
    return "[" + ", ".join('"' + v.replace("\\", "\\\\").replace('"', '\\"') + '"' for v in values) + "]"
