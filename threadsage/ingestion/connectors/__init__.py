"""Connectors: each kind of source (folder, web site, Confluence, git) behind one interface
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
from threadsage.ingestion.connectors.web import WebConnector
from threadsage.ingestion.spec import SourceSpec, SourceType
from threadsage.settings.environment import Settings

CONNECTORS: dict[SourceType, Callable[[SourceSpec, Settings], Connector]] = {
    "folder": lambda spec, _settings: FolderConnector(spec),
    "web": lambda spec, _settings: WebConnector(spec),
    "confluence": ConfluenceConnector,
    "git": lambda spec, settings: GitConnector(spec, checkouts=Path(settings.data_dir) / "sources" / "git"),
}


def connector_for(spec: SourceSpec, settings: Settings) -> Connector:
    """The connector of a source, by its `type` (which `SourceSpec` has already checked)."""
    return CONNECTORS[spec.type](spec, settings)
