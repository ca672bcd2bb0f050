"""MkDocs hooks for `make docs`: the pages are written for GitHub, and the site shows them
as GitHub does.

- They link to files outside docs/ (the config examples, CHANGELOG.md) as `../config/x`.
  MkDocs knows only docs/, so each such link is checked here (a link to nothing is a
  warning, which `--strict` makes an error) and the file is copied into the site under
  `_repo/`, the link pointed at the copy: the site stays whole offline.
- GitHub starts a list right after a paragraph line and nests an item indented by two
  spaces; Python-Markdown wants a blank line and four. The page's source is left as it
  is (docs/rules.md is vendored word for word); what MkDocs reads gets both."""

from __future__ import annotations

import logging
import posixpath
import re
from pathlib import Path
from typing import Any

from mkdocs.config.defaults import MkDocsConfig
from mkdocs.structure.files import File, Files
from mkdocs.structure.pages import Page

log = logging.getLogger("mkdocs.hooks.repo_links")

#: A Markdown link's or an <img>'s target.
TARGET = re.compile(r"(\]\(|src=\")([^)\s\"]+)")
#: Where the repository's files go in the site.
COPIES = "_repo"
#: A list item: its indentation, then its marker.
ITEM = re.compile(r"^( *)(?:[-*+]|\d+\.) ")


class RepoFile(File):
    """A file of the repository outside docs/, copied as it is (a .md too: not a page)."""

    def is_documentation_page(self) -> bool:
        return False


def _repo_root(config: MkDocsConfig) -> Path:
    return Path(config.config_file_path).resolve().parent


def _outside(link: str, page_uri: str, config: MkDocsConfig) -> tuple[str, str] | None:
    """(the repository path, the anchor) of a relative link that leaves docs/, else None."""
    if re.match(r"^[a-z][a-z0-9+.-]*:", link) or link.startswith(("#", "/")):
        return None
    path, _, anchor = link.partition("#")
    docs = Path(config.docs_dir).resolve()
    target = (docs / posixpath.dirname(page_uri) / path).resolve()
    if target.is_relative_to(docs):
        return None
    root = _repo_root(config)
    rel = target.relative_to(root).as_posix() if target.is_relative_to(root) else "/" + path
    return rel, anchor


def on_files(files: Files, config: MkDocsConfig, **_: Any) -> Files:
    root = _repo_root(config)
    for page in list(files.documentation_pages()):
        text = Path(page.abs_src_path or "").read_text(encoding="utf-8")
        for match in TARGET.finditer(text):
            found = _outside(match.group(2), page.src_uri, config)
            if found is None or found[0].startswith("/"):
                continue
            source = root / found[0]
            uri = f"{COPIES}/{found[0]}"
            if source.is_file() and files.get_file_from_path(uri) is None:
                files.append(RepoFile.generated(config, uri, abs_src_path=str(source)))
    return files


def lists_as_github_reads_them(markdown: str) -> str:
    """A blank line before a list that follows a paragraph, and nested items (and a
    table in an item) indented by four spaces; code blocks as they are."""
    out: list[str] = []
    in_list = fenced = False
    previous = ""
    for line in markdown.split("\n"):
        if line.startswith("```"):
            fenced = not fenced
        item = None if fenced else ITEM.match(line)
        top = item is not None and not item.group(1)
        after_text = previous.strip() and not previous.startswith(("#", "|", "    "))
        if top and ((not in_list and after_text) or previous.lstrip().startswith("|")):
            out.append("")  # a list after a paragraph, or an item after an item's table
        indent = len(line) - len(line.lstrip(" "))
        if in_list and 0 < indent < 4 and (item or line.lstrip().startswith("|")):
            if line.lstrip().startswith("|") and not previous.lstrip().startswith("|"):
                out.append("")
            line = "    " + line.lstrip(" ")
        if not line.strip():
            in_list = False
        elif top or in_list:
            in_list = not fenced
        out.append(line)
        previous = line
    return "\n".join(out)


def on_page_markdown(markdown: str, page: Page, config: MkDocsConfig, **_: Any) -> str:
    markdown = lists_as_github_reads_them(markdown)
    root = _repo_root(config)
    here = posixpath.dirname(page.file.src_uri)

    def point(match: re.Match[str]) -> str:
        found = _outside(match.group(2), page.file.src_uri, config)
        if found is None:
            return match.group(0)
        rel, anchor = found
        if rel.startswith("/") or not (root / rel).exists():
            log.warning(
                "%s: link to %s, which is not a file of the repository",
                page.file.src_uri,
                match.group(2),
            )
            return match.group(0)
        if (root / rel).is_dir():
            log.warning(
                "%s: link to the folder %s: name a file in it", page.file.src_uri, match.group(2)
            )
            return match.group(0)
        target = posixpath.relpath(f"{COPIES}/{rel}", here or ".")
        return match.group(1) + target + (f"#{anchor}" if anchor else "")

    return TARGET.sub(point, markdown)
