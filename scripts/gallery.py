"""Draw every preset's figures into the docs' gallery page (docs/gallery.md, docs/gallery/).

Each scenario preset is run once (its own duration, or `--max-duration-s`), each sweep preset
with at most `--replications` replications per point (three by default: a std plot needs two) and
its scenarios capped at `--sweep-max-duration-s`; every figure they draw is saved small (`--dpi`,
70 by default: the PNGs are committed) and the page lists them per preset, with the preset's
description and what was shortened. A reviewer sees every figure cnsim draws without running
anything; regenerate after a change to the figures:

    PYTHONPATH=$PWD/python python scripts/gallery.py            # all presets, into docs/
    PYTHONPATH=$PWD/python python scripts/gallery.py --only dcqcn-incast --out /tmp/g
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
import tomllib
import warnings
from pathlib import Path
from typing import Any

import cnsim
from cnsim import api
from cnsim.plots import make_plots

REPO = Path(__file__).resolve().parent.parent
PAGE = "gallery.md"
PALETTE_COLOURS = 128
IMAGES = "gallery"


def main() -> int:
    args = _parser().parse_args()
    out = Path(args.out)
    names = args.only or list(api.presets())
    images = out / IMAGES
    if not args.only:
        shutil.rmtree(images, ignore_errors=True)  # no figure of a removed preset survives
    sections = []
    for name in names:
        start = time.perf_counter()
        folder = images / name
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir(parents=True)
        text = api.load_scenario(name)
        if api.is_sweep_text(text):
            note, files = _sweep(name, text, folder, args)
        else:
            note, files = _run(name, text, folder, args)
        sections.append(_section(name, note, files, out))
        print(f"{name}: {len(files)} figures, {time.perf_counter() - start:.1f} s", file=sys.stderr)
    if not args.only:
        (out / PAGE).write_text(_page(sections))
    return 0


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=str(REPO / "docs"), help="docs folder (default: docs/)")
    parser.add_argument("--only", nargs="*", help="these presets only (the page is not written)")
    parser.add_argument("--dpi", type=int, default=70)
    parser.add_argument("--max-duration-s", type=float, default=None)
    parser.add_argument("--replications", type=int, default=3)
    parser.add_argument("--sweep-max-duration-s", type=float, default=None)
    parser.add_argument("--jobs", type=int, default=None)
    return parser


def _run(name: str, text: str, folder: Path, args: argparse.Namespace) -> tuple[str, list[Path]]:
    """One run of a scenario preset and all its figures."""
    duration = tomllib.loads(text).get("duration_s")
    overrides: dict[str, Any] = {}
    note = ""
    if args.max_duration_s is not None and duration and duration > args.max_duration_s:
        overrides["duration_s"] = args.max_duration_s
        note = f"shortened to {args.max_duration_s:g} s of its {duration:g} s"
    result = cnsim.run(name, set=overrides or None)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # a skipped figure is not in the gallery
        files = make_plots(result, folder, dpi=args.dpi)
    for path in files:
        shrink(path)
    return note, files


def _sweep(name: str, text: str, folder: Path, args: argparse.Namespace) -> tuple[str, list[Path]]:
    """A sweep preset with fewer replications (and shorter runs when asked), and its figures."""
    data = tomllib.loads(text)
    sweep = data["sweep"]
    notes = []
    if sweep.get("replications", 1) > args.replications:
        notes.append(f"{args.replications} of its {sweep['replications']} replications per point")
        sweep["replications"] = args.replications
    if args.sweep_max_duration_s is not None:
        sweep.setdefault("set", {})["duration_s"] = args.sweep_max_duration_s
        notes.append(f"runs of {args.sweep_max_duration_s:g} s")
    with tempfile.TemporaryDirectory() as tmp:
        study = cnsim.sweep(data, out=Path(tmp) / name, jobs=args.jobs, progress=False)
        files = study.plot(folder, dpi=args.dpi)
    for path in files:
        shrink(path)
    return ", ".join(notes), files


def shrink(path: Path) -> None:
    """The PNG with a palette of `PALETTE_COLOURS` colours (a line figure has few): under half
    the bytes, as the gallery's PNGs are committed."""
    from PIL import Image

    with Image.open(path) as image:
        palette = image.convert("RGB").quantize(
            colors=PALETTE_COLOURS, method=Image.Quantize.MEDIANCUT, dither=Image.Dither.NONE
        )
    palette.save(path, optimize=True)


def _section(name: str, note: str, files: list[Path], out: Path) -> str:
    description = api.presets().get(name, "")
    lines = [f"## {name}", "", description, ""]
    if note:
        lines += [f"*Gallery run: {note}.*", ""]
    for path in files:
        lines += [f"![{name}: {path.stem}]({path.relative_to(out).as_posix()})", ""]
    if not files:
        lines += ["(no figure)", ""]
    return "\n".join(lines)


def _page(sections: list[str]) -> str:
    head = (
        "# Figure gallery\n\n"
        "Every figure the presets draw, generated by `scripts/gallery.py` (scenario presets run\n"
        "once at their own duration; sweep presets with fewer replications, said under each).\n"
        "The figures are drawn small here (70 dpi, 128 colours); `cnsim run` saves them at\n"
        "120 dpi. What each figure shows and the rules they follow:\n"
        "[outputs.md](outputs.md#plots).\n\n"
        + "\n".join(f"- [{s.splitlines()[0][3:]}](#{s.splitlines()[0][3:]})" for s in sections)
        + "\n\n"
    )
    return head + "\n".join(sections)


if __name__ == "__main__":
    sys.exit(main())
