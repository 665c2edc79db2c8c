"""The offline reader: which passage answers a question typed in a person's own words, how sure it
may be, and what of that passage to show.

The lexical signals (`confidence.py`) weigh the words a question shares with a passage; a question
in a person's own words shares few ("how often do we get a new computer?" against "Laptops are
replaced every three years"), so they refused it or picked sentences that shared its incidental
words. Here the meaning decides too (`adapters/meaning`: how close each passage reads to the
question, by MiniLM; and each of its sentences, by the static vectors):

- the lead: the passage that reads closest, the search's order breaking near-ties (the search has
  already put the closest in meaning among its first few: `meaning.ordering`);
- sure: the words say so (as before) and the meaning does not read another passage clearly
  closer (`OVERRULE`; less clearly where the words hold under half of the question, `WEAK_*`), or
  the meaning is sure (`SURE`) — but where a good part of the question is in words no document
  uses and the words' passage reads far from it (`UNKNOWN_TOPIC`), only a sure meaning answers;
- unsure, but plausible: the words cover part of it, or the meaning is `PLAUSIBLE` (`CLOSE_ENOUGH`
  where the documents use most of the question's words) — the reader then shows the closest
  passage as that, never a refusal;
- "not covered" only when neither the words nor the meaning found anything plausible.

What is shown, where the meaning decided, is one place: the paragraph or list holding the closest
sentence, with what follows it as far as `EXCERPT_CHARS` (the whole section when it fits). Where
the words were sure, their sentences are quoted as before, but only from passages that read about
as close as the lead (`Reading.alike`) — not from unrelated places that shared an incidental word.
Thresholds chosen on the handbook sets and checked on every public set (docs/performance.md, "The
offline reader").
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from threadsage.adapters.meaning import Closeness, closeness, reads_meaning
from threadsage.adapters.questions.ambiguity import MAX_OPTIONS as MAX_READINGS
from threadsage.adapters.questions.ambiguity import names, passage_terms, same_heading
from threadsage.adapters.reasoner import Passage, passage_label
from threadsage.adapters.reasoning.offline.confidence import Signals, Sureness
from threadsage.support.text import term_set

SURE = 0.55  # a closest sentence this close answers, whatever words it shares
PLAUSIBLE = 0.45  # this close, it is shown as the closest passage rather than refused
CLOSE_ENOUGH = 0.33  # …and this close, when under MOSTLY_UNKNOWN of the question is in words no document uses
MOSTLY_UNKNOWN = 0.5
UNKNOWN_TOPIC = 0.25  # this much of the question in words no document uses, the words' sureness needs the meaning
LEAD_STEP = 0.02  # a passage lower in the search's order needs this much more closeness per place to lead
ALIKE = 0.15  # a passage this much less close than the lead still reads alike
OVERRULE = 0.3  # the meaning leads elsewhere than a sure reading of the words only when this much closer
# …but only this much closer when the words hold under half of the question (by weight): a sure
# reading on so little is often made of incidental words ("get", "back"), where a question in the
# page's own words holds more.
WEAK_COVERAGE = 0.5
WEAK_OVERRULE = 0.1
EXCERPT_CHARS = 900
PART_FLOOR = 0.35  # a part of a question in two parts reading this close to a passage is shown it
_WORD = re.compile(r"\w+")
_STEP = re.compile(r"\d+[.)]\s")  # "2. Use unique passwords": a step of a procedure, not a kind


@dataclass(frozen=True)
class Reading:
    sureness: Sureness
    lead: int
    near: tuple[Closeness, ...] = ()  # per passage of the evidence; empty when the meaning was not read
    # Whether the meaning decided (the words alone would have refused, hedged or led elsewhere): the
    # words' own extract stays for a question in the page's words, where it was measured.
    by_meaning: bool = False

    def alike(self, numbered: Sequence[tuple[int, Passage]]) -> list[tuple[int, Passage]]:
        """Of the evidence (numbered from 1, the lead first), the lead's page and the passages that
        read about as close to the question as the lead, and plausibly close at all (a passage of
        another page that reads closer than a weak lead is no reason to quote it: it shared an
        incidental word); all of them when the meaning was not read."""
        if not self.near:
            return list(numbered)
        floor = max(self.near[self.lead].best - ALIKE, PLAUSIBLE)
        page = next(p["path"] for n, p in numbered if n == self.lead + 1)
        return [(n, p) for n, p in numbered if p["path"] == page or self.near[n - 1].best >= floor]

    @property
    def closest_sentence(self) -> str:
        """The lead passage's closest sentence ("" without the meaning)."""
        if not self.near or not self.near[self.lead].units:
            return ""
        mine = self.near[self.lead]
        return mine.units[mine.closest]


def read(question: str, evidence: Sequence[Passage], words: Signals) -> Reading:
    """The reading of `evidence` for `question`, given what its words say (`confidence.signals`)."""
    lexical = words.sureness()
    if not evidence or not reads_meaning(question):
        return Reading(lexical, words.lead)
    near = tuple(closeness(question, [(passage_label(p), p["text"]) for p in evidence]))
    lead = max(range(len(evidence)), key=lambda i: near[i].best - LEAD_STEP * i)
    if lexical is Sureness.ANSWER and words.unknown >= UNKNOWN_TOPIC and near[words.lead].best < CLOSE_ENOUGH:
        # Sure by the words the documents use, while a good part of the question is in words none
        # uses ("dog" in "Can I bring my dog to the office?") and the passage they chose reads far
        # from it: what it shares is incidental. Not covered, unless the meaning is sure elsewhere.
        sure = near[lead].best >= SURE
        return Reading(Sureness.ANSWER if sure else Sureness.ABSTAIN, lead, near, by_meaning=True)
    overrule = OVERRULE if words.coverage >= WEAK_COVERAGE else WEAK_OVERRULE
    if lexical is Sureness.ANSWER and near[words.lead].best >= near[lead].best - overrule:
        return Reading(lexical, words.lead, near)  # the words and the meaning agree well enough
    best = near[lead].best
    if lexical is Sureness.ANSWER or best >= SURE:
        sureness = Sureness.ANSWER
    elif lexical is Sureness.HEDGE or best >= PLAUSIBLE or (best >= CLOSE_ENOUGH and words.unknown < MOSTLY_UNKNOWN):
        sureness = Sureness.HEDGE
    else:
        sureness = Sureness.ABSTAIN
    return Reading(sureness, lead, near, by_meaning=True)


# Where a question asks a second thing: ", and to whom…", "and if not, which…", "and are we…",
# "and on which floor…".
_SECOND_PART = re.compile(
    r",?\s+and\s+(?:if not,?\s+)?(?=(?:(?:on|at|in|by|for|from|to|with|until)\s+)?"
    r"(?:what|which|who|whom|when|where|how|why|do|does|did|is|are|can|may|should|will)\b)",
    re.IGNORECASE,
)


def parts(question: str) -> list[str]:
    """A question in two parts, split where the second begins; [] for a question in one part (or a
    second part too short, or unreadable, to read by itself)."""
    split = _SECOND_PART.split(question, maxsplit=1)
    if len(split) < 2 or len(_WORD.findall(split[1])) < 3 or not reads_meaning(split[1]):
        return []
    return split


def closest_place(part: str, evidence: Sequence[Passage]) -> tuple[int, str] | None:
    """The passage a part of a question reads closest to, with that passage's closest sentence;
    None when it reads close to nothing. The floor is lower than `PLAUSIBLE`: the whole question
    already found its place, and a part is short and leans on the other ("…, and to whom do I
    send it?")."""
    near = closeness(part, [(passage_label(p), p["text"]) for p in evidence])
    if not near:
        return None
    other = max(range(len(evidence)), key=lambda i: near[i].best - LEAD_STEP * i)
    if near[other].best < PART_FLOOR:
        return None
    return other, near[other].units[near[other].closest]


READING_TERMS = 4  # a question of at most this many content words may read several ways
READING_FLOOR = 0.45  # each reading's passage this close to the question at least…
READING_RATIO = 0.9  # …and this close to the closest one


def readings(question: str, evidence: Sequence[Passage], reading: Reading) -> list[int]:
    """The passages of different documents that read about equally close to a short question
    naming none of them apart ("When do I get paid?": the payroll page, the contractors' page) —
    the readings to ask back about, closest first; [] when the question reads one way. Within one
    page, only sections that are kinds of what the question names (`kinds`).

    Short: a question of a few words is the one a person asks without saying whose rules or which
    case; a longer one usually names it — unless the sections that read alike are one section of
    parallel documents ("Expenses – Oslo office › Meals", "Expenses – Lima office › Meals") and
    the question names neither (`ambiguity.same_heading`): then it is asked back whatever its length.
    Never a question in two parts: each part gets its place (`parts`).

    Different documents: sections of one page that read alike are usually its parts (a procedure's
    steps), not two answers. Measured on every public set (docs/performance.md)."""
    asked = term_set(question)
    if not reading.near or parts(question):
        return []  # a question in two parts is answered part by part (`parts`)
    order = sorted(range(len(evidence)), key=lambda i: -reading.near[i].best)
    closest = reading.near[order[0]].best
    if closest < READING_FLOOR:
        return []
    alike = [i for i in range(len(evidence)) if reading.near[i].best >= READING_RATIO * closest]
    if parallel := same_heading(asked, [evidence[i] for i in alike]):
        return [i for i in alike if any(evidence[i] is p for p in parallel)]
    if len(asked) > READING_TERMS:
        return []
    if sorts := kinds(asked, [evidence[i] for i in alike]):
        return [alike[i] for i in sorts]
    chosen = [order[0]]
    for i in order[1:]:
        if reading.near[i].best < READING_RATIO * closest or len(chosen) == MAX_READINGS:
            break
        if evidence[i]["path"] not in {evidence[j]["path"] for j in chosen}:
            chosen.append(i)
    named = [asked & names(evidence[i]) for i in chosen]
    if len(chosen) < 2 or any(mine != named[0] for mine in named[1:]):
        return []  # one reading, or the question names one of them and not the others
    return chosen


def kinds(asked: frozenset[str], evidence: Sequence[Passage]) -> list[int]:
    """Sections of one page whose headings name what the question asks about, each with a kind of
    it the question does not name ("Study leave", "Unpaid leave" for "How much leave may I
    take?"), in the search's order; [] when a heading holds a word of the question that another
    such section does not hold at all, heading or text (the question names its kind: "study"), or
    fewer than two such sections were found. A word one heading holds and the other section's text
    holds too names none ("care" in "Emergency care leave" beside "Extended leave", which speaks of
    extended care)."""
    lasts = [p["heading"].split(" > ")[-1].strip().lower() for p in evidence]
    about = [asked & term_set(last) for last in lasts]
    held = [passage_terms(p) for p in evidence]
    named = [i for i, mine in enumerate(about) if mine]
    if any(t not in held[j] for i in named for t in about[i] for j in named if j != i):
        return []  # a word of one heading another section lacks altogether: the question names its kind
    path = next((evidence[i]["path"] for i in named), "")
    headings = {p["heading"] for p in evidence if p["path"] == path}
    found: dict[str, int] = {}
    for i in named:
        p, kind = evidence[i], lasts[i]
        parent = any(h.startswith(p["heading"] + " > ") for h in headings)  # its parts are not kinds of it
        if p["path"] == path and term_set(kind) - asked and not parent and not _STEP.match(kind):
            found.setdefault(kind, i)
    return list(found.values())[:MAX_READINGS] if len(found) >= 2 else []


def window(text: str, sentence: str, limit: int = EXCERPT_CHARS) -> str:
    """What to show of a section for its `sentence`: the whole section when it fits in `limit`;
    else from the start of the paragraph, list or table holding the sentence (and the heading right
    above it), whole lines up to `limit` (a table with its header row), code fences kept balanced."""
    lines = text.strip().splitlines()
    if len(text.strip()) <= limit or not sentence:
        return _fenced(_within(lines, 0, limit))
    at = _line_of(lines, sentence)
    start = at
    while start > 0 and lines[start - 1].strip() and not lines[start - 1].lstrip().startswith("#"):
        start -= 1  # back to the paragraph's (or list's, or table's) first line
    if start > 0 and lines[start - 1].lstrip().startswith("#"):
        start -= 1  # with the heading right above it, which names what it says ("### Flagpole")
    if sum(len(line) + 1 for line in lines[start : at + 1]) > limit:
        start = at  # a long list or table: from the sentence's own line, or it would not be shown
    return _fenced(_within(lines, start, limit))


def _line_of(lines: list[str], sentence: str) -> int:
    """The line that holds most of the sentence's first words (units are cleaned and unwrapped)."""
    wanted = _WORD.findall(sentence.lower())[:8]
    if not wanted:
        return 0

    def held(i: int) -> int:
        words = set(_WORD.findall(lines[i].lower()))
        return sum(w in words for w in wanted)

    return max(range(len(lines)), key=lambda i: (held(i), -i))


def _within(lines: list[str], start: int, limit: int) -> list[str]:
    kept: list[str] = []
    size = 0
    for line in lines[start:]:
        if size + len(line) > limit and kept:
            break
        kept.append(line)
        size += len(line) + 1
    while kept and kept[-1].lstrip().startswith("#"):
        kept.pop()  # a heading whose section did not fit
    return kept


def _fenced(kept: list[str]) -> str:
    if sum(line.lstrip().startswith("```") for line in kept) % 2:
        kept = [*kept, "```"]
    return "\n".join(kept).rstrip()
