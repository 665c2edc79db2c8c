"""Slack: bolt listeners and the work behind them (`app`), Block Kit (`blocks`), what is sent and
read back (`sending`), button clicks (`buttons`), and where a message lives, which names its
session (`places`)."""

from threadsage.bots.platform import Platform
from threadsage.bots.slack.app import SlackBot
from threadsage.bots.slack.front_end import front_end

PLATFORM = Platform("slack", lambda settings: settings.slack_bot_token is not None, SlackBot, front_end)

__all__ = ["PLATFORM", "SlackBot"]
