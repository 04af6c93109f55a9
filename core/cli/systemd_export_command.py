"""``schedctl export systemd``: a spec as NAME.timer and NAME.service, the nearest equivalent,
with a comment for each policy systemd cannot keep; refused in one line where there is none."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from core.cli.arguments import current_time
from core.cli.common import Invalid, UsageError, read_spec
from core.cli.import_commands import write_and_report

if TYPE_CHECKING:
    import argparse


def cmd_export_systemd(args: argparse.Namespace) -> int:
    """Write the timer and the service into --out and say what they could not keep."""
    from core.exporting.refusal import ExportRefused
    from core.exporting.systemd import export_systemd
    from core.time.zones import get_zone

    spec = read_spec(args.spec)
    out_dir = Path(args.out)
    if out_dir.exists() and not out_dir.is_dir():
        raise UsageError(f"--out: {args.out} is a file, not a folder")
    try:
        units = export_systemd(spec, current_time(args, get_zone("UTC")))
    except ExportRefused as exc:
        raise Invalid([f"{args.spec}: no systemd equivalent: {exc}"]) from None
    files = [(out_dir / f"{units.name}.timer", units.timer), (out_dir / f"{units.name}.service", units.service)]
    report = [f"wrote {units.name}.timer and {units.name}.service"]
    report += [f"  not kept: {line}" for line in units.lost]
    report.append("  exact: systemd runs it when the spec does" if units.exact else "  nearest equivalent (see above)")
    return write_and_report(files, out_dir, report, overwrite=args.overwrite)
