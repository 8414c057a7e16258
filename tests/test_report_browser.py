"""The HTML report (`cnsim report DIR --html`) opened in a real headless browser (Chromium from
Debian's packages; `.ci/run` installs it when missing and sets CNSIM_REQUIRE_BROWSER=1, so CI
cannot skip this): the headline table is laid out with its numbers, and every figure decodes
to an image of its own size, fetching nothing from the network."""

from __future__ import annotations

import html
import json
import os
import re
import shutil
import subprocess
import zlib
from pathlib import Path

import pytest

import cnsim
from cnsim import report_html

BROWSERS = ("chromium", "chromium-browser", "google-chrome")

# Appended to a copy of the report: what the browser laid out and decoded, written into the DOM
# that --dump-dom prints (the report itself has no script).
PROBE = """
<script>
window.addEventListener("load", () => {
  const box = (el) => { const r = el.getBoundingClientRect(); return [r.width, r.height]; };
  const headline = document.querySelector("table");
  const out = {
    headline_text: headline ? headline.innerText : "",
    headline_box: headline ? box(headline) : [0, 0],
    images: [...document.images].map((img) => ({
      alt: img.alt, complete: img.complete, natural: [img.naturalWidth, img.naturalHeight],
      shown: box(img),
    })),
    fetched: performance.getEntriesByType("resource").map((e) => e.name),
  };
  const pre = document.createElement("pre");
  pre.id = "probe";
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
});
</script>
"""


def browser() -> str | None:
    found = next((path for b in BROWSERS if (path := shutil.which(b))), None)
    if found is None and os.environ.get("CNSIM_REQUIRE_BROWSER") == "1":
        pytest.fail("CNSIM_REQUIRE_BROWSER=1 but no Chromium on PATH (apt-get install chromium)")
    return found


def headless(exe: str, *args: str) -> str:
    cmd = [exe, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", *args]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=120, check=True)
    return done.stdout


def png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    return int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")


def distinct_rows(data: bytes) -> int:
    """How many different pixel rows a PNG screenshot has (a blank page has one)."""
    width, _ = png_size(data)
    chunks, pos = b"", 8
    while pos < len(data):
        length = int.from_bytes(data[pos : pos + 4], "big")
        if data[pos + 4 : pos + 8] == b"IDAT":
            chunks += data[pos + 8 : pos + 8 + length]
        pos += 12 + length
    raw = zlib.decompress(chunks)
    stride = 1 + width * 4 if len(raw) % (1 + width * 4) == 0 else 1 + width * 3
    return len({raw[i + 1 : i + stride] for i in range(0, len(raw), stride)})


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("browser") / "run"
    cnsim.run("pfc-victim-flow", set={"duration_s": 0.004, "report.window_s": [0.001, 0.004]}).save(
        out
    )
    return report_html.write_report(out)


def test_the_browser_renders_the_headline_table_and_every_figure(report: Path) -> None:
    exe = browser()
    if exe is None:
        pytest.skip("no Chromium on PATH")
    probed = report.with_name("probed.html")
    probed.write_text(report.read_text().replace("</body>", PROBE + "</body>"))
    dom = headless(exe, "--virtual-time-budget=10000", "--dump-dom", probed.as_uri())
    found = re.search(r'<pre id="probe">(.*?)</pre>', dom, re.S)
    assert found, "the probe did not run: " + dom[-500:]
    seen = json.loads(html.unescape(found.group(1)))
    # The first table is the headline, laid out with the victim's number read against its
    # fair share.
    assert "victim VS -> VR" in seen["headline_text"], seen["headline_text"]
    assert "x max-min fair share (20 Gb/s)" in seen["headline_text"]
    assert min(seen["headline_box"]) > 10
    figures = sorted(report.parent.joinpath("plots").glob("*.png"))
    assert len(seen["images"]) == len(figures) >= 4
    sizes = sorted(png_size(f.read_bytes()) for f in figures)
    for img in seen["images"]:
        assert img["complete"], img["alt"]
        assert min(img["natural"]) > 100, img["alt"]  # decoded
        assert min(img["shown"]) > 100, img["alt"]  # drawn on the page, not collapsed
    # The inlined images are the run's figures (the report draws them at its own dpi, so
    # compare aspect ratios).
    ratios = sorted(round(w / h, 1) for w, h in (img["natural"] for img in seen["images"]))
    assert ratios == sorted(round(w / h, 1) for w, h in sizes)
    assert all(url.startswith("data:") for url in seen["fetched"]), seen["fetched"]


def test_a_screenshot_of_the_report_is_a_drawn_page(report: Path) -> None:
    exe = browser()
    if exe is None:
        pytest.skip("no Chromium on PATH")
    shot = report.with_name("report.png")
    headless(exe, "--window-size=1100,3000", f"--screenshot={shot}", report.as_uri())
    data = shot.read_bytes()
    assert png_size(data) == (1100, 3000)
    # Text, tables and figures make many different rows; a blank or failed page makes few.
    assert distinct_rows(data) > 1000
