"""All that threadsage uses of slack-bolt beyond its public API, held to the versions it was tested
with.

`share_identity` gives the start-up `auth.test` to bolt's single-team authorization, which caches
it; it would otherwise make the same call in the first event's acknowledgement path. bolt has no
public way in: its middleware list is private (`_async_middleware_list`). Should that change, the
one call is all that is lost, so outside `TESTED` this does nothing (and says so in the log)
rather than refuse to start.
"""

from __future__ import annotations

import logging
from importlib.metadata import version

from packaging.specifiers import SpecifierSet
from packaging.version import Version
from slack_bolt.async_app import AsyncApp
from slack_bolt.middleware.authorization.async_single_team_authorization import AsyncSingleTeamAuthorization
from slack_sdk.web.async_slack_response import AsyncSlackResponse

TESTED = ">=1.21,<2"  # `AsyncApp._async_middleware_list`, `AsyncSingleTeamAuthorization.auth_test_result`
log = logging.getLogger(__name__)


def within_tested(installed: str) -> bool:
    return Version(installed) in SpecifierSet(TESTED)


def share_identity(app: AsyncApp, identity: AsyncSlackResponse) -> None:
    installed = version("slack-bolt")
    if not within_tested(installed):
        log.info("slack-bolt %s is untested here: its first event will call auth.test itself", installed)
        return
    for middleware in getattr(app, "_async_middleware_list", ()):
        if isinstance(middleware, AsyncSingleTeamAuthorization) and middleware.auth_test_result is None:
            middleware.auth_test_result = identity
