"""The documentation site (mkdocs.yml, scripts/docs-site): docs/ and the Python API reference
from the docstrings build strictly, and a broken link fails the build. Needs the `docs` extra,
which CI installs (with CI=true a missing mkdocs fails instead of skipping)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent


def mkdocs_or_skip() -> None:
    try:
        import mkdocs  # noqa: F401
        import mkdocstrings  # noqa: F401
    except ImportError:
        if os.environ.get("CI") == "true":
            pytest.fail('CI without mkdocs: install the docs extra (pip install -e ".[docs]")')
        pytest.skip("mkdocs is not installed (the docs extra)")


def build(config: Path, site: Path) -> subprocess.CompletedProcess[str]:
    cmd = [sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(config)]
    return subprocess.run(
        [*cmd, "--site-dir", str(site)], capture_output=True, text=True, timeout=300
    )


def test_the_site_builds_strictly_with_the_api_reference(tmp_path: Path) -> None:
    mkdocs_or_skip()
    done = build(REPO / "mkdocs.yml", tmp_path / "site")
    assert done.returncode == 0, done.stderr[-3000:]
    api = (tmp_path / "site" / "api" / "index.html").read_text()
    # From the docstrings: run's, Result's methods.
    assert 'id="cnsim.api.run"' in api
    assert "Run a scenario and return its" in api
    assert 'id="cnsim.result.Result.save"' in api
    assert (tmp_path / "site" / "gallery" / "index.html").is_file()


def test_a_broken_link_fails_the_build(tmp_path: Path) -> None:
    mkdocs_or_skip()
    docs = tmp_path / "docs"
    shutil.copytree(REPO / "docs", docs, ignore=shutil.ignore_patterns("gallery"))
    (docs / "gallery").mkdir()
    (docs / "gallery.md").write_text("# Figure gallery\n")
    page = docs / "outputs.md"
    page.write_text(page.read_text() + "\nSee [nowhere](no-such-page.md#x).\n")
    config = tmp_path / "mkdocs.yml"
    text = (REPO / "mkdocs.yml").read_text()
    text = text.replace("docs_dir: docs", f"docs_dir: {docs}")
    text = text.replace("paths: [python]", f"paths: [{REPO / 'python'}]")
    config.write_text(text)
    done = build(config, tmp_path / "site")
    assert done.returncode != 0
    assert "no-such-page.md" in done.stderr
