"""hgemm: half-precision matrix multiply kernels on any DLPack GPU array.

    import torch, hgemm
    a = torch.randn(4096, 4096, device="cuda", dtype=torch.float16)
    b = torch.randn(4096, 4096, device="cuda", dtype=torch.float16)
    c = hgemm.matmul(a, b)                       # fp32 accumulation, kernel "auto"
    hgemm.matmul(a.T, b, out=c, kernel="cuda.t8x8_hfma2", accum="f16")  # a.T: no copy, op T

Arrays are used where they lie: a row-major array with a padded row (stride > width) is a
leading dimension, a transposed view is op T. torch and cupy inputs get a new array of their own
kind when `out` is None; for other frameworks pass `out`.
"""

import sys

from ._hgemm import gemm as _gemm
from ._hgemm import gemm_views as _gemm_views
from ._hgemm import kernels as _kernels

__all__ = ["matmul", "kernels"]


def kernels():
    """Every registered kernel: id, family, ladder position, summary, min_arch, ops, accums."""
    return _kernels()


def _framework(x):
    return type(x).__module__.split(".")[0]


def _torch():
    """torch if the caller has imported it (hgemm never imports a framework itself)."""
    return sys.modules.get("torch")


def _torch_view(torch, t):
    """(data_ptr, rows, cols, stride0, stride1, device, is_float16) of a 2-D torch tensor: the fast
    path, which skips building a DLPack capsule per array per call."""
    rows, cols = t.shape
    s0, s1 = t.stride()
    return (t.data_ptr(), rows, cols, s0, s1, t.get_device(), t.dtype is torch.float16)


_RAW_STREAM = {}


def _torch_stream(torch, device):
    raw = _RAW_STREAM.get("fn")
    if raw is None:  # torch._C._cuda_getCurrentRawStream: the stream handle without a Stream object
        raw = _RAW_STREAM["fn"] = getattr(torch._C, "_cuda_getCurrentRawStream", None) or (
            lambda d: torch.cuda.current_stream(d).cuda_stream)
    return raw(device)


def _default_stream(x):
    """The caller's current stream for x's framework (torch, cupy), else the default stream."""
    fw = _framework(x)
    if fw == "torch" and getattr(x, "is_cuda", False):
        return _torch_stream(_torch(), x.get_device())
    if fw == "cupy":
        import cupy

        return cupy.cuda.get_current_stream().ptr
    return 0


def _new_like(x, shape):
    fw = _framework(x)
    if fw == "torch":
        import torch

        return torch.empty(shape, dtype=torch.float16, device=x.device)
    if fw == "cupy":
        import cupy

        with x.device:
            return cupy.empty(shape, dtype=cupy.float16)
    raise TypeError(f"hgemm.matmul cannot allocate a {type(x).__name__} array: pass out=")


def _shape(x, name):
    shape = getattr(x, "shape", None)
    if shape is None:
        raise TypeError(f"{name} must be an array (torch, cupy, ...), got {type(x).__name__}")
    if len(shape) != 2:
        raise ValueError(f"{name} must be 2-D, got {len(shape)}-D")
    return tuple(int(s) for s in shape)


_IDS = None


def _check_kernel(kernel):
    global _IDS
    if _IDS is None:
        _IDS = {k["id"] for k in _kernels()}
    if kernel != "auto" and kernel not in _IDS:
        raise ValueError(f"unknown kernel {kernel!r}: see hgemm.kernels()")


def matmul(a, b, *, out=None, alpha=1.0, beta=0.0, accum="f32", kernel="auto", trans_a=False, trans_b=False,
           stream=None):
    """out = alpha · op(a) · op(b) + beta · out, with op(x) = x.T when trans_x, else x.

    a, b, out: 2-D float16 GPU arrays (anything with __dlpack__). Returns out (a new array of a's
    framework when out is None; beta must then be 0). accum: "f32" (default) or "f16". kernel:
    an id from kernels() or "auto". stream: a cudaStream_t as an int; default: the current stream
    of a's framework (torch, cupy), else the default stream.
    Raises TypeError (not an array, wrong dtype, not on a GPU), ValueError (shapes, strides,
    unknown or unsupported kernel, arguments the library refuses), RuntimeError (CUDA errors).
    """
    if accum != "f32" and accum != "f16":
        raise ValueError(f"accum must be 'f16' or 'f32', not {accum!r}")
    torch = _torch()
    if (torch is not None and type(a) is torch.Tensor and type(b) is torch.Tensor
            and (((a.requires_grad or b.requires_grad) and torch.is_grad_enabled())
                 or torch.compiler.is_compiling())):
        return _matmul_op(a, b, out, alpha, beta, accum, kernel, trans_a, trans_b, stream)
    if kernel != "auto":
        _check_kernel(kernel)
    if (torch is not None and type(a) is torch.Tensor and type(b) is torch.Tensor and a.dim() == 2
            and b.dim() == 2 and (out is None or (type(out) is torch.Tensor and out.dim() == 2))):
        return _matmul_torch(torch, a, b, out, alpha, beta, accum, kernel, trans_a, trans_b, stream)
    sa, sb = _shape(a, "a"), _shape(b, "b")
    m, k = (sa[1], sa[0]) if trans_a else sa
    kb, n = (sb[1], sb[0]) if trans_b else sb
    if k != kb:
        raise ValueError(f"shapes do not match: op(a) is {m}x{k} but op(b) is {kb}x{n}")
    if out is None:
        if beta != 0:
            raise ValueError("beta != 0 reads out: pass out=")
        out = _new_like(a, (m, n))
    if stream is None:
        stream = _default_stream(a)
    _gemm(a, b, out, float(alpha), float(beta), accum, kernel, bool(trans_a), bool(trans_b), int(stream))
    return out


def _matmul_torch(torch, a, b, out, alpha, beta, accum, kernel, trans_a, trans_b, stream):
    va, vb = _torch_view(torch, a), _torch_view(torch, b)
    if out is None:
        m = va[2] if trans_a else va[1]
        n = vb[1] if trans_b else vb[2]
        if beta != 0:
            raise ValueError("beta != 0 reads out: pass out=")
        out = torch.empty((m, n), dtype=torch.float16, device=a.device)
    if stream is None:
        stream = _torch_stream(torch, va[5]) if va[5] >= 0 else 0
    _gemm_views(va, vb, _torch_view(torch, out), float(alpha), float(beta), accum, kernel, bool(trans_a),
                bool(trans_b), int(stream))
    return out


_OPS = {}


def _matmul_op(a, b, out, alpha, beta, accum, kernel, trans_a, trans_b, stream):
    """Through torch.ops.hgemm.mm (autograd, torch.compile): only the plain product."""
    if out is not None or alpha != 1 or beta != 0 or trans_a or trans_b or stream is not None:
        raise ValueError("hgemm.matmul with tensors that require grad (or under torch.compile) takes only "
                         "a, b, accum and kernel: out=, alpha, beta, trans_a, trans_b and stream would drop "
                         "the gradient (use a.T for op T, or run under torch.no_grad())")
    op = _OPS.get("mm")
    if op is None:
        from . import torch_ops

        op = _OPS["mm"] = torch_ops.mm
    return op(a, b, accum=accum, kernel=kernel)
