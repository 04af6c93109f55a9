"""Test modules of folders that are not packages are imported by their file name alone, so two of
them with one name stop the whole run at collection ("import file mismatch"). None may share one."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

TESTS = Path(__file__).resolve().parent


def test_no_two_plain_test_modules_share_a_name() -> None:
    by_name: dict[str, list[str]] = defaultdict(list)
    for path in TESTS.rglob("*.py"):
        if path.parent != TESTS and (path.parent / "__init__.py").exists():
            continue  # inside a package: imported under the package's name
        by_name[path.name].append(str(path.relative_to(TESTS)))
    shared = {name: where for name, where in by_name.items() if len(where) > 1 and name != "conftest.py"}
    assert shared == {}


def test_no_module_imports_conftest_by_name() -> None:
    """Several test folders have a conftest.py that is not in a package, so the name ``conftest``
    means whichever was loaded last: shared helpers live in modules of their own name."""
    found = [
        f"{path.relative_to(TESTS)}:{n}"
        for path in TESTS.rglob("*.py")
        if path.name != "conftest.py" or path.parent.name == "gui"
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if line.lstrip().startswith(("from conftest import", "import conftest"))
    ]
    assert found == []
