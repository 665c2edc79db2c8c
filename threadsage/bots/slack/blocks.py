"""Replies as Block Kit: sections of mrkdwn within Slack's limits, the hand-off contact (a real
mention only with THREADSAGE_HANDOFF_MENTION), the sources and the low-confidence note as context,
signed buttons for clarifications and feedback — the bot's own words in the reply's language."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from threadsage.bots.render import to_mrkdwn, to_mrkdwn_sections, to_slack_fallback
from threadsage.bots.replies import source_markdown
from threadsage.bots.slack.places import Place
from threadsage.bots.slack.texts import escaped
from threadsage.bots.tokens import Button, ButtonKind, Signer, session_digest
from threadsage.chat import Citation, Reply, ReplyKind, Turn, turn_ref
from threadsage.i18n import Language, language_of, say

MAX_BLOCKS = 50
ESCALATE_ACTION = "escalate"  # "Still need help?" (`help`)
RESOLVE_ACTION = "resolve"  # "Resolved" (`resolving`)
FEEDBACK_ACTION = "feedback:vote"  # answers posted before it carry buttons "feedback:up" / "feedback:down"
TEXT_FALLBACK_CHARS = 3000

Message = tuple[list[dict[str, Any]], str]  # blocks and the plain-text fallback (notifications, old clients)


MARKDOWN_BLOCK_CHARS = 12_000  # "The cumulative limit for all markdown blocks in a single payload"
SLACK_CONTROL = re.compile(r"[<>&]")


@dataclass(frozen=True)
class Helping:
    """The help buttons under an answer: "Still need help?" (to the experts) when there are experts
    (`help`), "Resolved" in the help channels (`resolving`)."""

    escalate: bool = False
    resolvable: frozenset[str] = frozenset()

    def buttons(self, place: Place, turn: Turn, signer: Signer, language: Language) -> list[dict[str, Any]]:
        ref, digest = turn_ref(turn.message_id), session_digest(place.session)
        wanted = [(ButtonKind.ESCALATE, ESCALATE_ACTION, "escalate_button")] if self.escalate else []
        if place.channel in self.resolvable:
            wanted.append((ButtonKind.RESOLVE, RESOLVE_ACTION, "resolve_button"))
        return [
            {
                "type": "button",
                "action_id": action,
                "text": {"type": "plain_text", "text": say(label, language)},
                "value": signer.sign(Button(kind, digest, ref, 0)),
            }
            for kind, action, label in wanted
        ]


NO_HELP = Helping()


def reply_messages(
    reply: Reply, place: Place, turn: Turn, signer: Signer, mention: bool = False, helping: Helping = NO_HELP
) -> list[Message]:
    """The messages a reply takes: long answers are split, and the hand-off, the sources, the note
    and the feedback buttons go under the last part — with experts to ask, "Still need help?" too,
    and in a help channel "Resolved" (`helping`)."""
    if reply.kind is ReplyKind.CLARIFICATION:
        return [(clarification_blocks(reply, place, signer), fallback(reply.text))]
    sections = body_blocks(reply.text)
    tail: list[dict[str, Any]] = []
    if reply.kind is ReplyKind.ANSWER:
        if reply.handoff is not None:
            contact = (mention and reply.handoff.slack_mention) or escaped(reply.handoff.plain)
            tail.append(section(say("handoff", reply.language, contact=contact)))
        if reply.low_confidence:
            tail.append(context(f"_{say('low_confidence', reply.language)}_"))
        if reply.citations:
            tail.append(context(sources(reply.citations, reply.language)))
        tail.append(feedback_block(place, turn, signer))
        if not place.private_for and (buttons := helping.buttons(place, turn, signer, reply.language)):
            tail.append({"type": "actions", "block_id": f"help-{turn_ref(turn.message_id)}", "elements": buttons})
    messages = []
    room = MAX_BLOCKS - len(tail)
    for start in range(0, len(sections), room):
        last = start + room >= len(sections)
        messages.append((sections[start : start + room] + (tail if last else []), fallback(reply.text)))
    return messages


def clarification_blocks(reply: Reply, place: Place, signer: Signer) -> list[dict[str, Any]]:
    """The question, one button per option, and a hint that a typed answer works too."""
    digest = session_digest(place.session)
    buttons = [
        {
            "type": "button",
            "action_id": f"clarify:{choice.id}",
            "text": {"type": "plain_text", "text": choice.label[:75], "emoji": True},
            "value": signer.sign(Button(ButtonKind.CLARIFY, digest, reply.interrupt_id or "", int(choice.id))),
        }
        for choice in reply.choices
    ]
    blocks = [section(piece) for piece in to_mrkdwn_sections(reply.text)]
    if buttons:
        blocks.append({"type": "actions", "block_id": f"clarify-{(reply.interrupt_id or '')[:8]}", "elements": buttons})
    blocks.append(context(say("slack_hint_buttons" if buttons else "slack_hint_typed", reply.language)))
    return blocks


def feedback_block(place: Place, turn: Turn, signer: Signer) -> dict[str, Any]:
    """Slack's own 👍/👎 (a `context_actions` block holding `feedback_buttons`), each value a signed
    token naming the answer and the vote."""
    ref = turn_ref(turn.message_id)

    def button(emoji: str, vote: int) -> dict[str, Any]:
        token = signer.sign(Button(ButtonKind.FEEDBACK, session_digest(place.session), ref, vote))
        return {"text": {"type": "plain_text", "text": emoji}, "value": token}

    element = {
        "type": "feedback_buttons",
        "action_id": FEEDBACK_ACTION,
        "positive_button": button("👍", 1),
        "negative_button": button("👎", 0),
    }
    return {"type": "context_actions", "block_id": f"feedback-{ref}", "elements": [element]}


def choice_shown(body: dict[str, Any], label: str, user: str) -> Message:
    """A clicked clarification as it stays in the thread: its question, no buttons, the choice."""
    question = next(
        (b["text"]["text"] for b in body.get("message", {}).get("blocks", []) if b.get("type") == "section"),
        body.get("message", {}).get("text", ""),
    )
    choice = say("slack_chose", language_of(question), user=user, label=to_mrkdwn(label))
    return [section(question), context(choice)], to_slack_fallback(f"{question} — {label}")


def sources(citations: tuple[Citation, ...], language: Language) -> str:
    return to_mrkdwn(f"**{say('sources', language)}:** " + " · ".join(source_markdown(c) for c in citations))


def body_blocks(markdown: str) -> list[dict[str, Any]]:
    """An answer's text: one `markdown` block, which Slack renders from standard Markdown itself
    (tables, code, lists; and Chinese, whose mrkdwn markers Slack often fails to read), where it
    fits — at most `MARKDOWN_BLOCK_CHARS`, and none of Slack's control characters (`<`, `>`, `&`:
    what a quoted `<!channel>` would become in a markdown block is not documented); else mrkdwn
    sections, escaped and split (`render`)."""
    if 0 < len(markdown) <= MARKDOWN_BLOCK_CHARS and not SLACK_CONTROL.search(markdown):
        return [{"type": "markdown", "text": markdown}]
    return [section(piece) for piece in to_mrkdwn_sections(markdown)]


def section(mrkdwn: str) -> dict[str, Any]:
    return {"type": "section", "text": {"type": "mrkdwn", "text": mrkdwn[:3000]}}


def context(mrkdwn: str) -> dict[str, Any]:
    return {"type": "context", "elements": [{"type": "mrkdwn", "text": mrkdwn[:3000]}]}


def fallback(markdown: str) -> str:
    return to_slack_fallback(markdown, TEXT_FALLBACK_CHARS)
