"""The terminal chat driven through piped standard input, as a script would."""

from __future__ import annotations

import io

from rich.console import Console

from tests.helpers.conversation import QUESTION, llm_chat, route_to
from tests.helpers.locations import HANDBOOK
from threadsage.bots.terminal import TerminalChat


def test_make_run_path_ingests_the_demo_and_chats(cli) -> None:
    script = "hello\nHow do I reset my password?\n1\n/help\n"
    result = cli("run", "--demo", str(HANDBOOK), "--session", "s1", stdin=script)
    assert result.exit_code == 0, result.output
    assert "knowledge base was empty; ingested" in result.stderr
    assert "reasoning: offline" in result.stderr and "session s1" in result.stderr
    out = result.stdout
    assert "Hi! I answer questions" in out
    assert "  1. VPN access with Larkspur Connect › Resetting your password" in out
    assert "  2. E-mail and calendar › Resetting your password" in out
    assert "(type a number, or answer in your own words)" in out
    assert "gatekeeper.larkspurlabs.example/reset" in out
    assert "Sources:\n  [1] VPN access with Larkspur Connect › Resetting your password — it/vpn.md" in out
    assert "/new   start a new conversation" in out


def test_a_session_resumes_across_restarts_and_new_forgets_it(cli) -> None:
    first = cli("chat", "--demo", str(HANDBOOK), "--session", "team", stdin="What is the hotel limit?\n")
    assert "  2. Expenses policy – Toronto office › Hotel limits" in first.stdout
    resumed = cli("chat", "--session", "team", stdin="2\n")
    assert "From *Expenses policy – Toronto office › Hotel limits*" in resumed.stdout
    assert "CA$220" in resumed.stdout
    again = cli("chat", "--session", "team", stdin="What is the hotel limit?\n/new\n1\n")
    # after /new the "1" is an ordinary (unanswerable) message, not a click on a stale option
    assert again.stdout.count("Which one do you mean?") == 1
    assert "Started a new conversation." in again.stdout
    assert "From *Expenses policy – Lisbon office" not in again.stdout


def test_without_a_session_each_run_is_new(cli) -> None:
    cli("chat", "--demo", str(HANDBOOK), stdin="What is the hotel limit?\n")
    fresh = cli("chat", stdin="2\n")
    assert "Hotel limits*" not in fresh.stdout


async def test_the_answer_is_printed_as_it_is_written_and_not_twice(tmp_path, llm, handbook_kb) -> None:
    """Piped, on the model back-end: the words come out as drafts arrive; the reply adds only what
    the draft did not say (the sources); a draft the check rejected is cut off with '…' and the
    reply then printed whole."""
    answer = "Premium economy is allowed for flights of six hours or more [1]."
    llm.tokens_per_second = 400
    llm.script["RouteDecision"] = route_to("HOW_TO")
    llm.script["answer"] = {"answer": answer, "used": [1]}
    out = io.StringIO()
    async with llm_chat(tmp_path, llm, handbook_kb) as chat:
        terminal = TerminalChat(chat, "s1", Console(file=out, force_terminal=False, width=200))
        await terminal.ask(QUESTION)
        first = out.getvalue()
        llm.script["answer"] = [{"answer": "Ask someone [1].", "used": [1]}, {"answer": answer, "used": [1]}]
        llm.script["Verdict"] = [{"grounded": 0, "useful": 0, "reasoning": "no"}, {"grounded": 1, "useful": 1}]
        await terminal.ask(QUESTION + " Really?")
    assert first.count("Premium economy is allowed") == 1
    assert first.startswith("Premium economy is allowed for flights of six hours or more.\n")
    assert "Sources:\n  [1] Business travel policy" in first
    second = out.getvalue()[len(first) :]
    assert second.startswith("Ask someone. …\nPremium economy is allowed")
