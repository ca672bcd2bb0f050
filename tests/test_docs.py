"""The project's documents stand alone: the rules are vendored word for word, and every
relative link in the README and docs/ resolves inside the repository."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.spec import ROOT, examples_file

RULES = ROOT / "docs" / "rules.md"
MARKER = "<!-- Below: the specification, verbatim (dealing-rules.md). -->\n"
GAMES_MARKER = "\n<!-- Below: the cercle games' specification, verbatim (games.md). -->\n"
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")


def documents() -> list[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def test_the_rules_page_holds_the_spec_word_for_word() -> None:
    spec = examples_file().parent / "dealing-rules.md"
    if not spec.is_file():
        pytest.skip("shared/spec is not beside this checkout; docs/rules.md is the only copy")
    text = RULES.read_text(encoding="utf-8")
    assert MARKER in text, "docs/rules.md lost the line that starts the verbatim spec"
    assert GAMES_MARKER in text, "docs/rules.md lost the line that starts games.md"
    dealing, games = text.split(MARKER, 1)[1].split(GAMES_MARKER, 1)
    assert dealing == spec.read_text(encoding="utf-8"), (
        "docs/rules.md no longer matches shared/spec/dealing-rules.md: refresh it"
    )
    assert games == (spec.parent / "games.md").read_text(encoding="utf-8"), (
        "docs/rules.md no longer matches shared/spec/games.md: refresh it"
    )


def broken_links(doc: Path, root: Path = ROOT) -> list[str]:
    """The relative links of a Markdown file that do not name a file of the repository
    (code blocks are not links; URLs and same-page anchors are not checked here)."""
    text = re.sub(r"```.*?```", "", doc.read_text(encoding="utf-8"), flags=re.DOTALL)
    bad = []
    for match in LINK.finditer(text):
        link = match.group(1)
        if re.match(r"^[a-z][a-z0-9+.-]*:", link) or link.startswith("#"):
            continue
        target = (doc.parent / link.split("#", 1)[0]).resolve()
        if not target.is_relative_to(root) or not target.exists():
            bad.append(link)
    return bad


@pytest.mark.parametrize("doc", documents(), ids=lambda p: p.name)
def test_every_relative_link_resolves_inside_the_repository(doc: Path) -> None:
    assert not broken_links(doc), f"{doc.relative_to(ROOT)}: links outside the repository"


#: What a document awaiting its figures or its words looks like: an ALL_CAPS_PLACEHOLDER
#: token (FIGURES_README), or a note to self.
UNFINISHED = re.compile(
    r"\b(?:[A-Z]+_)+(?:README|VALIDATION|FIGURES?|TABLE|HERE)\b|\b(?:TODO|FIXME|TBD)\b"
)


@pytest.mark.parametrize("doc", documents(), ids=lambda p: p.name)
def test_no_document_waits_for_its_figures(doc: Path) -> None:
    """A figure left for later (a placeholder a benchmark was to fill) reads as the fact."""
    found = UNFINISHED.findall(doc.read_text(encoding="utf-8"))
    assert found == [], f"{doc.relative_to(ROOT)}: unfinished: {found}"


def test_the_unfinished_check_finds_a_placeholder() -> None:
    assert UNFINISHED.findall("in its cards 3-208. FIGURES_README and (TODO: rerun)") == [
        "FIGURES_README",
        "TODO",
    ]
    assert UNFINISHED.findall("`SHOE_SEQUENCE`, `WEAK_SHUFFLE`, `[reader.sim] cut_depth`") == []


def test_the_link_check_finds_a_link_out_of_the_repository_or_to_nothing(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / "docs").mkdir(parents=True)
    (repo / "docs" / "rules.md").write_text("rules", encoding="utf-8")
    (tmp_path / "shared.md").write_text("outside", encoding="utf-8")
    probe = repo / "docs" / "probe.md"
    probe.write_text(
        "[spec](../../shared.md) [ok](rules.md) [gone](nothing.md#x)\n"
        "[web](https://example.org/x) [here](#top)\n```\n[in code](../x)\n```\n",
        encoding="utf-8",
    )
    assert broken_links(probe, repo) == ["../../shared.md", "nothing.md#x"]


def test_the_readme_names_every_event_each_api_role_may_send() -> None:
    """`POST /api/events`' roles in the README: each role's events as the vocabulary has
    them (a new event type, such as the cercle games' `decision`, is named there too)."""
    from station.core.events import EVENT_ROLES

    text = " ".join((ROOT / "README.md").read_text(encoding="utf-8").split())
    roles = re.search(
        r"Roles: `dealer` \(([^)]*)\), `supervisor` \(([^)]*)\), `rig` \(([^)]*)\)", text
    )
    assert roles, "the README's POST /api/events paragraph lists the roles"
    for role, named in zip(("dealer", "supervisor", "rig"), roles.groups(), strict=True):
        events = {name for name, needs in EVENT_ROLES.items() if needs == role}
        assert events <= set(re.findall(r"`(\w+)`", named)), (role, events)


def test_the_readmes_config_table_has_a_row_per_section() -> None:
    """The README's summary of the config names every section of the model."""
    from station.live.config import StationConfig

    text = (ROOT / "README.md").read_text(encoding="utf-8")
    rows = set(re.findall(r"^\| `\[([a-z_.]+)\]` \|", text, flags=re.MULTILINE))
    sections = {n for n, f in StationConfig.model_fields.items() if n != "source"}
    assert sections <= rows, sections - rows
