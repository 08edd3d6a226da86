"""hgemm as a torch operator: torch.ops.hgemm.mm, with autograd, a fake (meta) kernel for
torch.compile / FakeTensorMode, and CUDA-graph-safe launches on the current stream.

Importing this module imports torch; `import hgemm` alone does not (hgemm.matmul imports this
module the first time it routes a torch tensor that needs grad, or any call under torch.compile).

    hgemm::mm(Tensor a, Tensor b, *, str accum="f32", str kernel="auto") -> Tensor

a: M×K, b: K×N, both float16 and 2-D, any strides: a row-major view with padded rows is a leading
dimension, a transposed view is op T (no copy); any other layout is made contiguous first.

Registered with torch.library.Library + define/impl rather than torch.library.custom_op: the
latter adds about 20 µs of host time per call.
"""

import torch

from . import _matmul_torch

__all__ = ["mm"]

_lib = torch.library.Library("hgemm", "DEF")
_lib.define('mm(Tensor a, Tensor b, *, str accum="f32", str kernel="auto") -> Tensor')


def _check(a, b, accum):
    if a.dtype != torch.float16 or b.dtype != torch.float16:
        raise TypeError(f"hgemm::mm takes float16 tensors, got {a.dtype} and {b.dtype}")
    if a.dim() != 2 or b.dim() != 2:
        raise ValueError(f"hgemm::mm takes 2-D tensors, got {a.dim()}-D and {b.dim()}-D")
    if a.shape[1] != b.shape[0]:
        raise ValueError(f"hgemm::mm: shapes do not match: a is {a.shape[0]}x{a.shape[1]} but b is "
                         f"{b.shape[0]}x{b.shape[1]}")
    if accum != "f32" and accum != "f16":
        raise ValueError(f"accum must be 'f16' or 'f32', not {accum!r}")


def _usable(t):
    """t itself when its strides are a row-major matrix with a leading dimension or a transposed
    view of one (what the library takes without a copy), else a contiguous copy."""
    rows, cols = t.shape
    s0, s1 = t.stride()
    if (s1 == 1 or cols <= 1) and s0 >= max(cols, 1):
        return t
    if (s0 == 1 or rows <= 1) and s1 >= max(rows, 1):
        return t
    return t.contiguous()


def _mm_cuda(a, b, *, accum="f32", kernel="auto"):
    _check(a, b, accum)
    if a.device != b.device:
        raise ValueError(f"hgemm::mm: a is on {a.device} but b is on {b.device}")
    # stream=None: _matmul_torch launches on torch's current stream of a's device (what CUDA-graph
    # capture and torch.cuda.stream(...) expect).
    return _matmul_torch(torch, _usable(a), _usable(b), None, 1.0, 0.0, accum, kernel, False, False, None)


def _mm_fake(a, b, *, accum="f32", kernel="auto"):
    _check(a, b, accum)
    return a.new_empty((a.shape[0], b.shape[1]))


_lib.impl("mm", _mm_cuda, "CUDA")
torch.library.register_fake("hgemm::mm", _mm_fake, lib=_lib)


def _setup_context(ctx, inputs, keyword_only_inputs, output):
    a, b = inputs
    need_a, need_b = ctx.needs_input_grad[0], ctx.needs_input_grad[1]
    # dA needs b, dB needs a: save only what a needed gradient reads.
    ctx.save_for_backward(b if need_a else None, a if need_b else None)
    ctx.accum = keyword_only_inputs.get("accum", "f32")


def _backward(ctx, grad):
    b, a = ctx.saved_tensors
    mm = torch.ops.hgemm.mm.default
    # Transposed views, no copies: the library reads them as op T. kernel "auto": the forward's
    # kernel need not take the transposed ops.
    da = mm(grad, b.t(), accum=ctx.accum) if ctx.needs_input_grad[0] else None
    db = mm(a.t(), grad, accum=ctx.accum) if ctx.needs_input_grad[1] else None
    return da, db


torch.library.register_autograd("hgemm::mm", _backward, setup_context=_setup_context, lib=_lib)

mm = torch.ops.hgemm.mm.default
