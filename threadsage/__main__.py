"""`python -m threadsage` is the `threadsage` command."""

from threadsage.cli import app

app()
