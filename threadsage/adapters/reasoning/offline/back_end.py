"""The offline reasoning back-end: no network, deterministic, honest about what it is.

It routes by lexical cues and by the retrieval evidence, and answers extractively: the sentences of
the retrieved passages that best cover the question, each with its citation — or, where the words
do not tell (a question in a person's own words), the place the meaning reads closest (`reading.py`).
Ambiguity is read off the evidence: when passages from different documents match the question about
equally well and the question names nothing that tells them apart ("reset my password" — VPN or
e-mail?), those documents become the clarification options.
"""

from __future__ import annotations

import asyncio
import functools
import math
import re
from collections.abc import Callable, Coroutine, Sequence
from typing import Any, Concatenate, ParamSpec, TypeVar

from threadsage.adapters.documents.attachments import SOURCE_PREFIX, points_at_attachment
from threadsage.adapters.questions import small_talk
from threadsage.adapters.questions.ambiguity import alternatives, option, passage_terms
from threadsage.adapters.questions.exclusion import about_excluded, split_exclusion
from threadsage.adapters.reasoner import GroundedAnswer, Passage, RouteDecision, TurnImage, Verdict, passage_label
from threadsage.adapters.reasoning.offline.choosing import (
    COMPARISON,
    QUANTITY,
    best_sentences,
    left_out_sides,
    named_section,
    parallel_statements,
    set_aside,
    states_quantity,
    worked_out,
)
from threadsage.adapters.reasoning.offline.confidence import (
    HEDGE_COVERAGE,
    Frequencies,
    Sureness,
    signals,
    term_weights,
)
from threadsage.adapters.reasoning.offline.follow_ups import AFTER, followed_up, named_by_follow_up, own_words
from threadsage.adapters.reasoning.offline.reading import (
    EXCERPT_CHARS,
    Reading,
    closest_place,
    parts,
    read,
    readings,
    window,
)
from threadsage.i18n import Language, language_of, passage_language, say
from threadsage.i18n.glossing import can_gloss, glossed
from threadsage.support.text import first_cue, term_set, terms

T = TypeVar("T")
P = ParamSpec("P")

# A gloss this much (by weight) made of words no document uses is about something they do not cover
# (calibrated on the Chinese questions of every public set; docs/performance.md, "The offline reader").
GLOSS_UNKNOWN = 0.6

_CODE = re.compile(
    r"\b(source code|code (snippet|example|sample)|sample code|command|commands|cli|script|"
    r"function (call|signature|definition)|snippet|endpoint|yaml|syntax|regex|sql|curl|stack ?trace)\b|代码|命令",
    re.IGNORECASE,
)
_HOW_TO = re.compile(
    r"^\s*(how (do|can|should|would) (i|we|you)|how to|steps|what steps|what is the process|"
    r"walk me through|help me)\b|如何|怎么|怎样|步骤",
    re.IGNORECASE,
)
_INTENTS = ((COMPARISON, "COMPARISON"), (_CODE, "CODE_SEARCH"), (_HOW_TO, "HOW_TO"))
_FOLLOW_UP = re.compile(
    r"^\s*(and|also|but|or|what about|how about|same for|then|so)\b|\b(it|that|this|they|them|those|these|there)\b"
    r"|^\s*(那|那么|还有|它|这个|那个)",
    re.IGNORECASE,
)
_HOW_MANY = re.compile(r"\bhow (many|much)\b", re.IGNORECASE)
_MARKS = re.compile(r"\[\d+\]")  # the citations' numbers are no amounts
_BETWEEN = re.compile(r"\bbetween (.+?) and (.+?)(?:[?.!]|$)", re.IGNORECASE)


def off_the_loop(
    method: Callable[Concatenate[OfflineReasoner, P], T],
) -> Callable[Concatenate[OfflineReasoner, P], Coroutine[Any, Any, T]]:
    """The offline back-end is pure-Python CPU work (tens of milliseconds a turn): run it in a
    worker thread so the event loop keeps acknowledging platforms meanwhile."""

    @functools.wraps(method)
    async def run(self: OfflineReasoner, /, *args: P.args, **kwargs: P.kwargs) -> T:
        return await asyncio.to_thread(method, self, *args, **kwargs)

    return run


class OfflineReasoner:
    name = "offline (extractive, no language model)"

    def __init__(self, frequencies: Frequencies | None = None, glosses: bool = True) -> None:
        # The knowledge base's term statistics: question terms weigh by rarity (`confidence`).
        self.frequencies = frequencies
        # Whether the knowledge base searches a question in another language by its gloss (no
        # embeddings); with a multilingual embedding the passages were found by meaning, which a
        # word-by-word gloss judges worse (密码 glosses to "cipher, secret code", not "password").
        self.glosses = glosses

    def sureness(self, question: str, evidence: Sequence[Passage]) -> tuple[Sureness, int]:
        """Answer, quote the closest passage saying it may not answer, or say "not covered"; and
        which passage of the evidence leads (`reading.read`)."""
        reading = self.reading(question, evidence)
        return reading.sureness, reading.lead

    def reading(self, question: str, evidence: Sequence[Passage]) -> Reading:
        """How the evidence reads for the question (`reading.py`). A question that points at the
        file sent, answered from it, is answered."""
        if evidence and evidence[0]["source"].startswith(SOURCE_PREFIX) and points_at_attachment(question):
            return Reading(Sureness.ANSWER, 0)
        language = language_of(question)
        elsewhere = [i for i, p in enumerate(evidence) if passage_language(p["text"]) != language]
        if elsewhere and not self.glosses:
            return Reading(Sureness.HEDGE, elsewhere[0])  # found by a multilingual embedding: quoted as the closest
        into = passage_language(evidence[elsewhere[0]]["text"]) if elsewhere else language
        if elsewhere and can_gloss(language, into):
            own = signals(_wanted(question), evidence, self.frequencies)
            if own.sureness() is Sureness.ANSWER and own.lead not in elsewhere:
                return Reading(Sureness.ANSWER, own.lead)  # a page in the question's language answers
            # Found by the gloss (`i18n.glossing`): the first page in the other language is quoted
            # as the closest — unless the gloss is mostly words no document uses ("法国的首都是哪里？"
            # over a handbook), or the passages hold little of it: then "not covered", in its language.
            # Weighed against the pages in the other language only: a page in the question's own
            # language holds none of the gloss's words, and leading, it read as "not covered".
            gloss = signals(term_set(glossed(question)), [evidence[i] for i in elsewhere], self.frequencies)
            if gloss.unknown >= GLOSS_UNKNOWN or gloss.coverage < HEDGE_COVERAGE:
                return Reading(Sureness.ABSTAIN, 0)
            return Reading(Sureness.HEDGE, elsewhere[gloss.lead])
        return read(question, evidence, signals(_wanted(question), evidence, self.frequencies))

    @off_the_loop
    def contextualise(self, question: str, history: Sequence[tuple[str, str]]) -> str:
        previous = [text for role, text in history if role == "user" and not small_talk.is_small_talk(text)]
        if not previous or not _FOLLOW_UP.search(question):
            return question
        # The earlier question (as finally understood) supplies the topic. Measured on the
        # GitLab anaphora questions: a gold file is cited for 19 of 25 follow-ups, 2 without it.
        # Marked, so that the reader can tell what the follow-up itself asks (`follow_ups.own_words`).
        return f"{question.strip()}{AFTER}{previous[-1].strip()})"

    @off_the_loop
    def route(self, question: str, evidence: Sequence[Passage]) -> RouteDecision:
        if small_talk.is_small_talk(question):
            return RouteDecision(intent="CHIT_CHAT", confidence=0.9, reasoning="a greeting or small talk")
        query = _wanted(question)
        reading = self.reading(question, evidence)
        sureness = reading.sureness
        if sureness is Sureness.ABSTAIN:
            return RouteDecision(
                intent="UNKNOWN",
                confidence=0.7,
                reasoning="no passage covers enough of the question's rarer terms",
            )
        exclusion = split_exclusion(question)
        options: list[str] = []  # an unsure reading is no reason to ask back
        if sureness is Sureness.ANSWER:
            weights, _ = term_weights(query, self.frequencies)
            found = alternatives(query, [p for p in evidence if not about_excluded(p, exclusion)], weights)
            if not found and not exclusion:
                # Sections of different documents that read about equally close to a short
                # question are its readings (`reading.readings`).
                found = [evidence[i] for i in readings(question, evidence, reading)]
            options = [option(p) for p in found]
            if not options and not exclusion and not parts(question):
                # Statements worded alike that give different figures (`choosing.parallel_statements`).
                alike = reading.alike(_lead_first(evidence, reading.lead))
                options = parallel_statements(sorted(query), alike, bool(QUANTITY.search(question)))
        if len(options) >= 2:
            return RouteDecision(
                intent=_intent(question),
                confidence=0.4,
                clarify=True,
                reasoning=f"{len(options)} documents match equally well and the question does not say which",
                clarify_prompt=say("clarify_several", language_of(question)),
                clarify_options=options,
            )
        if sureness is Sureness.HEDGE:
            return RouteDecision(
                intent="FACT_LOOKUP",
                confidence=0.65,  # above the clarify threshold: a hedge is not a reason to ask back
                reasoning="the closest passage covers part of the question: quoted as possibly not answering",
            )
        intent = _intent(question)
        return RouteDecision(
            intent=intent,
            confidence=0.85 if intent != "FACT_LOOKUP" else 0.75,
            reasoning=f"lexical cues say {intent}; one document matches best",
        )

    @off_the_loop
    def grade(self, question: str, passages: Sequence[Passage]) -> list[bool]:
        query = _wanted(question)
        needed = max(1, math.ceil(0.3 * len(query)))
        return [len(query & passage_terms(p)) >= needed for p in passages]

    async def answer(
        self, question: str, passages: Sequence[Passage], images: Sequence[TurnImage] = ()
    ) -> GroundedAnswer:
        """The extract, relying on the passages it quotes (the graph keeps the cited ones). Extraction
        grades by itself — it quotes sentences for the question's terms — and dropping passages by
        `grade` first cost GitLab multi-hop questions answered from the gold file 25/25 → 23/25.
        Images are read by their OCR text, already among the passages."""
        return GroundedAnswer(answer=await self.extract(question, passages), used=[])

    @off_the_loop
    def extract(self, question: str, passages: Sequence[Passage]) -> str:
        """The sentences (or the section) of the passages that best answer the question, cited [n]."""
        query = terms(split_exclusion(question).query)
        language = language_of(question)
        if not query or not passages:
            return say("not_found", language)
        reading = self.reading(question, passages)
        sureness, lead = reading.sureness, reading.lead
        top, mark = passages[lead], f"[{lead + 1}]"
        numbered = _lead_first(passages, lead)

        def unsure() -> str:
            """What the closest passage says, labelled as possibly not answering."""
            key, closest = "closest_passage", reading.closest_sentence
            if _other_language(question, top):
                # Where the question's gloss lands in the passage, when one was made.
                key, closest = "closest_in_other_language", _glossed_sentence(question, top)
            return f"{say(key, language, label=passage_label(top))}\n\n{window(top['text'], closest)} {mark}"

        if sureness is not Sureness.ANSWER:
            return unsure()
        if (named := named_by_follow_up(question, passages)) is not None and named != lead:
            # The follow-up names another section of the topic ("And for long-term leave?" after a
            # question on short-term leave): that one, at its sentence closest to the follow-up.
            sentence = followed_up(own_words(question), passages[named])
            return _figured(question, _place(passages, named, sentence, language), unsure)
        pointed = top["source"].startswith(SOURCE_PREFIX) and points_at_attachment(question)
        if pointed or named_section(set(query), top):
            # The best section is *about* the question ("Hotel limits", "Resetting your
            # password"), or the question is about the file sent: quote it, steps and tables
            # included, rather than pick sentences.
            section = f"{say('from_section', language, label=passage_label(top))}\n\n{window(top['text'], '')} {mark}"
            return _figured(question, section, unsure)
        if own := followed_up(own_words(question), top):
            # A follow-up ("And if I'm sick?") read with the question before it: the topic found the
            # place, the follow-up's own words choose what of it to show — not the answer before.
            # (Reading the other passages of the topic's page for them too: publiccode 8 → 7 of 10.)
            return _figured(question, _place(passages, lead, own, language), unsure)
        if reading.by_meaning and not worked_out(question, numbered):
            # Read by meaning: the place that holds the closest sentence, with what follows it; for
            # a question in two parts ("…, and to whom do I send the form?"), the place each part reads
            # closest to as well, where that is another (the whole question may read closest to
            # either part's place).
            shown = [(lead, reading.closest_sentence)]
            for part in parts(question):
                if (place := closest_place(part, passages)) and place[0] not in {i for i, _ in shown}:
                    shown.append(place)
            quoted = [_place(passages, i, sentence, language) for i, sentence in shown]
            if len(shown) == 1:
                quoted += [f"- {sentence} [{number}]" for number, sentence in left_out_sides(question, numbered, [])]
            return _figured(question, "\n\n".join(quoted), unsure)
        # Sentences of the passages that read about as close as the lead (gathered from every
        # passage, they read as noise whenever a lower one shared the question's incidental words).
        best = best_sentences(query, reading.alike(numbered), wants_quantity=bool(QUANTITY.search(question)))
        best = set_aside(set(query), best)
        if not best:
            return say("not_found", language)
        # A question naming two things ("X and Y", "X vs Y", "X和Y有什么区别"): the best sentence for
        # the thing the sentences chosen for the whole question leave out.
        chosen = [(number, sentence) for _, _, number, sentence in best] + left_out_sides(question, numbered, best)
        lines = [f"- {sentence} [{number}]" for number, sentence in chosen]
        computed = worked_out(question, numbered)
        if computed:
            # Each side's figure quoted with its citation, then the calculator's result.
            lines += [
                f"- {sentence} [{number}]"
                for number, sentence in computed[1]
                if f"{sentence} [{number}]" not in "\n".join(lines)
            ]
            lines.append(say("computed_offline", language, expression=computed[0][0], result=computed[0][1]))
        # One place instead of the list: every sentence chosen is of the leading section, and it is
        # short — the section whole says the same with what the words missed around it (a person's
        # own words share few); or one sentence was chosen — its paragraph, which often holds what
        # the words missed (a sentence naming what an allowance covers; its figure is the one before).
        short = len(top["text"].strip()) <= EXCERPT_CHARS
        whole = not computed and short and {number for number, _ in chosen} == {lead + 1}
        single: tuple[int, str] | None = None
        if whole:
            single = (lead, "")
        elif not computed and len(chosen) == 1:
            single = (chosen[0][0] - 1, chosen[0][1])
        # A question in two parts: the place its second part reads closest to, unless that is the
        # section already shown whole. Shown as a place, not as a line: a second part is short, and
        # the sentence it reads closest to is often beside the one that answers. What is quoted of
        # that passage above goes, so that no sentence is quoted twice.
        places = []
        two = parts(question)
        other = closest_place(two[1], passages) if two else None
        if other and not (whole and other[0] == lead):
            i, sentence = other
            lines = [line for line in lines if not line.endswith(f" [{i + 1}]")]
            single = None if single and single[0] == i else single
            places.append(_place(passages, i, sentence, language))
        if single:
            places.insert(0, _place(passages, *single, language))
        elif lines:
            places.insert(0, say("from_documents", language) + "\n\n" + "\n".join(lines))
        return _figured(question, "\n\n".join(places), unsure)

    @off_the_loop
    def judge(self, question: str, passages: Sequence[Passage], answer: str) -> Verdict:
        if answer == say("not_found", language_of(question)):
            return Verdict(grounded=1.0, useful=0.0, reasoning="nothing relevant was found")
        query = _wanted(question)
        useful = len(query & term_set(answer)) / len(query) if query else 0.0
        return Verdict(grounded=1.0, useful=round(useful, 3), reasoning="extractive: every sentence is quoted")

    @off_the_loop
    def rewrite(self, question: str, passages: Sequence[Passage]) -> str:
        # Keep the content words only: the function words of a long question dilute BM25; and
        # nothing of what the question excludes.
        return " ".join(dict.fromkeys(terms(split_exclusion(question).query))) or question

    @off_the_loop
    def decompose(self, question: str) -> list[str]:
        match = _BETWEEN.search(question)
        if not match:
            return [question]
        first, second = match.group(1), match.group(2)
        shared = [t for t in terms(question) if t not in term_set(first) | term_set(second)]
        shared = [t for t in shared if t not in {"differ", "compar", "versus", "vs"}]
        return [" ".join([first, *shared]), " ".join([second, *shared])]

    @off_the_loop
    def chat(self, question: str, history: Sequence[tuple[str, str]]) -> str:
        return say(small_talk.reply_key(question), language_of(question))


def _lead_first(passages: Sequence[Passage], lead: int) -> list[tuple[int, Passage]]:
    """The passages numbered from 1, the leading one first, each keeping its number."""
    return [(lead + 1, passages[lead]), *((n, p) for n, p in enumerate(passages, start=1) if n != lead + 1)]


def _figured(question: str, quoted: str, unsure: Callable[[], str]) -> str:
    """What was quoted for a question asking how many or how much, if it states an amount; else the
    closest passage labelled as possibly not answering (`unsure`): a page that speaks of the thing
    without its figure ("a limited number of days") does not answer it, and quoting it as the answer
    reads as if it did. (Not "not covered": the page found is often the right one, its figure in a
    passage not read — a job ad's years of experience; nor the page's other sentence that gives a
    figure: the leave page's tax example for a question on vacation days.)"""
    asked = own_words(question) or question  # a follow-up's own words, not the question before it
    if _HOW_MANY.search(asked) and not states_quantity(_MARKS.sub("", quoted)):
        return unsure()
    return quoted


def _place(passages: Sequence[Passage], i: int, sentence: str, language: Language) -> str:
    """Passage `i` shown as one place: its label, the window around `sentence`, its citation."""
    p = passages[i]
    return f"{say('from_section', language, label=passage_label(p))}\n\n{window(p['text'], sentence)} [{i + 1}]"


def _glossed_sentence(question: str, p: Passage) -> str:
    """The passage's sentence that holds most of the question's gloss ("" without one)."""
    gloss = terms(glossed(question)) if can_gloss(language_of(question), passage_language(p["text"])) else []
    best = best_sentences(gloss, [(1, p)], wants_quantity=bool(QUANTITY.search(question)), limit=1) if gloss else []
    return best[0][3] if best else ""


def _intent(question: str) -> str:
    return first_cue(_INTENTS, question, "FACT_LOOKUP")


def _other_language(question: str, passage: Passage) -> bool:
    return language_of(question) != passage_language(passage["text"])


def _wanted(question: str) -> frozenset[str]:
    """The question's terms, without those of what it excludes ("…other than X")."""
    return term_set(split_exclusion(question).query)
