"""Platform front-ends: Slack, Telegram and the terminal. Platform in, platform out."""
