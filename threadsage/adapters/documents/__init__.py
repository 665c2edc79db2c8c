"""Documents: bytes → sections → chunks (Markdown, HTML, Word, PDF, attachments)."""
