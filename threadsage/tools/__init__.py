"""The tools the graph can use when a question needs more than the documents: a calculator, date
arithmetic, and (when configured) a web search. See docs/tools.md."""
