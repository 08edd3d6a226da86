"""hgemm.nn: torch.nn layers computed by hgemm (float16 or bfloat16).

    import torch, hgemm.nn
    layer = hgemm.nn.Linear(4096, 14336, device="cuda")   # float16 weight and bias
    y = layer(x)                                           # x: (..., 4096) float16 on the GPU
    hgemm.nn.Linear(4096, 14336, device="cuda", dtype=torch.bfloat16)  # for bfloat16 inputs
    up = hgemm.nn.Linear(4096, 14336, device="cuda", activation="gelu")  # gelu(x·Wᵀ + b) in one launch

Importing this module imports torch (and registers torch.ops.hgemm.*).
"""

import torch

from . import _activation, torch_ops

__all__ = ["Linear", "linear"]

F16, BF16 = torch.float16, torch.bfloat16


def _refuse_dtype(what, dtype):
    raise TypeError(f"hgemm.nn computes in float16 or bfloat16: {what} is {dtype}, which is not supported "
                    "(convert with .half() or .bfloat16(), or pass dtype=torch.float16 or torch.bfloat16)")


def linear(x, weight, bias=None, activation=None):
    """act(x·weightᵀ + bias), as torch.nn.functional.linear followed by the activation: x is
    (..., in_features), weight out_features×in_features, bias out_features or None; all float16, or
    all bfloat16, on one GPU. activation is None, "relu", "gelu" (erf, as torch.nn.GELU()),
    "gelu_tanh" (torch.nn.GELU(approximate="tanh")) or "silu". The bias and the activation are
    applied in the product's epilogue (torch.ops.hgemm.addmm), on the f32 sum before the one
    rounding to the output's dtype. The leading dimensions of x are flattened into the rows of one
    product (a view when x is contiguous)."""
    activation = _activation(activation)
    dtype = x.dtype
    if (dtype is not F16 and dtype is not BF16) or weight.dtype is not dtype or (bias is not None and
                                                                                 bias.dtype is not dtype):
        _check_dtypes(x, weight, bias)
    shape, size = x.shape, weight.shape
    if len(size) != 2 or len(shape) < 1:
        raise ValueError(f"hgemm.nn.linear takes a 2-D weight and an input of at least 1 dimension, got "
                         f"{len(size)}-D and {len(shape)}-D")
    if shape[-1] != size[1]:
        raise ValueError(f"hgemm.nn.linear: the input's last dimension is {shape[-1]} but the weight takes "
                         f"{size[1]} features ({size[0]}x{size[1]})")
    if len(shape) == 2:  # the rows already: no reshape and no view (each a torch call)
        return _linear_rows(x, weight, bias, activation)
    y = _linear_rows(x.reshape(-1, shape[-1]), weight, bias, activation)
    return y.view(*shape[:-1], size[0])


def _check_dtypes(x, weight, bias):
    """Raises the TypeError that names the tensor of an unsupported or mismatched dtype."""
    for what, t in (("the input", x), ("the weight", weight), ("the bias", bias)):
        if t is not None and t.dtype is not F16 and t.dtype is not BF16:
            _refuse_dtype(what, t.dtype)
    for what, t in (("the weight", weight), ("the bias", bias)):
        if t is not None and t.dtype is not x.dtype:
            raise TypeError(f"hgemm.nn.linear: the input is {x.dtype} but {what} is {t.dtype}: all must have one "
                            "dtype (convert the input, or the layer with .to(dtype))")


def _linear_rows(x, weight, bias, activation="none"):
    """act(x·weightᵀ + bias) for 2-D x. weight.t() is op T: no copy, and dW comes back row-major."""
    if bias is None and activation == "none":
        return torch_ops.mm(x, weight.t())
    return torch_ops.addmm(bias, x, weight.t(), activation=activation)


class Linear(torch.nn.Linear):
    """A drop-in for torch.nn.Linear computed by hgemm: the same parameters (weight
    out_features×in_features, bias out_features), initialisation, state_dict keys and repr, so
    state dicts load both ways. Inputs are (..., in_features), of the layer's dtype. dtype is
    torch.float16 (the default) or torch.bfloat16, other dtypes are refused; device defaults to the
    CPU as in torch (move the layer to the GPU before calling it).

    activation (None, "relu", "gelu", "gelu_tanh" or "silu") is applied to the output in the
    product's epilogue, as is the bias: Linear(i, o, activation="gelu") computes what
    torch.nn.Sequential(torch.nn.Linear(i, o), torch.nn.GELU()) does, with the same parameters, in
    one launch (see linear). It adds no parameter and shows in the repr; with None (the default) the
    layer is a drop-in for torch.nn.Linear, repr included."""

    def __init__(self, in_features, out_features, bias=True, device=None, dtype=None, activation=None):
        if dtype is None:
            dtype = F16
        if dtype is not F16 and dtype is not BF16:
            _refuse_dtype("dtype", dtype)
        name = _activation(activation)
        super().__init__(in_features, out_features, bias=bias, device=device, dtype=dtype)
        self.activation = None if name == "none" else name

    def forward(self, x):
        return linear(x, self.weight, self.bias, self.activation)

    def extra_repr(self):
        text = super().extra_repr()
        return text if self.activation is None else f"{text}, activation={self.activation!r}"
