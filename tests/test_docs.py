"""The documentation site: builds with `mkdocs build --strict` (API reference from the
docstrings, no network), and the links between its pages resolve."""

import pathlib
import re
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
LINK = re.compile(r"\]\(([^)\s]+)\)")


def _nav_pages(node):
    if isinstance(node, str):
        yield node
    elif isinstance(node, dict):
        for value in node.values():
            yield from _nav_pages(value)
    elif isinstance(node, list):
        for item in node:
            yield from _nav_pages(item)


def _config():
    yaml = pytest.importorskip("yaml")

    class Loader(yaml.SafeLoader):  # mkdocs.yml may carry python tags; none are needed here
        pass

    Loader.add_multi_constructor("tag:yaml.org,2002:python/", lambda loader, suffix, node: None)
    return yaml.load((ROOT / "mkdocs.yml").read_text(), Loader=Loader)


def test_site_builds_strict(tmp_path):
    pytest.importorskip("mkdocs")
    pytest.importorskip("mkdocstrings_handlers.python")
    run = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(ROOT / "mkdocs.yml"), "-d", str(tmp_path)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    api = (tmp_path / "api" / "control" / "index.html").read_text()
    assert "SmoothStart" in api and "drive profile" in api  # rendered from the docstrings
    assert (tmp_path / "references" / "index.html").is_file()


def test_nav_pages_exist_and_links_between_pages_resolve():
    pages = list(_nav_pages(_config()["nav"]))
    missing = [p for p in pages if not (DOCS / p).is_file()]
    assert missing == []
    broken = []
    for page in pages:
        path = DOCS / page
        for target in LINK.findall(path.read_text()):
            if re.match(r"^[a-z]+:", target) or target.startswith("#"):
                continue
            file = target.split("#")[0]
            resolved = (path.parent / file).resolve()
            if resolved.is_relative_to(DOCS) and not resolved.exists():
                broken.append(f"{page} -> {target}")
    assert broken == []
