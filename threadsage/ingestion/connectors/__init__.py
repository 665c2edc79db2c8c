"""Connectors: each kind of source (folder, web site, Confluence, git, Slack threads) behind one interface
(`base.Connector`), and the registry that picks one for a source's `type`.

The registry lives here, above the connectors, as Rasa keeps its channel registry in the package
`__init__`: each connector imports the interface, the interface imports none of them. Adding a
source type (Google Drive, SharePoint) is one module with a class like these and one line below.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from threadsage.ingestion.connectors.base import Connector
from threadsage.ingestion.connectors.confluence import ConfluenceConnector
from threadsage.ingestion.connectors.folder import FolderConnector
from threadsage.ingestion.connectors.git import GitConnector
from threadsage.ingestion.connectors.slack import SlackThreadsConnector
from threadsage.ingestion.connectors.web import WebConnector
from threadsage.ingestion.spec import SourceSpec, SourceType
from threadsage.settings.sections import DocumentSettings, PlatformSettings

CONNECTORS: dict[SourceType, Callable[[SourceSpec, DocumentSettings, Path, PlatformSettings | None], Connector]] = {
    "folder": lambda spec, _settings, _data_dir, _platform: FolderConnector(spec),
    "web": lambda spec, _settings, _data_dir, _platform: WebConnector(spec),
    "confluence": lambda spec, settings, _data_dir, _platform: ConfluenceConnector(spec, settings),
    "git": lambda spec, _settings, data_dir, _platform: GitConnector(spec, checkouts=data_dir / "sources" / "git"),
    "slack": lambda spec, _settings, _data_dir, platform: SlackThreadsConnector(spec, platform),
}


def connector_for(
    spec: SourceSpec, settings: DocumentSettings, data_dir: Path, platform: PlatformSettings | None = None
) -> Connector:
    """The connector of a source, by its `type` (which `SourceSpec` has already checked); a git
    source is checked out under `data_dir`; a Slack one reads with the bot's token (`platform`)."""
    return CONNECTORS[spec.type](spec, settings, data_dir, platform)
