"""Slack: bolt listeners and the work behind them (`app`), Block Kit (`blocks`), what is sent and
read back (`sending`), button clicks (`buttons`), and where a message lives, which names its
session (`places`)."""

from threadsage.bots.slack.app import SlackBot

__all__ = ["SlackBot"]
