"""Moved to `cnsim.fluid.dcqcn` (kept importable): the DCQCN fluid model's fixed point.

python -m cnsim.dcqcn_fluid            # the dcqcn-fixed-point table's N values
"""

from __future__ import annotations

from cnsim.fluid.dcqcn import DcqcnModel as Model
from cnsim.fluid.dcqcn import approx_fixed_point, fixed_point
from cnsim.fluid.dcqcn import fixed_point_residual as residual

__all__ = ["Model", "approx_fixed_point", "fixed_point", "residual"]

if __name__ == "__main__":
    from cnsim.fluid.dcqcn import main

    main()
