"""Tasks the runner's tests start, as Python scripts: each does one hard thing to the runner."""

from __future__ import annotations

from pathlib import Path

#: A megabyte on each pipe, interleaved (the runner must keep reading both, or the task blocks), then exit 5.
MEGABYTE_ON_EACH_PIPE = (
    "import sys\n"
    "for i in range(1024):\n"
    "    sys.stdout.write('o' * 1023 + '\\n'); sys.stderr.write('e' * 1023 + '\\n')\n"
    "sys.stdout.write('END-OUT'); sys.stderr.write('END-ERR')\n"
    "sys.exit(5)\n"
)


def ignoring_sigterm(pidfile: Path) -> str:
    """A task and its child, both ignoring SIGTERM; the child's pid written to ``pidfile``; prints ``started``."""
    return (
        "import signal, subprocess, sys, time\n"
        "signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
        "child = subprocess.Popen([sys.executable, '-c', "
        "'import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(60)'])\n"
        f"open({str(pidfile)!r}, 'w').write(str(child.pid))\n"
        "print('started', flush=True)\n"
        "time.sleep(60)\n"
    )


def leaving_a_grandchild(pidfile: Path) -> str:
    """A task that exits at once, its child left holding stdout for a minute (pid in ``pidfile``)."""
    return (
        "import subprocess, sys\n"
        "child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'])\n"
        f"open({str(pidfile)!r}, 'w').write(str(child.pid))\n"
        "print('parent done', flush=True)\n"
    )
