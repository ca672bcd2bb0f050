"""The tree keeps one room per job: no source module of the installed packages passes 600
lines (a module that does has two jobs; split it by concern, docs/architecture.md)."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("station", "drivers", "calibration", "devkit")
MOST_LINES = 600


def test_no_source_module_passes_600_lines() -> None:
    long = {
        str(path.relative_to(ROOT)): n
        for package in PACKAGES
        for path in (ROOT / package).rglob("*.py")
        if (n := len(path.read_text(encoding="utf-8").splitlines())) > MOST_LINES
    }
    assert not long, f"modules over {MOST_LINES} lines (split them by concern): {long}"


def test_every_folder_of_code_is_a_package() -> None:
    """A folder of modules without __init__.py is a room nobody can find (and import-linter
    does not see)."""
    missing = [
        str(folder.relative_to(ROOT))
        for package in PACKAGES
        for folder in [ROOT / package, *(ROOT / package).rglob("*")]
        if folder.is_dir()
        and folder.name != "__pycache__"
        and any(folder.glob("*.py"))
        and not (folder / "__init__.py").exists()
    ]
    assert not missing, missing
