"""The calculator and the calendar as tools the language model may call while it answers.

The answer's request offers both tools (OpenAI's `tools`) beside
the answer's own structured form; when the model asks for a tool, it runs here and its result goes
back as a `tool` message, for at most MAX_TOOL_ROUNDS rounds, after which the model must answer.
What the tools computed is shown under the answer, so a person can check the arithmetic.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from pydantic import BaseModel, Field

from threadsage.adapters.reasoning.llm.openai_chat import Completion, Message, forced
from threadsage.tools.calculator import CalculationError, calculate, formatted
from threadsage.tools.dates import Calendar, DateError, answer_date_question

MAX_TOOL_ROUNDS = 2

# (messages, tools offered, tool_choice) -> the model's reply
Invoke = Callable[[list[Message], Sequence[type[BaseModel]], str | dict[str, Any]], Awaitable[Completion]]


class Calculator(BaseModel):
    """Evaluate arithmetic exactly. Use it for every calculation, e.g. "15% of 180", "(1200 - 200) * 3"."""

    expression: str = Field(description="Numbers with + - * / ** %, brackets, and 'N% of M'.")


class Dates(BaseModel):
    """Date arithmetic relative to today, in the organisation's time zone (Monday-Friday working days)."""

    question: str = Field(
        description='One of: "what is today\'s date?", "how many working days until <date>?", '
        '"how many days until <date>?", "what date is <n> working days from today?"'
    )


TOOLS = (Calculator, Dates)


def run_tool(name: str, args: dict[str, Any], calendar: Calendar) -> str:
    """A tool's result as text for the model; a refusal says why, in words."""
    try:
        if name == Calculator.__name__:
            expression = str(args.get("expression", ""))
            return f"{expression} = {formatted(calculate(expression))}"
        if name == Dates.__name__:
            question = str(args.get("question", ""))
            return answer_date_question(question, calendar) or f"Cannot answer the date question: {question}"
    except (CalculationError, DateError) as exc:
        return f"Error: {exc}"
    return f"Error: there is no tool called {name}."


async def answer_with_tools(
    invoke: Invoke, messages: list[Message], calendar: Calendar, report: type[BaseModel]
) -> tuple[Completion, list[str]]:
    """The model's final reply to `messages` and what the tools it called computed, run in between.

    The model must call a tool (`tool_choice="required"`): a calculation, or `report`, the answer
    itself as structured output; after MAX_TOOL_ROUNDS only `report` is offered. A server that
    ignores `tool_choice` may answer in plain text instead: that reply is final too. A call whose
    arguments are no JSON object runs with none, and the tool says what it misses.
    """
    offered = (*TOOLS, report)
    used: list[str] = []
    for _ in range(MAX_TOOL_ROUNDS):
        reply = await invoke(messages, offered, "required")
        if not reply.tool_calls or any(call.name == report.__name__ for call in reply.tool_calls):
            return reply, used
        messages = [*messages, reply.as_message()]
        for call in reply.tool_calls:
            result = run_tool(call.name, call.args or {}, calendar)
            used.append(result)
            messages.append({"role": "tool", "tool_call_id": call.id or call.name, "content": result})
    return await invoke(messages, offered, forced(report)), used


def shown(answer: str, used: list[str]) -> str:
    """The answer with what the tools computed under it, so a person can check the arithmetic."""
    if not used or not answer:
        return answer
    return answer + "\n\n" + "\n".join(f"_Computed: {result}_" for result in used)
