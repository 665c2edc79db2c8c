"""threadsage: a question-answering bot for teams in Slack and Telegram."""

__version__ = "0.1.0"
