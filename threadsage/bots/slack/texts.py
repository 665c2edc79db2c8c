"""How the Slack bot writes its own words: the catalogue keys of its progress labels (the words
themselves, in every language, are in `threadsage.i18n`) and Slack's escaping."""

from threadsage.chat import Step

STEPS = {Step.SEARCHING: "step_searching", Step.CHECKING: "step_checking", Step.WRITING: "step_writing"}  # keys


def escaped(text: str) -> str:
    """Text shown as written: Slack's three control characters escaped (so a question's `<!channel>`
    pings nobody), nothing else."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def unescaped(text: str) -> str:
    """Text as Slack sends it (the three control characters escaped) as it was written."""
    return text.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")
