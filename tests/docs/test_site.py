"""The manual as a site: it builds with --strict, and it holds every section of the old README."""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys

import pytest

from ..conftest import ROOT

DOCS = ROOT / "docs"

# The `## ` sections of the README when it was the whole manual; each is now a
# heading on some page of docs/.
OLD_README_SECTIONS = [
    "Inputs",
    "Doubts and `--strict`",
    "Protocols",
    "Masks",
    "Reports",
    "CI gates",
    "Batch scoring and comparing models",
    "Exit codes",
    "Safety",
    "Python API",
    "Architecture",
    "Pictures",
    "Why a model misses",
    "Performance",
    "Many machines",
    "Dependencies",
    "Development",
    "IoU of anything",
]
# ... and its `### ` subsections.
OLD_README_SUBSECTIONS = [
    "pycocotools' defects, reproduced by default",
    "JSON schema (`schema_version` 1)",
    "The calculator",
    "Semantic segmentation",
]

BUILD_NEEDS = ("mkdocs", "material", "mkdocstrings_handlers.python")


def headings(text: str) -> list[str]:
    """The ATX headings of a Markdown page, outside fenced code blocks."""
    found, fence = [], None
    for line in text.splitlines():
        marker = re.match(r"\s*(```|~~~)", line)
        if marker:
            fence = None if fence == marker.group(1) else (fence or marker.group(1))
            continue
        if fence is None and (m := re.match(r"#{1,6} +(.*?)[ #]*$", line)):
            found.append(m.group(1))
    return found


def site_headings() -> dict[str, list[str]]:
    return {p.name: headings(p.read_text()) for p in sorted(DOCS.glob("*.md"))}


def test_headings_reads_headings_and_skips_code():
    page = "# Title\n\n```sh\n# a comment\n```\n\n## Section ##\ntext # not one\n"
    assert headings(page) == ["Title", "Section"]


@pytest.mark.parametrize("title", OLD_README_SECTIONS + OLD_README_SUBSECTIONS)
def test_every_old_readme_section_is_a_heading_of_the_site(title):
    pages = site_headings()
    where = [name for name, found in pages.items() if title in found]
    assert where, f"no page of docs/ has the heading {title!r}; pages: {sorted(pages)}"


def ci_snippet(text: str) -> str:
    return re.search(r"<!-- ci-snippet -->\s*```yaml\n(.*?)```", text, re.S).group(1)


def test_ci_page_shows_the_snippet_the_readme_runs():
    """tests/cli/test_readme.py runs the README's snippet; the CI page shows the same one."""
    readme = ci_snippet((ROOT / "README.md").read_text())
    page = ci_snippet((DOCS / "ci.md").read_text())
    assert page == readme


def test_site_builds_strict(tmp_path):
    missing = [name for name in BUILD_NEEDS if importlib.util.find_spec(name) is None]
    if missing:
        pytest.skip(f"the docs extra is not installed ({', '.join(missing)} missing): "
                    "pip install -e '.[docs]' or run `make docs`")  # fmt: skip
    p = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
        cwd=ROOT, capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert p.returncode == 0, f"exit {p.returncode}\n{p.stdout}\n{p.stderr}"
    assert (tmp_path / "site" / "index.html").exists()
    assert (tmp_path / "site" / "api" / "index.html").exists()
