"""Minimal stand-in for opt_einsum (not packaged in Debian 12).

Opacus 1.4.0 only uses `opt_einsum.contract(...)` (grad_sample/*.py) and
`from opt_einsum.contract import contract` (optimizers/optimizer.py).
Both forward to torch.einsum. opt_einsum's only real extra is contraction
path optimisation, which is irrelevant for the 2/3-operand einsums Opacus uses.
"""
import sys
import types

import torch

__version__ = "3.3.0+torch-einsum-shim"


def contract(*operands, **kwargs):
    # opt_einsum kwargs (optimize=, backend=, memory_limit=, use_blas=) are ignored
    return torch.einsum(*operands)


# Make `from opt_einsum.contract import contract` work although this is a
# single module, not a package.
_sub = types.ModuleType(__name__ + ".contract")
_sub.contract = contract
sys.modules[__name__ + ".contract"] = _sub
contract_module = _sub
