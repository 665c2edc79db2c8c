"""Resolved Slack threads as a source: where much of a team's knowledge is, in the answers people
gave in help channels (docs/sources.md, "Slack").

A source `{type: slack, channels: [C0HELPDESK], category: it}` keeps each channel's resolved threads
(`reading`), each one document — the question and the accepted answer — cited by its link
(`https://slack.com/archives/<channel>/p<ts>`, which opens it in the workspace); an edited question
or answer is read again, a thread no longer resolved or deleted leaves the knowledge base with it
(`connector`: the history on the source's schedule, the threads the bot saw change within seconds).

A private channel's threads are indexed in a category of their own, `slack-members-<channel id>`,
which only its members read, in a DM or in that channel (`chat.members`: fail-closed). Not indexed:
DMs, channels shared with other organisations (Slack Connect), bots' threads; secrets in messages
(tokens, keys, "password: …") are masked. Each channel refused says why in the sync's report.
"""

from threadsage.ingestion.connectors.slack.connector import WHOLE_CHANNEL, SlackThreadsConnector, threads_key
from threadsage.ingestion.connectors.slack.reading import RESOLVED, RESOLVED_EVENT

__all__ = ["RESOLVED", "RESOLVED_EVENT", "WHOLE_CHANNEL", "SlackThreadsConnector", "threads_key"]
