"""Fluid models beside the packet runs: the mean-field delay-differential models the schemes'
papers analyse, with their fixed points and time courses, their parameters read from a resolved
scenario.

- `cnsim.fluid.dcqcn`: DCQCN (Zhu et al., "ECN or Delay", CoNEXT 2016, section 3.1).
- `cnsim.fluid.timely`: TIMELY and patched TIMELY (Zhu et al., CoNEXT 2016, section 4).
- `cnsim.fluid.dctcp`: DCTCP (Alizadeh, Javanmard, Prabhakar, SIGMETRICS 2011, section 3): its
  limit cycle beside the packet runs and the SIGCOMM 2010 sawtooth.
- `cnsim.fluid.qcn`: QCN (Alizadeh et al., "Data center transport mechanisms: congestion control
  theory and IEEE standardization", Allerton 2008, section IV).

Pure Python (numpy), free of the native module. docs/fidelity.md says which equations each
implements, what it leaves out, and how it compares with the papers and the packet runs.
"""
