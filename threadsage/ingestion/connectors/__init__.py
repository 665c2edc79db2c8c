"""Connectors: each kind of source (folder, web site, Confluence, git, Slack threads) behind one interface
(`base.Connector`), and the registry that picks one for a source's `type`.

The registry lives here, above the connectors, as Rasa keeps its channel registry in the package
`__init__`: each connector imports the interface, the interface imports none of them. Adding a
source type (Google Drive, SharePoint) is one module with a class like these and one line below.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from threadsage.delivery.coordination import Coordinator
from threadsage.ingestion.connectors.base import Connector
from threadsage.ingestion.connectors.confluence import ConfluenceConnector
from threadsage.ingestion.connectors.folder import FolderConnector
from threadsage.ingestion.connectors.git import GitConnector
from threadsage.ingestion.connectors.slack import SlackThreadsConnector
from threadsage.ingestion.connectors.web import WebConnector
from threadsage.ingestion.spec import SourceSpec, SourceType
from threadsage.settings.help_channels import HelpSettings
from threadsage.settings.sections import DocumentSettings, PlatformSettings

Make = Callable[[SourceSpec, DocumentSettings, Path, PlatformSettings | None, Coordinator | None], Connector]
CONNECTORS: dict[SourceType, Make] = {
    "folder": lambda spec, _settings, _data_dir, _platform, _marks: FolderConnector(spec),
    "web": lambda spec, _settings, _data_dir, _platform, _marks: WebConnector(spec),
    "confluence": lambda spec, settings, _data_dir, _platform, _marks: ConfluenceConnector(spec, settings),
    "git": lambda spec, _settings, data_dir, _platform, _marks: GitConnector(
        spec, checkouts=data_dir / "sources" / "git"
    ),
    "slack": lambda spec, _settings, _data_dir, platform, marks: SlackThreadsConnector(
        spec, platform, _experts(spec, platform), marks
    ),
}


def connector_for(
    spec: SourceSpec,
    settings: DocumentSettings,
    data_dir: Path,
    platform: PlatformSettings | None = None,
    marks: Coordinator | None = None,
) -> Connector:
    """The connector of a source, by its `type` (which `SourceSpec` has already checked); a git
    source is checked out under `data_dir`; a Slack one reads with the bot's token (`platform`),
    its experts (THREADSAGE_EXPERTS, when `platform` is the whole settings) may resolve a thread,
    and it reads the threads the bot `marks` as changed between its syncs."""
    return CONNECTORS[spec.type](spec, settings, data_dir, platform, marks)


def _experts(spec: SourceSpec, platform: PlatformSettings | None) -> str | None:
    """The Slack channel of the experts of a Slack source's category, if any."""
    return platform.experts_on(spec.category or None, "slack") if isinstance(platform, HelpSettings) else None
