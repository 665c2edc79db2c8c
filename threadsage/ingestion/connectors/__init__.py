"""Connectors: each kind of source (folder, web site, Confluence, git) behind one interface."""
