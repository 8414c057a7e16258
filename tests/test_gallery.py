"""The figure gallery (docs/gallery.md): its script draws a preset's figures small, and the
page shows every preset with the figures that are there."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import cnsim

REPO = Path(__file__).resolve().parent.parent


def test_the_script_draws_a_presets_figures_small(tmp_path: Path) -> None:
    cmd = [sys.executable, str(REPO / "scripts" / "gallery.py"), "--only", "pfc-victim-flow"]
    done = subprocess.run(
        [*cmd, "--out", str(tmp_path)], capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    pngs = sorted((tmp_path / "gallery" / "pfc-victim-flow").glob("*.png"))
    assert [p.stem for p in pngs] == sorted(cnsim.run("pfc-victim-flow").figure_names)
    assert all(p.stat().st_size < 60_000 for p in pngs)  # committed: 70 dpi, a palette


def test_the_page_shows_every_preset_and_only_files_that_exist() -> None:
    page = (REPO / "docs" / "gallery.md").read_text()
    sections = re.findall(r"^## (\S+)$", page, flags=re.MULTILINE)
    assert sections == list(cnsim.presets())
    images = re.findall(r"\]\((gallery/[^)]+\.png)\)", page)
    assert len(images) > 80
    for image in images:
        assert (REPO / "docs" / image).is_file(), image
