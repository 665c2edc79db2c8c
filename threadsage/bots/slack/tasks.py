"""The steps of a turn as Slack's own task timeline in a streamed answer (`task_update` chunks of
`chat.startStream`/`chat.stopStream`, `task_display_mode: "timeline"`; a deep search's sub-questions
under a `plan_update` title): what the placeholder or the thread's status showed while nothing was
written yet stays above the answer, each step done, the writing one in progress until the stream
stops (docs.slack.dev, "Text streaming")."""

from __future__ import annotations

from slack_sdk.models.messages.chunk import Chunk, PlanUpdateChunk, TaskUpdateChunk

from threadsage.bots.replies import STEPS
from threadsage.chat import Progress, Step
from threadsage.i18n import say

MAX_DETAIL = 256  # a task's `details`: "Maximum 256 characters"
DISPLAY_MODE = "timeline"


class Tasks:
    """The steps seen so far, one task each (a step entered again with another detail, a deep
    search's next sub-question, is a task of its own)."""

    def __init__(self) -> None:
        self._steps: list[Progress] = []

    def saw(self, progress: Progress) -> None:
        if not self._steps or self._steps[-1] != progress:
            self._steps.append(progress)

    def started(self) -> list[Chunk]:
        """The chunks the stream starts with: a plan's title when the search went in several
        sub-questions, every step done but writing, which the words now show in progress."""
        if not self._steps:
            return []
        chunks: list[Chunk] = []
        questions = [p for p in self._steps if p.detail]
        if len(questions) > 1:
            chunks.append(PlanUpdateChunk(title=say("slack_plan", self._steps[0].language, count=len(questions))))
        chunks += [
            self._task(i, p, "in_progress" if p.step is Step.WRITING else "complete") for i, p in enumerate(self._steps)
        ]
        return chunks

    def finished(self) -> list[Chunk]:
        """The chunks the stream stops with: the writing step done."""
        return [self._task(i, p, "complete") for i, p in enumerate(self._steps) if p.step is Step.WRITING]

    @staticmethod
    def _task(number: int, progress: Progress, status: str) -> TaskUpdateChunk:
        detail = progress.detail[:MAX_DETAIL] if progress.detail else None
        title = say(STEPS[progress.step], progress.language)
        return TaskUpdateChunk(id=f"step-{number}", title=title, status=status, details=detail)
