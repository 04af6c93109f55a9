"""Another OS user of this machine, made for a test, and schedctl run as them: a teammate who
publishes to the same ledger. Creating a user needs root (CI runs as root); without it, or
without useradd, the fixture skips, saying why."""

from __future__ import annotations

import os
import pwd
import shutil
import stat
import subprocess
import sys
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from .team_processes import APPLY_AT, PY


def _unreadable_by_others(paths: list[Path]) -> Path | None:
    """The first of ``paths``, or of the folders above them, that another OS user cannot read
    (a file) or enter (a folder); None when they can read every one."""
    for path in paths:
        for step in [*reversed(path.parents), path]:
            mode = step.stat().st_mode
            need = stat.S_IXOTH if stat.S_ISDIR(mode) else stat.S_IROTH
            if mode & need != need:
                return step
    return None


def _schedctl_for_others() -> tuple[list[str], dict[str, str]]:
    """How another OS user runs this Tidemark: the command and the environment it needs.

    This interpreter when they can read it; else a system one of the same version
    (this one may live in a home folder), given this Tidemark and its packages on
    PYTHONPATH. Skips, saying why, when there is none."""
    import site

    from core import cli

    tidemark = Path(cli.__file__).resolve().parents[2]
    packages = [Path(p) for p in site.getsitepackages() if Path(p).is_dir()]
    version = f"python{sys.version_info.major}.{sys.version_info.minor}"
    blocked = _unreadable_by_others([Path(PY), Path(PY).resolve(), Path(os.__file__), *packages, tidemark / "core"])
    if blocked is None:
        return [PY, "-m", "core.cli"], {}
    for other in (Path("/usr/bin") / version, Path("/usr/local/bin") / version):
        if other.exists() and _unreadable_by_others([other.resolve(), *packages, tidemark / "core"]) is None:
            return [str(other), "-m", "core.cli"], {"PYTHONPATH": os.pathsep.join(map(str, [tidemark, *packages]))}
    pytest.skip(f"another OS user cannot run this Tidemark: {blocked} is closed to others, and no {version} is open")


@dataclass(frozen=True)
class Teammate:
    """A real OS user of this machine, made for the test, and how to run schedctl as them."""

    name: str
    uid: int
    gid: int
    schedctl: list[str]
    env: dict[str, str]

    def apply(self, spec: Path, url: str, host: str, **claims: str) -> None:
        """``schedctl apply`` as this user on ``host``, from the spec's folder (theirs to read).
        ``claims`` are more environment variables (``LOGNAME="root"``): the publisher's name comes
        from the process's own uid, whatever they say."""
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "LANG": "C.UTF-8",
            "HOME": str(spec.parent),
            "TIDEMARK_HOSTNAME": host,
            **self.env,
            **claims,
        }
        done = subprocess.run(
            [*self.schedctl, "apply", str(spec), "--db", url, "--now", APPLY_AT],
            env=env,
            user=self.uid,
            group=self.gid,
            extra_groups=[],
            cwd=spec.parent,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert (done.returncode, done.stderr) == (0, ""), done.stderr


def another_os_user() -> Iterator[Teammate]:
    """Another OS user (removed after the test): needs root, to create them (CI runs as root)."""
    if os.geteuid() != 0:
        pytest.skip("publishing as another OS user needs root, to create that user (CI runs as root)")
    useradd, userdel = shutil.which("useradd"), shutil.which("userdel")
    if useradd is None or userdel is None:
        pytest.skip("publishing as another OS user needs useradd and userdel, to create and remove that user")
    schedctl, env = _schedctl_for_others()
    name = f"tm{uuid.uuid4().hex[:10]}"
    subprocess.run([useradd, "--no-create-home", "--user-group", name], check=True, capture_output=True)
    try:
        entry = pwd.getpwnam(name)
        yield Teammate(name, entry.pw_uid, entry.pw_gid, schedctl, env)
    finally:
        subprocess.run([userdel, name], check=True, capture_output=True)
