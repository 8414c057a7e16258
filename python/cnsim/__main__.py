"""`python -m cnsim`: the same command as `cnsim`."""

from cnsim.cli import app

app(prog_name="cnsim")
