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
from threadsage.settings.sections import DocumentSettings

CONNECTORS: dict[SourceType, Callable[[SourceSpec, DocumentSettings, Path], Connector]] = {
    "folder": lambda spec, _settings, _data_dir: FolderConnector(spec),
    "web": lambda spec, _settings, _data_dir: WebConnector(spec),
    "confluence": lambda spec, settings, _data_dir: ConfluenceConnector(spec, settings),
    "git": lambda spec, _settings, data_dir: GitConnector(spec, checkouts=data_dir / "sources" / "git"),
}


def connector_for(spec: SourceSpec, settings: DocumentSettings, data_dir: Path) -> Connector:
    """The connector of a source, by its `type` (which `SourceSpec` has already checked); a git
    source is checked out under `data_dir`."""
    return CONNECTORS[spec.type](spec, settings, data_dir)
