"""Output folders: a path that runs through a file is refused with a message naming the file.

Without pandas, so that `cnsim run` (which checks its --out with it) does not pay for it; its
natural home is cnsim.outputs, beside `check_out_dir`.
"""

from __future__ import annotations

from pathlib import Path

from cnsim.outputs import OutputError


def check_no_file_in_path(path: Path, what: str) -> None:
    """OutputError when `path`, or a folder on the way to it, is a file (mkdir would say only
    "File exists: afile"); `what` names the path in the message ("output directory")."""
    for folder in [path, *path.parents]:
        if folder.exists() and not folder.is_dir():
            where = "is a file" if folder == path else f"{folder} is a file"
            raise OutputError(f"{what} {path}: {where}, not a directory")
