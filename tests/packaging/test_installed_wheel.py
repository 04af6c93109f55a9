"""The wheel, installed as a person would install it: into a fresh virtualenv outside the checkout,
run from outside it. Both commands work from what the wheel put in site-packages alone:
``schedctl preview`` on a packaged demo (found with ``schedctl demos``) and ``scheduler-gui
--screenshot`` offscreen; the migrations, icons, the window's styles and the Grafana dashboard are
in the installed tree.

Offline: the dependencies come from a wheelhouse made of the distributions already installed
beside these tests (each repacked from its RECORD into a wheel), so ``pip install --no-index
--find-links`` resolves the wheel's own requirements, at the versions the suite runs with, with
no index and no network. The new virtualenv never sees the checkout nor this environment's
site-packages (where the editable install of Tidemark lives): a test asserts where ``core``
is imported from.
"""

from __future__ import annotations

import base64
import csv
import email.parser
import hashlib
import io
import json
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from collections.abc import Iterator
from importlib import metadata
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from PySide6.QtGui import QImage

pytestmark = pytest.mark.slow
ROOT = Path(__file__).resolve().parents[2]

#: Files that are this environment's, not the distribution's.
_SKIP = re.compile(r"(^|/)__pycache__/|\.pyc$|^\.\./|^/")


def _record_hash(data: bytes) -> str:
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def _repack(dist: metadata.Distribution, out: Path) -> Path:
    """``dist`` as it is installed here, back into a wheel: its files under site-packages, its dist-info
    (console scripts come back from entry_points.txt; RECORD is written anew)."""
    site = Path(str(dist.locate_file("")))
    (meta,) = (f for f in dist.files or () if len(f.parts) == 2 and f.match("*.dist-info/METADATA"))
    info = site / meta.parent
    lines = (info / "WHEEL").read_text().splitlines()
    tags = [line.split(":", 1)[1].strip().split("-") for line in lines if line.startswith("Tag:")]
    # The compressed tag set of the file name: py2-none-any and py3-none-any make py2.py3-none-any.
    tag = "-".join(".".join(sorted({t[i] for t in tags})) for i in range(3)) if tags else "py3-none-any"
    name = re.sub(r"[-_.]+", "_", dist.metadata["Name"])
    target = out / f"{name}-{dist.version}-{tag}.whl"
    record_name = f"{info.name}/RECORD"
    rows: list[tuple[str, str, str]] = []
    with zipfile.ZipFile(target, "w", zipfile.ZIP_STORED) as archive:
        for file in dist.files or ():
            relative = str(file).replace(os.sep, "/")
            if _SKIP.search(relative) or relative == record_name or relative.endswith(".dist-info/INSTALLER"):
                continue
            path = site / relative
            if not path.is_file():
                continue
            data = path.read_bytes()
            archive.writestr(relative, data)
            rows.append((relative, _record_hash(data), str(len(data))))
        text = io.StringIO()
        csv.writer(text, lineterminator="\n").writerows([*rows, (record_name, "", "")])
        archive.writestr(record_name, text.getvalue())
    return target


def _requirements(name: str, extras: frozenset[str], seen: dict[str, metadata.Distribution]) -> None:
    """``name`` and everything it requires (markers evaluated here, extras asked for included)."""
    todo: list[tuple[str, frozenset[str]]] = [(name, extras)]
    while todo:
        wanted, extras = todo.pop()
        dist = metadata.distribution(wanted)
        key = re.sub(r"[-_.]+", "-", dist.metadata["Name"]).lower()
        if key in seen and not extras:
            continue
        seen[key] = dist
        for text in dist.requires or ():
            req = Requirement(text)
            if req.marker is None or any(req.marker.evaluate({"extra": e}) for e in (extras or {""})):
                todo.append((req.name, frozenset(req.extras)))


def _wheel_requires(wheel: Path) -> list[str]:
    """The ``Requires-Dist`` lines of the built wheel (what it declares, not what the checkout installed)."""
    with zipfile.ZipFile(wheel) as archive:
        (name,) = (n for n in archive.namelist() if n.endswith(".dist-info/METADATA"))
        fields = email.parser.BytesHeaderParser().parsebytes(archive.read(name))
    return fields.get_all("Requires-Dist") or []


@pytest.fixture(scope="module")
def wheelhouse(tmp_path_factory: pytest.TempPathFactory, wheel: Path) -> Iterator[Path]:
    out = tmp_path_factory.mktemp("wheelhouse")
    wanted: dict[str, metadata.Distribution] = {}
    for text in _wheel_requires(wheel):
        req = Requirement(text)
        if req.marker is None or req.marker.evaluate({"extra": ""}):
            _requirements(req.name, frozenset(req.extras), wanted)
    for backend in ("setuptools", "wheel"):  # the build backend, for installs that build from the sources
        _requirements(backend, frozenset(), wanted)
    for dist in wanted.values():
        _repack(dist, out)
    yield out
    shutil.rmtree(out, ignore_errors=True)


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory, wheel: Path, wheelhouse: Path) -> Iterator[Path]:
    """A fresh virtualenv, outside the checkout, with the wheel installed offline; its folder."""
    home = tmp_path_factory.mktemp("installed")
    venv = home / "venv"
    assert ROOT not in venv.parents
    base = getattr(sys, "_base_executable", sys.executable)
    made = subprocess.run([base, "-m", "venv", str(venv)], capture_output=True, text=True, check=False, cwd=home)
    assert made.returncode == 0, made.stderr
    pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "-q", "--no-compile", "--no-index"]
    done = subprocess.run(
        [*pip, "--find-links", str(wheelhouse), str(wheel)],
        capture_output=True,
        text=True,
        check=False,
        cwd=home,
        env=_env(home),
    )
    assert done.returncode == 0, done.stderr[-3000:]
    yield venv
    shutil.rmtree(home, ignore_errors=True)


def _env(home: Path) -> dict[str, str]:
    """A person's environment in a fresh home: no PYTHONPATH, no pip configuration, offscreen Qt."""
    return {
        "PATH": "/usr/bin:/bin",
        "HOME": str(home),
        "TMPDIR": str(home),
        "PIP_NO_INPUT": "1",
        "PIP_CONFIG_FILE": os.devnull,
        "QT_QPA_PLATFORM": "offscreen",
        "XDG_DATA_HOME": str(home / "data"),
        "XDG_CONFIG_HOME": str(home / "config"),
        "TZ": "UTC",
    }


def _run(venv: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    home = venv.parent
    program = [str(venv / "bin" / argv[0]), *argv[1:]]
    return subprocess.run(program, capture_output=True, text=True, check=False, cwd=home, env=_env(home), timeout=300)


def _site_packages(venv: Path) -> Path:
    paths = sysconfig.get_paths(vars={"base": str(venv), "platbase": str(venv)})
    return Path(paths["purelib"])


def test_the_code_runs_from_the_installed_tree(installed: Path) -> None:
    script = "import core, scheduler_gui, tidemark_resources; print(core.__file__); print(scheduler_gui.__file__)"
    done = _run(installed, "python", "-c", script)
    assert done.returncode == 0, done.stderr
    site = _site_packages(installed).resolve()
    for line in done.stdout.splitlines():
        assert Path(line).resolve().is_relative_to(site), line
    no_resources = _run(installed, "python", "-c", "import resources")
    assert no_resources.returncode != 0, "the wheel must not install a top-level package named resources"


_FIRST_3 = ("--from", "2026-03-01", "--count", "3", "--format", "json")


def test_schedctl_previews_a_packaged_demo(installed: Path) -> None:
    found = _run(installed, "schedctl", "demos", "nightly-backup")
    assert found.returncode == 0, found.stderr
    path = Path(found.stdout.strip())
    assert path.resolve().is_relative_to(_site_packages(installed).resolve()), path
    listed = _run(installed, "schedctl", "demos")
    assert len(listed.stdout.splitlines()) == len(list((ROOT / "resources" / "demo").glob("*.yaml")))
    done = _run(installed, "schedctl", "preview", str(path), *_FIRST_3)
    assert done.returncode == 0, done.stderr
    rows = json.loads(done.stdout)["occurrences"]
    assert len(rows) == 3 and rows[0]["nominalLocal"].startswith("2026-03-01T")
    here = subprocess.run(
        [sys.executable, "-m", "core.cli", "preview", str(ROOT / "resources/demo/nightly-backup.yaml"), *_FIRST_3],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
    )
    assert rows == json.loads(here.stdout)["occurrences"], "the installed preview computes what the checkout does"


def test_scheduler_gui_renders_a_screenshot_offscreen(installed: Path, tmp_path: Path) -> None:
    shot = tmp_path / "window.png"
    done = _run(installed, "scheduler-gui", "--screenshot", str(shot), "--view", "monitor")
    assert done.returncode == 0, done.stderr
    image = QImage(str(shot))
    assert (image.width(), image.height()) == (1280, 800)
    assert shot.stat().st_size > 20_000, "a blank window compresses to almost nothing"


@pytest.mark.parametrize(
    ("folder", "pattern", "installed_as"),
    [
        ("core/ledger/migrations", "*.py", "core/ledger/migrations"),
        ("core/ledger/migrations", "*.mako", "core/ledger/migrations"),
        ("resources/icons", "*.svg", "tidemark_resources/icons"),
        ("resources/demo", "*.yaml", "tidemark_resources/demo"),
        ("resources/grafana", "*.json", "tidemark_resources/grafana"),
        ("scheduler_gui", "status_style.py", "scheduler_gui"),
    ],
    ids=["migrations", "migration_template", "icons", "demos", "grafana", "styles"],
)
def test_every_resource_is_in_the_installed_tree(installed: Path, folder: str, pattern: str, installed_as: str) -> None:
    site = _site_packages(installed)
    wanted = {p.relative_to(ROOT / folder) for p in (ROOT / folder).rglob(pattern) if "__pycache__" not in p.parts}
    assert wanted
    assert {p for p in wanted if not (site / installed_as / p).is_file()} == set()


def test_the_migrations_run_from_the_installed_tree(installed: Path) -> None:
    db = installed.parent / "ledger.db"
    done = _run(installed, "schedctl", "db", "upgrade", "--db", str(db))
    assert done.returncode == 0, done.stderr
    again = _run(installed, "schedctl", "ledger", "--db", str(db))
    assert again.returncode == 0, again.stderr


@pytest.fixture(scope="module")
def pipx(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """pipx (the one on PATH, else installed from the package index into a virtualenv of its own), and
    a folder with the newest pip: pipx puts it in the shared virtualenv it makes for its applications."""
    home = tmp_path_factory.mktemp("pipx")
    venv, wheels = home / "venv", home / "wheels"
    base = getattr(sys, "_base_executable", sys.executable)
    subprocess.run([base, "-m", "venv", str(venv)], capture_output=True, check=True)
    found = shutil.which("pipx")
    steps = [["download", "-q", "--no-deps", "-d", str(wheels), "pip"]] + ([] if found else [["install", "-q", "pipx"]])
    for step in steps:
        try:
            done = subprocess.run(
                [str(venv / "bin" / "python"), "-m", "pip", *step],
                capture_output=True,
                text=True,
                check=False,
                timeout=300,
            )
        except subprocess.TimeoutExpired:
            pytest.skip(f"`pip {step[0]}` of pipx's tools did not finish within 5 minutes (no network?)")
        if done.returncode != 0:
            why = (done.stderr.strip().splitlines() or ["no reason given"])[-1]
            pytest.skip(f"`pip {' '.join(step[:1] + step[-1:])}` failed (no network or package index?): {why}")
    return (Path(found) if found else venv / "bin" / "pipx"), wheels


def test_pipx_install_from_a_checkout(
    pipx: tuple[Path, Path], source_copy: Path, wheelhouse: Path, tmp_path: Path
) -> None:
    """The README's line for people who just want the app, from a checkout: ``pipx install .``. pipx builds
    the wheel itself (build isolation); the backend and the dependencies come from the wheelhouse, offline."""
    checkout = shutil.copytree(source_copy, tmp_path / "tidemark")
    env = _env(tmp_path) | {
        "PIPX_HOME": str(tmp_path / "pipx"),
        "PIPX_BIN_DIR": str(tmp_path / "bin"),
        "PIPX_MAN_DIR": str(tmp_path / "man"),
        "PIP_NO_INDEX": "1",
        "PIP_FIND_LINKS": f"{wheelhouse} {pipx[1]}",
    }
    done = subprocess.run(
        [str(pipx[0]), "install", "."], capture_output=True, text=True, check=False, cwd=checkout, env=env, timeout=900
    )
    assert done.returncode == 0, (done.stdout + done.stderr)[-3000:]
    bin_dir = tmp_path / "bin"
    assert (bin_dir / "schedctl").exists() and (bin_dir / "scheduler-gui").exists()
    found = subprocess.run(
        [str(bin_dir / "schedctl"), "demos", "daily-ops-summary"], capture_output=True, text=True, env=env, cwd=tmp_path
    )
    assert found.returncode == 0, found.stderr
    assert Path(found.stdout.strip()).resolve().is_relative_to((tmp_path / "pipx").resolve())
    preview = subprocess.run(
        [str(bin_dir / "schedctl"), "preview", found.stdout.strip(), *_FIRST_3],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
    )
    assert preview.returncode == 0, preview.stderr
    assert len(json.loads(preview.stdout)["occurrences"]) == 3
