"""``schedctl export crontab``: a spec's nearest crontab equivalent, to a file or standard output.

A spec cron has no equivalent for is refused in one line with the reason, exit 2, nothing written."""

from __future__ import annotations

from typing import TYPE_CHECKING

from core.cli.arguments import current_time
from core.cli.common import EXIT_OK, Invalid, read_spec
from core.cli.export_output import checked_out, write_export
from core.cli.output import out

if TYPE_CHECKING:
    import argparse


def cmd_export_crontab(args: argparse.Namespace) -> int:
    """Write the crontab text; with --out FILE, say where and whether it runs at the spec's times."""
    from core.exporting.crontab import export_crontab
    from core.exporting.refusal import ExportRefused
    from core.time.zones import get_zone

    spec = read_spec(args.spec)
    path = checked_out(args.out, overwrite=args.overwrite)
    try:
        export = export_crontab(spec, current_time(args, get_zone("UTC")))
    except ExportRefused as exc:
        raise Invalid([f"{args.spec}: cannot be a crontab line: {exc}"]) from None
    write_export(export.text, path, overwrite=args.overwrite)
    if path is not None:
        kept = "runs at the spec's times" if export.exact else "does NOT run at the spec's times: see the comments"
        out(f"wrote {path}: {export.fields.expression}; {kept}")
    return EXIT_OK
