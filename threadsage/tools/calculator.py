"""A calculator that cannot be talked into running code.

The expression is parsed with `ast` and only numbers, + − × ÷, //, %, ** and brackets are walked;
anything else (names, calls, attributes, strings…) is refused before evaluation. Exponents and
results are bounded so that "9**9**9" is a clear refusal, not a minute of CPU. People's spelling
is accepted: "15% of 180", "3 x 4", "12 ÷ 4", "€1,200", "2^10".
"""

from __future__ import annotations

import ast
import math
import operator
import re
from collections.abc import Callable

from threadsage.i18n import Explained

MAX_CHARS = 200
MAX_EXPONENT = 1000
MAX_MAGNITUDE = 1e100

Number = int | float


class CalculationError(Explained):
    """Why an expression was refused, in words a person can act on (in the asker's language:
    `text.render(language)`)."""


_BINARY: dict[type[ast.operator], Callable[[Number, Number], Number]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
}
_UNARY: dict[type[ast.unaryop], Callable[[Number], Number]] = {ast.UAdd: operator.pos, ast.USub: operator.neg}

# "15% of 180" → "(15/100)*180"; a lone "15%" → "(15/100)"; the modulo sign between numbers stays.
_PERCENT_OF = re.compile(r"(\d+(?:\.\d+)?)\s*%\s*of\b", re.IGNORECASE)
_PERCENT = re.compile(r"(\d+(?:\.\d+)?)\s*%(?!\s*[\d(])")
_THOUSANDS = re.compile(r"(?<=\d),(?=\d{3}\b)")
_SPELLING = {"×": "*", "x": "*", "X": "*", "÷": "/", "−": "-", "^": "**", "times": "*", "plus": "+", "minus": "-"}
_WORDS = re.compile(r"(?<=[\d)\s])(x|X|times|plus|minus)(?=[\s\d(])|[×÷−^]")
_CURRENCY = re.compile(r"[€$£¥]|\b(?:CA\$|EUR|CAD|USD|GBP)\b")


def normalise(expression: str) -> str:
    """People's arithmetic as Python's: percent, thousands separators, × ÷ ^, currency dropped."""
    text = _CURRENCY.sub("", expression)
    text = _THOUSANDS.sub("", text)
    text = _PERCENT_OF.sub(r"(\1/100)*", text)
    text = _PERCENT.sub(r"(\1/100)", text)
    return _WORDS.sub(lambda m: _SPELLING[m.group(0)], text).strip()


def calculate(expression: str) -> Number:
    """The value of an arithmetic expression, or a CalculationError saying why not."""
    if len(expression) > MAX_CHARS:
        raise CalculationError("calc_too_long", limit=MAX_CHARS)
    text = normalise(expression)
    try:
        tree = ast.parse(text, mode="eval")
    except SyntaxError:
        raise CalculationError("calc_unreadable", expression=expression.strip()) from None
    return _checked(_evaluate(tree.body))


def formatted(value: Number) -> str:
    """A result as people write it: 27, 1,234.5, 0.333333 — no float noise."""
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e15:
        value = int(value)
    if isinstance(value, int):
        return f"{value:,}"
    return f"{value:,.6f}".rstrip("0").rstrip(".") if abs(value) >= 1e-6 else f"{value:.6g}"


def _evaluate(node: ast.expr) -> Number:
    if isinstance(node, ast.Constant) and isinstance(node.value, int | float) and not isinstance(node.value, bool):
        return _checked(node.value)
    if isinstance(node, ast.UnaryOp) and type(node.op) in _UNARY:
        return _UNARY[type(node.op)](_evaluate(node.operand))
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Pow):
        return _power(_evaluate(node.left), _evaluate(node.right))
    if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
        left, right = _evaluate(node.left), _evaluate(node.right)
        if right == 0 and isinstance(node.op, ast.Div | ast.FloorDiv | ast.Mod):
            raise CalculationError("calc_zero")
        return _checked(_BINARY[type(node.op)](left, right))
    raise CalculationError("calc_not_allowed")


def _power(base: Number, exponent: Number) -> Number:
    if abs(exponent) > MAX_EXPONENT:
        raise CalculationError("calc_exponent", limit=MAX_EXPONENT)
    if base == 0 and exponent < 0:
        raise CalculationError("calc_zero")
    if base != 0 and abs(exponent) * math.log10(abs(base)) > math.log10(MAX_MAGNITUDE):
        raise CalculationError("calc_too_large")
    result = base**exponent
    if isinstance(result, complex):
        raise CalculationError("calc_not_real")
    return _checked(result)


def _checked(value: Number) -> Number:
    if (isinstance(value, float) and not math.isfinite(value)) or abs(value) > MAX_MAGNITUDE:
        raise CalculationError("calc_too_large")
    return value
