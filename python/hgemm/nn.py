# SPDX-License-Identifier: Apache-2.0
"""hgemm.nn: torch.nn layers computed by hgemm (float16 or bfloat16).

    import torch, hgemm.nn
    layer = hgemm.nn.Linear(4096, 14336, device="cuda", dtype=torch.float16)
    y = layer(x)                                           # x: (..., 4096) float16 on the GPU
    up = hgemm.nn.Linear(4096, 14336, device="cuda", activation="gelu")  # gelu(x·Wᵀ + b) in one launch
    with torch.autocast("cuda", dtype=torch.bfloat16):     # float32 layers and inputs, as torch's
        y = up(x.float())

Importing this module imports torch (and registers torch.ops.hgemm.*).
"""

import torch

from . import _activation, _checks, torch_ops

__all__ = ["Linear", "linear"]

F16, BF16 = torch.float16, torch.bfloat16


_TORCH_ACT = {"none": lambda y: y, "relu": torch.nn.functional.relu, "gelu": torch.nn.functional.gelu,
              "gelu_tanh": lambda y: torch.nn.functional.gelu(y, approximate="tanh"),
              "silu": torch.nn.functional.silu}


def _autocast_on(device_type):
    # only the device types autocast knows: it raises for others (meta)
    return (device_type == "cuda" or device_type == "cpu") and torch.is_autocast_enabled(device_type)


def linear(x, weight, bias=None, activation=None):
    """act(x·weightᵀ + bias), as torch.nn.functional.linear followed by the activation: x is
    (..., in_features), weight out_features×in_features, bias out_features or None; all float16, or
    all bfloat16, on one GPU. activation is None, "relu", "gelu" (erf, as torch.nn.GELU()),
    "gelu_tanh" (torch.nn.GELU(approximate="tanh")) or "silu". The bias and the activation are
    applied in the product's epilogue (torch.ops.hgemm.addmm), on the f32 sum before the one
    rounding to the output's dtype. The leading dimensions of x are flattened into the rows of one
    product (a view when x is contiguous).

    Other dtypes, as torch.nn.functional.linear takes them: under torch.autocast for x's device
    the operators cast every input to the autocast dtype (float32 activations and weights
    included); outside autocast, tensors of one dtype that hgemm does not compute in (float32,
    float64) are computed by torch itself (functional.linear and the activation), so that a layer
    moved with .to(torch.float32) still runs; 16-bit tensors of two dtypes raise TypeError."""
    activation = _activation(activation, _WHERE)
    dtype = x.dtype
    if (dtype is not F16 and dtype is not BF16) or weight.dtype is not dtype or (bias is not None and
                                                                                 bias.dtype is not dtype):
        if not _autocast_on(x.device.type):
            if weight.dtype is dtype and (bias is None or bias.dtype is dtype) and dtype.is_floating_point:
                return _TORCH_ACT[activation](torch.nn.functional.linear(x, weight, bias))
            _check_dtypes(x, weight, bias)
    shape, size = x.shape, weight.shape
    if len(size) != 2 or len(shape) < 1 or shape[-1] != size[1]:
        _check_shapes(shape, size)
    if len(shape) == 2:  # the rows already: no reshape and no view (each a torch call)
        return _linear_rows(x, weight, bias, activation)
    y = _linear_rows(x.reshape(-1, shape[-1]), weight, bias, activation)
    return y.view(*shape[:-1], size[0])


_WHERE = "hgemm.nn.linear"
_HINT = " (convert with .half() or .bfloat16(), or run under torch.autocast)"


def _check_dtypes(x, weight, bias):
    """Raises the TypeError that names the tensor of an unsupported or mismatched dtype."""
    try:
        for name, t in (("input", x), ("weight", weight), ("bias", bias)):
            if t is not None:
                _checks.dtype(_WHERE, name, t.dtype)
    except TypeError as e:
        raise TypeError(str(e) + _HINT) from None
    for name, t in (("weight", weight), ("bias", bias)):
        if t is not None and t.dtype is not x.dtype:
            _checks.fail(TypeError, _WHERE, name, f"expected the input's dtype {_checks.dtype_text(x.dtype)}, got "
                         f"{_checks.dtype_text(t.dtype)} (all must have one dtype: convert the input, or the layer "
                         "with .to(dtype))")


def _check_shapes(shape, size):
    """The ValueError naming the input or the weight whose shape does not fit."""
    _checks.ndim(_WHERE, "weight", len(size), (2,), "a 2-D weight (out_features x in_features)")
    if len(shape) < 1:
        _checks.ndim(_WHERE, "input", len(shape), (), "an input of at least 1 dimension")
    _checks.fail(ValueError, _WHERE, "input", f"expected a last dimension of {size[1]} (the weight is "
                 f"{size[0]}x{size[1]}: {size[1]} features), got {shape[-1]}")


def _linear_rows(x, weight, bias, activation="none"):
    """act(x·weightᵀ + bias) for 2-D x. weight.t() is op T: no copy, and dW comes back row-major."""
    if bias is None and activation == "none":
        return torch_ops.mm(x, weight.t())
    return torch_ops.addmm(bias, x, weight.t(), activation=activation)


class Linear(torch.nn.Linear):
    """A drop-in for torch.nn.Linear computed by hgemm: the same constructor (device and dtype
    factory arguments, dtype defaulting to torch.get_default_dtype()), parameters (weight
    out_features×in_features, bias out_features), initialisation, state_dict keys and repr, so
    state dicts load both ways. Inputs are (..., in_features). hgemm computes float16 and bfloat16
    layers, and any layer under torch.autocast (float32 inputs and weights cast to the autocast
    dtype, as torch.nn.Linear's are); a float32 layer outside autocast is computed by torch (see
    linear). device defaults to the CPU as in torch (move the layer to the GPU before calling it).

    activation (None, "relu", "gelu", "gelu_tanh" or "silu") is applied to the output in the
    product's epilogue, as is the bias: Linear(i, o, activation="gelu") computes what
    torch.nn.Sequential(torch.nn.Linear(i, o), torch.nn.GELU()) does, with the same parameters, in
    one launch (see linear). It adds no parameter and shows in the repr; with None (the default) the
    layer is a drop-in for torch.nn.Linear, repr included."""

    def __init__(self, in_features, out_features, bias=True, device=None, dtype=None, activation=None):
        name = _activation(activation, "hgemm.nn.Linear")
        super().__init__(in_features, out_features, bias=bias, device=device, dtype=dtype)
        self.activation = None if name == "none" else name

    def forward(self, x):
        return linear(x, self.weight, self.bias, self.activation)

    def extra_repr(self):
        text = super().extra_repr()
        return text if self.activation is None else f"{text}, activation={self.activation!r}"
