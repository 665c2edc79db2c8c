"""Slack: bolt listeners and the work behind them (`app`), Block Kit (`blocks`), what is sent and
read back (`sending`), and where a message lives, which names its session (`places`)."""

from threadsage.bots.slack.app import INVALID_BUTTON, THANKS, SlackBot

__all__ = ["INVALID_BUTTON", "THANKS", "SlackBot"]
