"""The files Tidemark ships beside its code: demo schedules, icons, the Grafana dashboard.

In a checkout they are the folder ``resources/`` beside ``core/``. An installed
wheel carries the same folder as the package ``tidemark_resources`` (pyproject's
package-dir mapping), a name no other distribution has, also beside ``core/``
in site-packages. The installed name is looked for first, so a folder called
``resources`` that another distribution put in site-packages is never read.
"""

from __future__ import annotations

from pathlib import Path

#: The folder's package name in an installed wheel.
PACKAGE = "tidemark_resources"
#: The folder's name in a source checkout.
SOURCE_FOLDER = "resources"

_BESIDE_CORE = Path(__file__).resolve().parents[2]


def bundled_root(beside: Path = _BESIDE_CORE) -> Path:
    """The folder of shipped files: the installed package when there is one, else the checkout's folder."""
    installed = beside / PACKAGE
    return installed if installed.is_dir() else beside / SOURCE_FOLDER


def demo_dir() -> Path:
    """The demo schedules (``NAME.yaml``)."""
    return bundled_root() / "demo"


def icon_dir() -> Path:
    """The SVG icons."""
    return bundled_root() / "icons"


def grafana_dashboard() -> Path:
    """The Grafana dashboard (docs/metrics.md)."""
    return bundled_root() / "grafana" / "tidemark.json"


def demo_files() -> dict[str, Path]:
    """Every demo schedule by name (its file name without ``.yaml``), in name order."""
    return {path.stem: path for path in sorted(demo_dir().glob("*.yaml"))}
