"""Escalations across platforms (issue 38): a question whose category's experts are on another
platform than the question's goes to them through that platform's bot, and their first reply
comes back through the asker's bot. The core knows neither platform: each bot registered its
`Notifier` (`notify`), which shows an `Escalation` to its experts and gives an `ExpertAnswer` to
its askers. Both bots must run in the process; where the other one does not, the question is
handled as having no experts, and that is logged once.

What the experts' bot needs when a reply comes — which question it answers, in which language —
is kept by the coordinator for `ESCALATION_KEPT` (Redis, with several processes: any process
running both bots may take the reply). Which reply is the first (the bots' relay keys), the
escalation once per question, and the console's records stay with the bots, as for their own
platform's escalations.
"""

from __future__ import annotations

import dataclasses
import json
import logging
from dataclasses import dataclass, field

from threadsage.chat.notify import Escalation, ExpertAnswer, Notifier
from threadsage.delivery.coordination import Coordinator
from threadsage.settings.help_channels import platform_of

log = logging.getLogger(__name__)

ESCALATION_KEPT = 30 * 24 * 3600.0  # seconds an escalation, its draft and a relayed reply are remembered


@dataclass
class Elsewhere:
    """Escalations to the experts of another platform, through the bots registered here."""

    notifiers: dict[str, Notifier]  # by platform: the knowledge loop's, which the bots register
    coordinator: Coordinator
    _unreached: set[str] = field(default_factory=set)  # the platforms whose absence was logged

    def reaches(self, platform: str) -> bool:
        """Whether the bot of `platform` runs in this process (it registered its notifier): only
        then does a question go to experts there. Logged once when not."""
        if platform in self.notifiers:
            return True
        if platform not in self._unreached:
            self._unreached.add(platform)
            log.warning(
                "THREADSAGE_EXPERTS names experts on %s, but no %s bot runs in this process: questions for them are "
                "handled as having no experts",
                platform,
                platform,
            )
        return False

    async def escalate(self, escalation: Escalation, experts: str) -> None:
        """`escalation` posted in the experts' place `experts` by that platform's bot (one that
        `reaches`), and kept for their reply."""
        message = await self.notifiers[platform_of(experts)].escalate(escalation, experts)
        kept = dataclasses.asdict(dataclasses.replace(escalation, attempt=None))
        await self.coordinator.remember(_key(experts, message), json.dumps(kept), ESCALATION_KEPT)

    async def escalation(self, experts: str, message: str) -> Escalation | None:
        """The escalation from another platform that the message `message` in the experts' place
        `experts` is; None for any other message (or one older than `ESCALATION_KEPT`)."""
        kept = await self.coordinator.recall(_key(experts, message))
        return Escalation(**json.loads(kept)) if kept is not None else None

    async def relay(self, escalation: Escalation, answer: ExpertAnswer) -> bool:
        """The expert's answer to the person who asked, by the bot of the question's platform (one
        that `reaches`); False when the question is gone."""
        return await self.notifiers[escalation.platform].relay(escalation, answer)


def _key(experts: str, message: str) -> str:
    return f"escalation:{experts}:{message}"
