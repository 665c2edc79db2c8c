"""Live sync: the sources of `THREADSAGE_SOURCES` (folders, web sites, Confluence, git) kept
current in the knowledge base by the running bot. See docs/sources.md."""
