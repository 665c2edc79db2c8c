"""Which sentences of the passages the offline back-end quotes, when the words decide: the best
sentences for the question's rarer terms (a figure weighs more for a question asking for a
quantity), each once; each of two things a question names, a section quoted whole when the
question names it, and a sum or difference worked out from the sentences that state its two amounts;
and statements worded alike that give different figures, a short question's readings to ask back
about — and, after the pick, the others' statements to leave out."""

from __future__ import annotations

import difflib
import math
import re
from collections import Counter
from collections.abc import Sequence

from threadsage.adapters.meaning import sentences
from threadsage.adapters.questions.ambiguity import names, option
from threadsage.adapters.questions.exclusion import split_exclusion
from threadsage.adapters.reasoner import Passage
from threadsage.adapters.reasoning.offline import arithmetic
from threadsage.support.text import term_set

ANSWER_SENTENCES = 3
SECTION_NAMED = 0.6  # share of the question's terms in a section's name to quote it whole
THING_TERMS = 3  # at most, of a thing a second question ("…, and what is Y?") asks about: its own words
PARALLEL = 0.5  # worded this alike (`_worded_alike`), two sentences are one statement about two things
PARALLEL_TERMS = 4  # a question of at most this many terms may be answered in parallel statements
_WORDS = re.compile(r"\w+")
_PARTS = re.compile(r"[,;:()]|\s[–—-]\s")
_ADDRESS = re.compile(r"(?<=\])\([^)\s]*\)|<?https?://\S+|<?[\w.+-]+@[\w-]+(?:\.[\w-]+)+>?")

COMPARISON = re.compile(
    r"\b(difference|differences|differ|compare|compared|comparison|versus|vs\.?|better than)\b|区别|比较|对比",
    re.IGNORECASE,
)
# Beside a comparison cue, what makes a question name two things: a second question joined by "and"
# ("what is X, and what is Y?" — split there, not at an "and" inside the first), "X and Y: which…",
# "both", "each", "respectively", "分别", "各自".
_SECOND_QUESTION = re.compile(r"\s+and\s+(?=(?:what|which|who|when|where|how|why)\b)", re.IGNORECASE)
_TWO_THINGS = re.compile(r"\band\b[^?.!]*[:,]\s*which\b|\b(?:both|each|respectively)\b|分别|各自", re.IGNORECASE)
QUANTITY = re.compile(
    r"\b(how (many|much|long|often|soon)|what (time|date|day)|when|until|by when|limit|maximum|minimum)\b"
    r"|多少|多长|几|何时|什么时候",
    re.IGNORECASE,
)


def worked_out(
    question: str, numbered: Sequence[tuple[int, Passage]]
) -> tuple[tuple[str, str], list[tuple[int, str]]] | None:
    """For a question asking for a sum or a difference of two things: each side's best sentence
    that states an amount, and the calculator's expression and result; None otherwise."""
    op, both = arithmetic.operation(question), arithmetic.sides(split_exclusion(question).query)
    if op is None or both is None:
        return None
    found = []
    named = {n: names(p) for n, p in numbered}
    for side, other in (both, both[::-1]):
        own = set(side) - set(other)  # the word that names this side: its sentence or section must have it
        best = best_sentences(side, numbered, wants_quantity=True)
        stating = [(n, s) for _, _, n, s in best if arithmetic.amount(s) and own & (term_set(s) | named[n])]
        if not stating:
            return None
        found.append(stating[0])
    (first_number, first), (second_number, second) = found
    if (first_number, first) == (second_number, second):
        return None  # one sentence for both sides: nothing to add up
    one, two = arithmetic.amount(first), arithmetic.amount(second)
    result = arithmetic.worked_out(op, one, two) if one and two else None
    return (result, found) if result else None


def left_out_sides(
    question: str, numbered: Sequence[tuple[int, Passage]], best: Sequence[tuple[float, int, int, str]]
) -> list[tuple[int, str]]:
    """For a question that names two things, each thing the chosen sentences do not name (neither
    in the sentence nor its section): its own best sentence that does, with its passage number.
    One passage about one of the two is half an answer; a thing nothing names stays left out.
    A side's name is its rarest term (over the passages' sentences) that the other side lacks and
    some passage uses: "Kanban" and "Scrum" in "the difference between Kanban and Scrum for a team"."""
    both = two_things(split_exclusion(question).query)
    if both is None:
        return []
    every = both[0] + both[1]
    weights = sentence_weights(every, [p for _, p in numbered])
    used = set().union(*(term_set(s) for _, p in numbered for s in sentences(p["text"])))
    sides = [
        max((set(mine) - set(theirs)) & used, key=weights.__getitem__, default=None)
        for mine, theirs in (both, both[::-1])
    ]
    named = {n: names(p) for n, p in numbered}
    chosen = set().union(*(term_set(s) | named[n] for _, _, n, s in best)) if best else set()
    wants_quantity = bool(QUANTITY.search(question))
    added: list[tuple[int, str]] = []
    for name, other in (sides, sides[::-1]):
        if name is None or name in chosen:
            continue
        side = [t for t in every if t != other]
        for _, _, n, s in best_sentences(side, numbered, wants_quantity, limit=None):
            if name in term_set(s) | named[n]:
                added.append((n, s))
                break
    return added


def two_things(query: str) -> tuple[list[str], list[str]] | None:
    """The terms on each side of the two things a question names, by its grammar; None when it
    does not name two ("terms and conditions" in a plain question)."""
    second = _SECOND_QUESTION.search(query)
    if second is None:
        return arithmetic.halves(query) if COMPARISON.search(query) or _TWO_THINGS.search(query) else None
    both = arithmetic.halves(query, second.start())
    if both and any(len(set(mine) - set(theirs)) > THING_TERMS for mine, theirs in (both, both[::-1])):
        return None  # two questions, not two things: one of many words of its own asks for more than a thing
    return both


def parallel_statements(query: list[str], numbered: Sequence[tuple[int, Passage]], wants_quantity: bool) -> list[str]:
    """The options to ask back with when a short question's best sentences say the same thing of
    different things ("You can carry over 15 days…" beside "You can carry over 240 hours…"): each
    holds the same of the question's terms, they are worded alike (`PARALLEL`: most of their words
    in the same order) but state different figures, and the question names no word of one's section
    that the other's lacks. The options name each statement by its part that the others lack ("If
    you are the primary caregiver"), or else by its section (statements of one section cannot be
    told apart then).
    [] when the best sentence has no such parallel: the question reads one way."""
    asked = set(query)
    best = best_sentences(query, numbered, wants_quantity)
    if len(asked) > PARALLEL_TERMS or len(best) < 2:
        return []
    passages = dict(numbered)
    first = best[0][3]
    held = asked & term_set(first)
    if len(held) < min(len(asked), max(2, len(asked) - 1)):
        return []  # the best sentence misses more than one term (one of two): it shares them, it does not answer
    chosen = [(best[0][2], first)]
    for _, _, number, sentence in best[1:]:
        if asked & term_set(sentence) != held or not _parallel(first, sentence):
            continue
        if asked & (names(passages[number]) ^ names(passages[chosen[0][0]])):
            continue  # the question names one of the two sections
        chosen.append((number, sentence))
    if len(chosen) < 2:
        return []
    own = [_own_part(mine, [s for _, s in chosen if s != mine]) for _, mine in chosen]
    if all(own) and len(set(own)) == len(own):
        return own
    sections = list(dict.fromkeys(option(passages[number]) for number, _ in chosen))
    return sections if len(sections) >= 2 else []


def set_aside(query: set[str], best: list[tuple[float, int, int, str]]) -> list[tuple[float, int, int, str]]:
    """The chosen sentences without the statements worded like the first that hold less of the
    question: it names the first one's case ("…as the secondary caregiver"), or the person picked it
    from the options `parallel_statements` offered — the others' figures answer another case."""
    if not best:
        return best
    first = best[0][3]
    held = query & term_set(first)
    return [best[0], *(b for b in best[1:] if not (query & term_set(b[3]) < held and _parallel(first, b[3])))]


def _parallel(one: str, other: str) -> bool:
    """Whether two sentences are one statement about two things: worded alike, giving different
    figures (the same figures, or none, are the same thing said twice)."""
    figures = _figures(one)
    return _worded_alike(one, other) >= PARALLEL and bool(figures) and _figures(other) not in (set(), figures)


def _own_part(sentence: str, others: Sequence[str]) -> str:
    """The part of a statement (between commas, colons or brackets) that holds a word the statements
    worded like it lack and no figure — what it is about, not what it says; "" when there is none."""
    theirs = frozenset().union(*(term_set(other) for other in others))
    own = term_set(sentence) - theirs
    for part in _PARTS.split(_ADDRESS.sub("", sentence)):
        if term_set(part) & own and not _FIGURE.search(part):
            return " ".join(part.split()).strip(" .*")
    return ""


def _figures(sentence: str) -> frozenset[str]:
    return frozenset(m.group().lower() for m in _FIGURE.finditer(_ADDRESS.sub("", sentence)))


def _worded_alike(one: str, other: str) -> float:
    """How much of two sentences is the same words in the same order (0–1), links' and e-mail
    addresses left out: a shared address is where to write, not a statement made alike."""
    mine, theirs = (_WORDS.findall(_ADDRESS.sub("", s).lower()) for s in (one, other))
    return difflib.SequenceMatcher(None, mine, theirs, autojunk=False).ratio()


def named_section(query: set[str], p: Passage) -> bool:
    """Whether the passage's section is named after the question: most of its terms in the title
    and heading, one at least in the heading — a question that names the document alone ("…on the
    Silver plan?") asks for a sentence of it, not for whichever section ranked first."""
    return len(query & names(p)) >= SECTION_NAMED * len(query) and bool(query & term_set(p["heading"]))


# A figure, or an English number word ("within six months"): what a question for a quantity wants.
_NUMBER_WORDS = (
    "one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|fifteen|twenty|thirty|forty|fifty|"
    "sixty|ninety|hundred|thousand"
)
_STATESQUANTITY = re.compile(rf"\d|\b({_NUMBER_WORDS})\b", re.IGNORECASE)
_AMOUNT = re.compile(rf"\d|\b(?:{_NUMBER_WORDS})\b(?!-)", re.IGNORECASE)
# The values a statement gives: figures, number words and months ("may" left out: more often the verb).
_MONTHS = "january|february|march|april|june|july|august|september|october|november|december"
_FIGURE = re.compile(rf"\d+(?:[.,:/]\d+)*|\b(?:{_NUMBER_WORDS}|{_MONTHS})\b", re.IGNORECASE)


def states_quantity(text: str) -> bool:
    """Whether the text gives an amount: a figure or a number word ("one-time" is none)."""
    return bool(_AMOUNT.search(text))


def best_sentences(
    query: list[str],
    numbered: Sequence[tuple[int, Passage]],
    wants_quantity: bool,
    limit: int | None = ANSWER_SENTENCES,
) -> list[tuple[float, int, int, str]]:
    """The `limit` best (score, -position, passage number, sentence), best first (all when None),
    of the passages (each with its number) in the order they lead."""
    weights = sentence_weights(query, [p for _, p in numbered])
    scored: list[tuple[float, int, int, str]] = []
    for rank, (number, p) in enumerate(numbered):
        # Words naming the passage's page or section say where, not which sentence.
        named = names(p)
        local = {t: w * (0.3 if t in named else 1.0) for t, w in weights.items()}
        for position, sentence in enumerate(sentences(p["text"])):
            found = term_set(sentence)
            score = sum(w for t, w in local.items() if t in found)
            if wants_quantity and _STATESQUANTITY.search(sentence):
                score *= 1.5
            if score > 0:
                # The search ranked the passages: a sentence from a lower one needs more to win.
                scored.append((score / (1 + 0.25 * rank), -position, number, sentence))
    return _once(sorted(scored, reverse=True))[:limit]


def _once(scored: list[tuple[float, int, int, str]]) -> list[tuple[float, int, int, str]]:
    """Each sentence once: a page may say the same thing in several places (a sentence repeated
    under each plan), or a shorter one the longer says whole; quoted twice, it only says it twice."""
    kept: list[tuple[float, int, int, str]] = []
    seen: list[str] = []
    for item in scored:
        said = " ".join(item[3].lower().split())
        if not any(said in other or other in said for other in seen):
            kept.append(item)
            seen.append(said)
    return kept


def sentence_weights(query: list[str], passages: Sequence[Passage]) -> dict[str, float]:
    """Rarer question terms (across the passages' sentences) weigh more."""
    read = [term_set(s) for p in passages for s in sentences(p["text"])]
    counts = Counter(t for s in read for t in set(query) if t in s)
    n = max(1, len(read))
    return {t: math.log(1 + n / (1 + counts[t])) for t in set(query)}
