"""A turn delivered again: the turn queue hands a job to another worker when the first died, perhaps
after the turn's run had finished (or paused to ask back) but before its replies were delivered.

Such a turn is never run a second time: what it produced is read back from its checkpoint and
given again, built exactly as the first delivery built it (the answer with its hand-off contact,
or the clarification). Only a turn that had not got that far runs on, from whatever of it was
saved (its input at least). (`snapshot.next` cannot tell these apart: it is empty as soon as the
writes of a step are saved, before the step's checkpoint.)
"""

from __future__ import annotations

import logging
from typing import Any

from langgraph.types import StateSnapshot

from threadsage.adapters.knowledge import KnowledgeBase
from threadsage.chat.replies import answered, clarification_reply, pending_of, request_of
from threadsage.chat.turns import Reply
from threadsage.support.handoff import Handoff

log = logging.getLogger(__name__)


async def replies_already_given(
    turn_id: str, snapshot: StateSnapshot, handoff: Handoff, kb: KnowledgeBase
) -> tuple[list[Reply], dict[str, Any]] | None:
    """The replies turn `turn_id` gave when it finished or asked back, and the state its run
    ended in (as a run returns it, for the recording); None when it had done neither and must run
    on from its last checkpoint."""
    if snapshot.values.get("finished_turn") == turn_id:
        log.info("turn %s had finished; its answer is given again", turn_id)
        return [await answered(handoff, kb, snapshot.values)], snapshot.values
    pending = pending_of(snapshot)
    if pending is not None and request_of(pending).get("turn") == turn_id:
        log.info("turn %s had asked back; its clarification is given again", turn_id)
        return [clarification_reply(pending, snapshot.values)], {**snapshot.values, "__interrupt__": [pending]}
    log.info("turn %s resumed from its last checkpoint", turn_id)
    return None
