"""The project's documents stand alone: the rules are vendored word for word, every
relative link (and picture) in the README and docs/ resolves inside the repository, to a
heading that is there, and the manual in docs/ builds as a site (`make docs`) with every
page in its table of contents."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.spec import ROOT, examples_file

RULES = ROOT / "docs" / "rules.md"
MARKER = "<!-- Below: the specification, verbatim (dealing-rules.md). -->\n"
GAMES_MARKER = "\n<!-- Below: the cercle games' specification, verbatim (games.md). -->\n"
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)|<img [^>]*\bsrc=\"([^\"]+)\"")
DOCS = ROOT / "docs"
#: The page that holds the live station's config summary and its API's roles.
LIVE = DOCS / "live-station.md"


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


def anchors(doc: Path) -> set[str]:
    """The anchors GitHub gives a Markdown file's headings: lower case, punctuation
    dropped, spaces as hyphens; a repeated heading gets -1, -2..."""
    seen: dict[str, int] = {}
    found = set()
    text = re.sub(r"```.*?```", "", doc.read_text(encoding="utf-8"), flags=re.DOTALL)
    for heading in re.findall(r"^#{1,6} (.+?)#*\s*$", text, flags=re.MULTILINE):
        slug = re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")
        count = seen.get(slug, 0)
        seen[slug] = count + 1
        found.add(slug if count == 0 else f"{slug}-{count}")
    return found


def broken_links(doc: Path, root: Path = ROOT) -> list[str]:
    """The relative links and pictures of a Markdown file that do not name a file of the
    repository, or name a heading its Markdown file does not have (code blocks are not
    links; URLs are not checked here)."""
    text = re.sub(r"```.*?```", "", doc.read_text(encoding="utf-8"), flags=re.DOTALL)
    bad = []
    for match in LINK.finditer(text):
        link = match.group(1) or match.group(2)
        if re.match(r"^[a-z][a-z0-9+.-]*:", link):
            continue
        path, _, anchor = link.partition("#")
        target = (doc.parent / path).resolve() if path else doc
        missing = not target.is_relative_to(root) or not target.exists()
        if missing or (anchor and target.suffix == ".md" and anchor not in anchors(target)):
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
        "# Top\n[spec](../../shared.md) [ok](rules.md) [gone](nothing.md#x)\n"
        "[web](https://example.org/x) [here](#top)\n```\n[in code](../x)\n```\n",
        encoding="utf-8",
    )
    assert broken_links(probe, repo) == ["../../shared.md", "nothing.md#x"]
    probe.write_text(
        "# Top\n## A heading: `code`, twice\n## A heading: code, twice\n"
        "[t](#top) [h](#a-heading-code-twice-1) [r](rules.md) [no](#gone) [no](rules.md#x)\n"
        '<img src="rules.md" alt="ok"> <img width="3" src="gone.png">\n',
        encoding="utf-8",
    )
    assert broken_links(probe, repo) == ["#gone", "rules.md#x", "gone.png"]


def test_the_readme_names_every_event_each_api_role_may_send() -> None:
    """`POST /api/events`' roles in the manual: each role's events as the vocabulary has
    them (a new event type, such as the cercle games' `decision`, is named there too)."""
    from station.core.events import EVENT_ROLES

    text = " ".join(LIVE.read_text(encoding="utf-8").split())
    roles = re.search(
        r"Roles: `dealer` \(([^)]*)\), `supervisor` \(([^)]*)\), `rig` \(([^)]*)\)", text
    )
    assert roles, f"{LIVE.name}: the POST /api/events paragraph lists the roles"
    for role, named in zip(("dealer", "supervisor", "rig"), roles.groups(), strict=True):
        events = {name for name, needs in EVENT_ROLES.items() if needs == role}
        assert events <= set(re.findall(r"`(\w+)`", named)), (role, events)


def test_the_manuals_config_table_has_a_row_per_section() -> None:
    """The manual's summary of the config names every section of the model."""
    from station.live.config import StationConfig

    text = LIVE.read_text(encoding="utf-8")
    rows = set(re.findall(r"^\| `\[([a-z_.]+)\]` \|", text, flags=re.MULTILINE))
    sections = {n for n, f in StationConfig.model_fields.items() if n != "source"}
    assert sections <= rows, sections - rows


def pages() -> list[Path]:
    return sorted(DOCS.glob("*.md"))


@pytest.mark.parametrize("page", pages(), ids=lambda p: p.name)
def test_every_page_begins_with_its_title_and_a_one_line_summary(page: Path) -> None:
    title, blank, summary, after = page.read_text(encoding="utf-8").split("\n", 4)[:4]
    assert title.startswith("# ") and blank == "", f"{page.name}: starts with '# Title'"
    assert summary.strip() and not summary.startswith(("#", " ", "|", "!", "<")), page.name
    assert after == "", f"{page.name}: the summary is one line, then a blank line"


def test_the_contents_and_the_sites_nav_list_every_page() -> None:
    """docs/index.md links every page; mkdocs.yml's nav lists every page once."""
    index = (DOCS / "index.md").read_text(encoding="utf-8")
    linked = {m.group(1).split("#")[0] for m in LINK.finditer(index) if m.group(1)}
    others = {p.name for p in pages()} - {"index.md"}
    assert others <= linked, others - linked
    nav = re.findall(r"^\s+- [^\n]*?:?\s*(\S+\.md)\s*$", (ROOT / "mkdocs.yml").read_text(), re.M)
    assert sorted(nav) == sorted(others | {"index.md"}), nav


def mkdocs_build(config: Path, site: Path) -> subprocess.CompletedProcess[str]:
    mkdocs = Path(sys.executable).parent / "mkdocs"
    return subprocess.run(
        [str(mkdocs), "build", "--strict", "--config-file", str(config), "--site-dir", str(site)],
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_make_docs_builds_the_manual_with_no_warning(tmp_path: Path) -> None:
    """`make docs`, offline: every page, its pictures, and the files of the repository it
    links to (copied under _repo/: the config examples, CHANGELOG.md)."""
    built = mkdocs_build(ROOT / "mkdocs.yml", tmp_path / "site")
    assert built.returncode == 0, built.stderr
    site = tmp_path / "site"
    assert {p.stem for p in site.glob("*.html")} >= {p.stem for p in pages()}
    assert (site / "dashboard-1366.png").is_file()
    assert (site / "_repo" / "config" / "example.toml").is_file()
    assert 'href="_repo/config/example.toml"' in (site / "live-station.html").read_text()


def test_the_docs_build_fails_on_a_link_to_no_file_of_the_repository(tmp_path: Path) -> None:
    """The hook's check: a page's link out of docs/ to a file that is not there is a
    warning, which --strict makes a failed build; one that is there is copied."""
    (tmp_path / "docs").mkdir()
    (tmp_path / "present.txt").write_text("here", encoding="utf-8")
    (tmp_path / "docs" / "index.md").write_text(
        "# Probe\n\n[ok](../present.txt) [gone](../config/absent.toml)\n", encoding="utf-8"
    )
    config = tmp_path / "mkdocs.yml"
    config.write_text(
        f"site_name: probe\nhooks:\n  - {ROOT / 'scripts' / 'mkdocs_hooks.py'}\n",
        encoding="utf-8",
    )
    built = mkdocs_build(config, tmp_path / "site")
    assert built.returncode != 0
    assert "../config/absent.toml, which is not a file of the repository" in built.stderr
    (tmp_path / "docs" / "index.md").write_text("# Probe\n\n[ok](../present.txt)\n")
    built = mkdocs_build(config, tmp_path / "site")
    assert built.returncode == 0, built.stderr
    assert (tmp_path / "site" / "_repo" / "present.txt").read_text() == "here"


def test_the_site_reads_lists_as_github_does() -> None:
    """A list right after a paragraph, an item nested by two spaces and a table in an item
    (docs/rules.md has all three) reach Python-Markdown as GitHub shows them."""
    from scripts.mkdocs_hooks import lists_as_github_reads_them

    page = (
        "Then:\n- one\n  - nested\n    more of it\n- two:\n  | a | b |\n  |---|---|\n"
        "- three\n\n    - code, not a list\n```\nx:\n- in a fence\n```\n"
    )
    assert lists_as_github_reads_them(page) == (
        "Then:\n\n- one\n    - nested\n    more of it\n- two:\n\n    | a | b |\n"
        "    |---|---|\n\n- three\n\n    - code, not a list\n```\nx:\n- in a fence\n```\n"
    )
    assert lists_as_github_reads_them("# Title\n- a\n\nText\n\n- b\n") == (
        "# Title\n- a\n\nText\n\n- b\n"
    )
