"""A release says what it is (issue 34): the version comes from git (setuptools-scm), a
tag `vX.Y.Z` is X.Y.Z, any other commit names its commit, a fresh or shallow clone gets a
real version too; `station --version` prints it with the journal's and the floor
archive's schema versions, the ones the schemas use."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from station.floor import schema as archive_schema
from station.live.journal import schema as journal_schema
from station.shared import schema_versions
from tests.conftest import ROOT, run_station

pytestmark = pytest.mark.slow


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@t", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()


def scm_version(checkout: Path) -> str:
    """The version a build of `checkout` gets (pyproject.toml's [tool.setuptools_scm])."""
    return subprocess.run(
        [sys.executable, "-m", "setuptools_scm"],
        cwd=checkout,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()


def test_a_tag_is_the_release_and_a_later_commit_names_itself(tmp_path: Path) -> None:
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", "--no-local", str(ROOT), str(clone))
    git(clone, "tag", "-a", "v9.8.7", "-m", "release 9.8.7")
    assert scm_version(clone) == "9.8.7"
    (clone / "CHANGELOG.md").write_text("changed\n")
    git(clone, "commit", "-qam", "after the release")
    head = git(clone, "rev-parse", "--short", "HEAD")
    version = scm_version(clone)
    assert re.fullmatch(r"9\.8\.8\.dev1\+g[0-9a-f]+", version), version
    assert version.split("+g")[1].startswith(head[:7])


def test_a_shallow_clone_still_names_its_commit(tmp_path: Path) -> None:
    """CI's clone may have one commit and no tag: the version still names the commit."""
    clone = tmp_path / "shallow"
    git(tmp_path, "clone", "-q", "--depth", "1", f"file://{ROOT}", str(clone))
    head = git(clone, "rev-parse", "--short", "HEAD")
    version = scm_version(clone)
    assert "unknown" not in version and re.search(rf"\+g{head[:7]}", version), version


def test_version_prints_the_schema_versions_the_schemas_use() -> None:
    assert journal_schema.SCHEMA_VERSION == schema_versions.JOURNAL
    assert archive_schema.SCHEMA_VERSION == schema_versions.ARCHIVE
    done = run_station("--version")
    assert done.returncode == 0
    lines = done.stdout.decode().splitlines()
    assert re.fullmatch(r"station \S+", lines[0]) and lines[0] != "station 0+unknown"
    assert lines[1] == (
        f"journal schema {schema_versions.JOURNAL}, floor archive schema {schema_versions.ARCHIVE}"
    )


def test_the_changelog_has_a_heading_per_release() -> None:
    """Entries sit under a version's heading (`## X.Y.Z (date)`), the newest first; the
    release process is written down."""
    text = (ROOT / "CHANGELOG.md").read_text()
    headings = re.findall(r"^## (\S+)", text, re.M)
    assert headings[0] == "Unreleased" and headings[1:3] == ["0.2.0", "0.1.0"], headings
    assert "**Releases.**" in text and "git tag -a vX.Y.Z" in text


def test_an_sdist_and_a_wheel_built_from_it_carry_the_version(tmp_path: Path) -> None:
    """A release's sdist (made from a tagged clone) says the tag's version, and a wheel
    built from the sdist alone (no git in it) says the same."""
    import tarfile

    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", "--no-local", str(ROOT), str(clone))
    git(clone, "tag", "-a", "v9.8.7", "-m", "release 9.8.7")
    env = {**os.environ, "STATION_PURE_CORE": "1"}  # no mypyc compile: the version is asked
    subprocess.run(
        [sys.executable, "-m", "build", "--sdist", "--outdir", str(tmp_path / "dist"), str(clone)],
        capture_output=True,
        check=True,
        env=env,
    )
    (sdist,) = (tmp_path / "dist").glob("*.tar.gz")
    assert sdist.name == "baccarat_station-9.8.7.tar.gz"
    with tarfile.open(sdist) as archive:
        archive.extractall(tmp_path / "unpacked", filter="data")
    (unpacked,) = (tmp_path / "unpacked").iterdir()
    assert not (unpacked / ".git").exists()
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "-q",
            "-w",
            str(tmp_path / "w"),
            str(unpacked),
        ],
        check=True,
        env=env,
    )
    (wheel,) = (tmp_path / "w").glob("*.whl")
    assert wheel.name.startswith("baccarat_station-9.8.7-")
