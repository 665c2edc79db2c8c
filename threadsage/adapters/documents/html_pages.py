"""HTML as sections, for `loaders.parse_bytes` and for the web connector (which reads a page's
links from the same parsed tree, so a page is parsed once)."""

from __future__ import annotations

from bs4 import BeautifulSoup

from threadsage.adapters.documents.sections import Section, SectionBuilder, finished


def parse_html(text: str, fallback_title: str) -> tuple[str, list[Section]]:
    return html_sections(BeautifulSoup(text, "html.parser"), fallback_title)


def parse_html_soup(soup: BeautifulSoup, fallback_title: str) -> tuple[str, tuple[Section, ...]]:
    """`parse_bytes` for a page already parsed, so a web page whose links were read from the
    tree is not parsed twice. The tree is changed (navigation and scripts removed)."""
    title, sections = html_sections(soup, fallback_title)
    return finished(title, sections)


def html_sections(soup: BeautifulSoup, fallback_title: str) -> tuple[str, list[Section]]:
    """The page's main content — `<main>`, else `<article>`, else the body — as sections, without
    scripts, navigation, header and footer: menus and footers repeated on every page of a site
    would otherwise be found by every question."""
    for tag in soup(["script", "style", "noscript", "template", "nav", "footer", "header"]):
        tag.decompose()
    title = soup.title.get_text(" ", strip=True) if soup.title else ""
    headings = {"h1", "h2", "h3", "h4", "h5", "h6"}
    blocks = headings | {"p", "li", "pre", "blockquote", "dt", "dd", "tr", "caption"}
    out = SectionBuilder()
    root = soup.find("main") or soup.find("article") or soup.body or soup
    for element in root.find_all(blocks):
        if element.name not in headings and element.find_parent(blocks - headings):
            continue  # its text is part of an enclosing block already
        if element.name in headings:
            out.flush()
            level, name = int(element.name[1]), element.get_text(" ", strip=True)
            if level == 1 and not title:
                title = name
                continue
            if level == 1 and name == title:
                continue
            out.heading(level, name)
        elif element.name == "pre":
            out.lines.append(element.get_text())
        elif element.name == "tr":
            out.lines.append(" | ".join(c.get_text(" ", strip=True) for c in element.find_all(["td", "th"])))
        else:
            prefix = "- " if element.name == "li" else ""
            out.lines.append(prefix + element.get_text(" ", strip=True))
    out.flush()
    if not out.sections:  # markup without block elements: keep its text anyway
        body = root.get_text("\n", strip=True)
        return title or fallback_title, [Section((), body)] if body else []
    return title or fallback_title, out.sections
