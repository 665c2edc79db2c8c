"""The language-model back-end: prompts, structured calls, deep search's steps."""
