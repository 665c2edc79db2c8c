"""The answer's 👍/👎 as Slack's own feedback buttons (a `context_actions` block), clicked as Slack
sends the click (docs.slack.dev/reference/block-kit/block-elements/feedback-buttons-element)."""

from __future__ import annotations

from tests.fakes.slack_api import action_body
from tests.helpers.slack_harness import CHANNEL, TRAVEL, Harness, next_ts, thread_messages
from threadsage.bots.slack.places import Place
from threadsage.bots.tokens import Button, ButtonKind, session_digest
from threadsage.chat import turn_ref


async def test_a_vote_with_slacks_feedback_buttons_is_recorded_for_the_answer(slack: Harness) -> None:
    ts = await slack.mention(TRAVEL)
    await slack.settle()
    [answer] = thread_messages(slack.fake, ts)
    await slack.click(answer, 1, user="U333")  # 👎
    await slack.click(answer, 0)  # 👍
    await slack.settle()
    votes = await slack.chat.feedback.votes(f"slack:T111:{CHANNEL}:{ts}", turn_ref(f"{CHANNEL}:{ts}"))
    assert votes == {"U333": -1, "U222": 1}


async def test_the_buttons_of_answers_posted_before_still_count(slack: Harness) -> None:
    """Answers already in threads carry the bot's own buttons: their clicks are still votes."""
    ts = await slack.mention(TRAVEL)
    await slack.settle()
    [answer] = thread_messages(slack.fake, ts)
    place = Place("T111", CHANNEL, ts, False)
    value = slack.bot.signer.sign(
        Button(ButtonKind.FEEDBACK, session_digest(place.session), turn_ref(f"{CHANNEL}:{ts}"), 0)
    )
    body = action_body(answer, CHANNEL, "U222", "feedback:down", value, "👎", next_ts())
    assert await slack.send(body, content_type="application/x-www-form-urlencoded") == 200
    await slack.settle()
    votes = await slack.chat.feedback.votes(f"slack:T111:{CHANNEL}:{ts}", turn_ref(f"{CHANNEL}:{ts}"))
    assert votes == {"U222": -1}
