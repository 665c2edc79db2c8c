"""The language of a message, the catalogue both languages share, the hand-off map and document
links: the pieces the replies in the asker's language are made of."""

from __future__ import annotations

import string

import pytest
from pydantic import ValidationError

from threadsage.adapters.documents.links import base_url_error, document_url
from threadsage.adapters.documents.markdown import parse_markdown
from threadsage.adapters.reasoning.llm import prompts
from threadsage.chat.replies import not_covered
from threadsage.i18n import TABLES, language_of, language_of_code, passage_language, say
from threadsage.settings.environment import Settings
from threadsage.support.handoff import Contact, parse_handoff


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("出差住酒店的标准是多少？", "zh"),
        ("VPN 连不上怎么办？", "zh"),  # an English name in a Chinese sentence
        ("请问 Tidewater deployment rollback 怎么做", "zh"),
        ("How many days of leave do I get?", "en"),
        ("What does 报销 mean?", "en"),  # a Chinese word in an English sentence
        ("こんにちは、経費の上限は？", "en"),  # Japanese has no table yet: English, not Chinese
        ("", "en"),
        ("👍 123", "en"),
        (None, "en"),
    ],
)
def test_the_language_of_a_message(text: str | None, expected: str) -> None:
    assert language_of(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("白岳峰（백악봉），朝鲜族，中国足球运动员，司职中场。", "zh"),  # a Korean name in a Chinese passage
        ("设备丢失后，必须在 **1 小时** 内报告，并使用 Report phish 按钮。", "zh"),
        ("Report a lost laptop within **1 hour**; the Chinese page calls it 设备丢失.", "en"),
        ("", "en"),
    ],
)
def test_the_language_of_a_passage(text: str, expected: str) -> None:
    assert passage_language(text) == expected


def test_the_language_of_a_platform_tag() -> None:
    tags = ("zh-hans", "zh_TW", "en", "de", None, "")
    assert [language_of_code(c) for c in tags] == ["zh", "zh", "en", "en", "en", "en"]


def test_every_language_has_every_text_with_the_same_placeholders() -> None:
    def fields(text: str) -> set[str]:
        return {name for _, name, _, _ in string.Formatter().parse(text) if name}

    english = TABLES["en"]
    for language, table in TABLES.items():
        assert table.keys() == english.keys(), language
        for key, text in table.items():
            assert text.strip() and fields(text) == fields(english[key]), (language, key)
    assert say("handoff", "zh", contact="#it-help") == "#it-help 可以帮你处理这个问题。"


def test_the_model_is_told_the_language_of_the_question_before_the_excerpt_warning() -> None:
    chinese = prompts.in_language_of(prompts.ANSWER, "出差住酒店的标准是多少？")
    assert "written in Simplified Chinese" in chinese and chinese.endswith(prompts.DATA_NOT_INSTRUCTIONS)
    assert "written in English" in prompts.in_language_of(prompts.CHAT, "How are you?")


def test_the_handoff_map_reads_names_ids_and_a_default() -> None:
    handoff = parse_handoff("it=#C024BE91L|it-help, people=@S0123ABCD|hr-team,finance=@U0G9QF9C6,*=#help-desk")
    it, people, finance = (handoff.for_category(c) for c in ("it", "people", "finance"))
    assert it == Contact("#", "it-help", "C024BE91L") and it.slack_mention == "<#C024BE91L>"
    assert people is not None and (people.plain, people.slack_mention) == ("@hr-team", "<!subteam^S0123ABCD>")
    assert finance is not None and (finance.plain, finance.slack_mention) == ("@U0G9QF9C6", "<@U0G9QF9C6>")
    assert handoff.for_category("engineering") == handoff.for_category(None) == Contact("#", "help-desk")
    assert Contact("#", "help-desk").slack_mention == ""  # a name: nothing to mention
    plain_text = parse_handoff("people=the HR desk (ext. 4242)").for_category("people")
    assert plain_text == Contact("", "the HR desk (ext. 4242)") and not parse_handoff("it=#it-help").for_category("x")
    assert not parse_handoff("")


@pytest.mark.parametrize("value", ["it", "it=", "=#it-help", "it help=#x", "it=#it-help,people"])
def test_a_malformed_handoff_map_is_refused_at_startup_naming_its_entry(value: str) -> None:
    with pytest.raises(ValidationError, match="THREADSAGE_HANDOFF entry"):
        Settings(_env_file=None, THREADSAGE_HANDOFF=value)


SITE = "https://handbook.example.com/"


@pytest.mark.parametrize(
    ("path", "markdown", "base", "expected"),
    [
        ("finance/travel.md", "# Travel\n", SITE, SITE + "finance/travel.md"),
        ("finance/travel.md", "# Travel\n", SITE.rstrip("/"), SITE + "finance/travel.md"),  # the / is added
        ("it/office wifi.txt", None, SITE, SITE + "it/office%20wifi.txt"),
        (
            "people/leave.md",
            "---\nurl: https://wiki.example.com/leave\n---\n# Leave\n",
            SITE,
            "https://wiki.example.com/leave",
        ),
        ("people/leave.md", "---\nurl: /policies/leave/\n---\n# Leave\n", SITE, SITE + "policies/leave/"),
        ("people/leave.md", "---\nurl: https://wiki.example.com/leave\n---\n", "", "https://wiki.example.com/leave"),
        ("people/leave.md", "---\nurl: /policies/leave/\n---\n", "", ""),  # relative, and no base to join
        ("people/leave.md", "---\nurl: javascript:alert(1)\n---\n", "", ""),  # not a web address
        ("people/leave.md", "# Leave\n", "", ""),
    ],
)
def test_a_documents_link(path: str, markdown: str | None, base: str, expected: str) -> None:
    assert document_url(path, markdown, base) == expected


def test_front_matter_still_gives_the_title_and_never_reaches_the_text() -> None:
    title, sections = parse_markdown("---\ntitle: Leave\nurl: https://wiki.example.com/leave\n---\nDays off.\n", "x")
    assert title == "Leave" and [s.text for s in sections] == ["Days off."]


def test_a_base_url_must_be_a_web_address() -> None:
    assert base_url_error(SITE) is None and base_url_error("") is None
    assert "http(s) URL" in (base_url_error("handbook.example.com") or "")


@pytest.mark.parametrize(
    ("route", "cited", "hands_off"),
    [
        ("fallback", False, True),
        ("standard_retrieval", False, True),  # "the documents don't cover this"
        ("deep_search", False, True),
        ("standard_retrieval", True, False),
        ("direct_reply", False, False),  # small talk needs nobody
        ("tools", False, False),  # a calculation
        ("web_search", False, False),  # answered from the web, labelled as such
    ],
)
def test_which_answers_point_to_a_person(route: str, cited: bool, hands_off: bool) -> None:
    citations = [{"number": 1}] if cited else []
    assert not_covered({"route": route, "citations": citations}) is hands_off
