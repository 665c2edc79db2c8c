"""The console's filters read from hostile query strings: a value that cannot be a filter gets 400
and a message saying which and why — on the pages, the JSON and the CSV — never a 500; and
generated query strings (hypothesis) through the real routes on Postgres get 200 or that 400."""

from __future__ import annotations

import asyncio
from datetime import date
from pathlib import Path
from urllib.parse import urlencode

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.helpers.console import TOKEN, console_served, console_settings
from tests.helpers.hostile import assert_strict, record_hostile_turns
from threadsage.console.filters import RANGES
from threadsage.records.turns import OUTCOMES

BEARER = {"Authorization": f"Bearer {TOKEN}"}
BAD = {
    "end=9999-12-31": "end",
    "start=0001-01-01": "start",
    "start=2024-02-30": "start",
    "days=2": "days",
    "days=-1": "days",
    "days=99999999999999999999": "days",
    "outcome=nope": "outcome",
    "people=yes": "people",
    "channel=C1%00": "channel",  # Postgres text holds no NUL: a 500 there before
    "platform=%07": "platform",
    "platform=" + "x" * 41: "platform",
    "start=2024-02-01&end=2024-01-01": "start",
    "start=2000-01-01&end=2024-01-01": "start and end",
}
GOOD = ["", "days=7", "start=2024-01-01&end=2024-01-31", "end=2024-01-31", "days=&start=&end=&platform=&outcome="]


async def test_bad_filters_get_400_with_a_message(tmp_path: Path, database_url: str) -> None:
    async with console_served(console_settings(tmp_path, database_url)) as console:
        http, url = console.http, console.url
        for query, key in BAD.items():
            async with http.get(f"{url}/console/api/questions?{query}", headers=BEARER) as response:
                assert response.status == 400, query
                assert (await response.json())["error"].startswith(f"these filters cannot be read: {key}:"), query
            async with http.get(f"{url}/console/export/gaps.csv?{query}", headers=BEARER) as response:
                assert response.status == 400, query
            async with http.get(f"{url}/console/questions?{query}", headers=BEARER) as response:
                page = await response.text()
                assert response.status == 400 and f"These filters cannot be read: {key}:" in page, query
                assert_strict(response.headers)
        for query in GOOD:
            for path in ("/console", "/console/questions", "/console/api/overview"):
                async with http.get(f"{url}{path}?{query}", headers=BEARER) as response:
                    assert response.status == 200, (path, query)


day_text = st.one_of(
    st.dates().map(date.isoformat),
    st.sampled_from(["9999-12-31", "9999-12-30", "0001-01-01", "1970-01-01", "1969-12-31", "2024-02-30"]),
    st.text(max_size=12),
)
anything = st.one_of(st.text(max_size=250), st.integers().map(str))
query_strings = st.fixed_dictionaries(
    {},
    optional={
        "days": st.one_of(st.sampled_from([str(d) for d in RANGES]), anything),
        "start": day_text,
        "end": day_text,
        "platform": st.one_of(st.sampled_from(["slack", "telegram"]), anything),
        "channel": anything,
        "outcome": st.one_of(st.sampled_from(OUTCOMES), anything),
        "people": st.one_of(st.just("1"), anything),
        "next": anything,
    },
).map(urlencode)


@pytest.mark.slow  # generates many examples
async def test_generated_filters_on_postgres_get_an_answer_or_400(tmp_path: Path, pg_url: str) -> None:
    paths = ["/console", "/console/api/overview", "/console/api/gaps", "/console/api/clarifications"]
    paths += ["/console/export/questions.csv"]
    loop = asyncio.get_running_loop()
    async with console_served(console_settings(tmp_path, pg_url)) as console:
        await record_hostile_turns(console.checkpointer)

        async def statuses(query: str) -> list[tuple[int, str]]:
            found = []
            for path in paths:
                async with console.http.get(f"{console.url}{path}?{query}", headers=BEARER) as response:
                    found.append((response.status, await response.text()))
            return found

        @settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
        @given(query_strings)
        def answered(query: str) -> None:
            found = asyncio.run_coroutine_threadsafe(statuses(query), loop).result()
            codes = {status for status, _ in found}
            assert codes in ({200}, {400}), (query, found)  # every route reads the filters alike
            if codes == {400}:
                assert all("cannot be read" in text for _, text in found), (query, found)

        await asyncio.to_thread(answered)
