"""The steps of a turn as Slack's own task timeline in a streamed answer (`task_update` chunks of
`chat.startStream`/`chat.stopStream`, `task_display_mode: "timeline"`; a deep search's sub-questions
under a `plan_update` title): what the placeholder or the thread's status showed while nothing was
written yet stays above the answer, each step done, the writing one in progress until the stream
stops (docs.slack.dev, "Text streaming"). A search's task says what it found, with the documents
that have a web address as its sources."""

from __future__ import annotations

from slack_sdk.models.blocks.block_elements import UrlSourceElement
from slack_sdk.models.messages.chunk import Chunk, PlanUpdateChunk, TaskUpdateChunk

from threadsage.bots.replies import STEPS, found_text, web_sources
from threadsage.chat import Found, Progress, Step
from threadsage.i18n import say

MAX_DETAIL = 256  # a task's `details` and `output`: "Maximum 256 characters"
MAX_SOURCES = 5  # of a search's documents, the first by rank
DISPLAY_MODE = "timeline"


class Tasks:
    """The steps seen so far, one task each (a step entered again with another detail, a deep
    search's next sub-question, is a task of its own)."""

    def __init__(self) -> None:
        self._steps: list[Progress] = []
        self._found: dict[int, Found] = {}  # a searching task → what it found (told by the step after it)

    def saw(self, progress: Progress) -> None:
        searched = next((i for i in range(len(self._steps) - 1, -1, -1) if self._steps[i].step is Step.SEARCHING), None)
        if progress.found is not None and searched is not None and searched not in self._found:
            self._found[searched] = progress.found
        if not self._steps or self._steps[-1].step != progress.step or self._steps[-1].detail != progress.detail:
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

    def _task(self, number: int, progress: Progress, status: str) -> TaskUpdateChunk:
        """A step as a task; a search with what it found: "Found 5 passages in 3 documents", and the
        documents that have a web address as its sources."""
        detail = progress.detail[:MAX_DETAIL] if progress.detail else None
        title = say(STEPS[progress.step], progress.language)
        found = self._found.get(number)
        if found is None:
            return TaskUpdateChunk(id=f"step-{number}", title=title, status=status, details=detail)
        output = found_text(found, progress.language)[:MAX_DETAIL]
        sources = [UrlSourceElement(url=url, text=name[:MAX_DETAIL]) for name, url in web_sources(found)[:MAX_SOURCES]]
        return TaskUpdateChunk(
            id=f"step-{number}", title=title, status=status, details=detail, output=output, sources=sources or None
        )
