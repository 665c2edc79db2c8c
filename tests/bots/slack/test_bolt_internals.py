"""bolt's private middleware list is used in one module, held to the versions it was tested with:
there the start-up auth.test reaches bolt's single-team authorization (which then makes no call of
its own); outside them nothing is touched."""

from __future__ import annotations

from importlib.metadata import version

import pytest
from slack_bolt.async_app import AsyncApp
from slack_bolt.middleware.authorization.async_single_team_authorization import AsyncSingleTeamAuthorization
from slack_sdk.web.async_slack_response import AsyncSlackResponse

from threadsage.bots.slack import bolt_internals
from threadsage.bots.slack.bolt_internals import share_identity, within_tested


def identity(app: AsyncApp) -> AsyncSlackResponse:
    data = {"ok": True, "user_id": "UBOT", "team_id": "T1", "bot_id": "B1"}
    return AsyncSlackResponse(
        client=app.client, http_verb="POST", api_url="auth.test", req_args={}, data=data, headers={}, status_code=200
    )


def authorization(app: AsyncApp) -> AsyncSingleTeamAuthorization:
    return next(m for m in app._async_middleware_list if isinstance(m, AsyncSingleTeamAuthorization))


async def test_the_installed_bolt_is_tested_and_gets_the_identity() -> None:
    assert within_tested(version("slack-bolt"))
    app = AsyncApp(token="xoxb-test", signing_secret="secret")
    shown = identity(app)
    share_identity(app, shown)
    assert authorization(app).auth_test_result is shown


async def test_an_untested_bolt_is_left_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(bolt_internals, "version", lambda _package: "2.0.0")
    app = AsyncApp(token="xoxb-test", signing_secret="secret")
    share_identity(app, identity(app))
    assert authorization(app).auth_test_result is None
    assert not within_tested("2.0.0") and within_tested("1.21.0")
