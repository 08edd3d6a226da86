# SPDX-License-Identifier: Apache-2.0
"""torch.ops.hgemm.mm and hgemm.matmul: schemas, fake kernels, autograd and opcheck on the CPU
(meta/fake tensors), and the CUDA kernels, gradients, torch.compile and CUDA graphs on a GPU
(skipped without one)."""
import math
import os
import subprocess
import sys

import pytest

torch = pytest.importorskip("torch")

import hgemm  # noqa: E402
import hgemm.torch_ops  # noqa: E402,F401
from torch._subclasses.fake_tensor import FakeTensorMode  # noqa: E402

cuda = pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device")
F16, BF16, F32 = torch.float16, torch.bfloat16, torch.float32


def test_import_hgemm_registers_the_operators():
    """`import hgemm` then `import torch`: torch.ops.hgemm.* exist, with autocast kernels."""
    code = ("import hgemm, torch; torch.ops.hgemm.mm; torch.ops.hgemm.addmm; torch.ops.hgemm.grouped_mm; "
            "k = torch._C._dispatch_has_kernel_for_dispatch_key; "
            "assert k('hgemm::mm', 'AutocastCUDA') and k('hgemm::matmul', 'AutocastCUDA'); print('ok')")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert run.stdout.strip() == "ok", run.stderr


def test_hgemm_no_torch_skips_torch():
    code = "import sys, hgemm; assert 'torch' not in sys.modules; print('ok')"
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env={**os.environ, "HGEMM_NO_TORCH": "1"})
    assert run.stdout.strip() == "ok", run.stderr


def test_schemas():
    assert str(torch.ops.hgemm.mm.default._schema) == \
        'hgemm::mm(Tensor a, Tensor b, *, str accum="f32", str kernel_id="auto", ScalarType? out_dtype=None) -> Tensor'
    assert str(torch.ops.hgemm.matmul.default._schema) == \
        ('hgemm::matmul(Tensor a, Tensor b, *, str accum="f32", str kernel_id="auto", ScalarType? out_dtype=None) '
         '-> Tensor')


@pytest.mark.parametrize("name", ["mm", "matmul"])
def test_autograd_is_registered(name):
    assert torch._C._dispatch_has_kernel_for_dispatch_key(f"hgemm::{name}", "Autograd")


@pytest.mark.parametrize("m,k,n", [(3, 4, 5), (1, 7, 1), (128, 64, 32)])
def test_fake_shapes(m, k, n):
    with FakeTensorMode():
        a = torch.empty(m, k, dtype=F16, device="cuda")
        b = torch.empty(k, n, dtype=F16, device="cuda")
        c = torch.ops.hgemm.mm(a, b)
        assert c.shape == (m, n) and c.dtype == F16 and c.device == a.device
        assert torch.ops.hgemm.mm(b.t(), a.t(), accum="f16").shape == (n, m)


# (a's shape, b's shape, the product's shape): torch.matmul's broadcasting of 2-D and 3-D operands
MATMUL_SHAPES = [
    ((5, 3), (3, 4), (5, 4)),
    ((6, 5, 3), (3, 4), (6, 5, 4)),
    ((5, 3), (6, 3, 4), (6, 5, 4)),
    ((6, 5, 3), (6, 3, 4), (6, 5, 4)),
    ((1, 5, 3), (6, 3, 4), (6, 5, 4)),
    ((6, 5, 3), (1, 3, 4), (6, 5, 4)),
    ((1, 5, 3), (3, 4), (1, 5, 4)),
]


@pytest.mark.parametrize("sa,sb,sc", MATMUL_SHAPES)
def test_fake_matmul_shapes_follow_torch_matmul(sa, sb, sc):
    with FakeTensorMode():
        a = torch.empty(sa, dtype=F16, device="cuda")
        b = torch.empty(sb, dtype=F16, device="cuda")
        c = torch.ops.hgemm.matmul(a, b)
        assert c.shape == sc == torch.matmul(a, b).shape
        assert c.dtype == F16 and c.is_contiguous()


@pytest.mark.parametrize("name", ["mm", "matmul"])
@pytest.mark.parametrize("dtype", [F16, BF16])
@pytest.mark.parametrize("out_dtype", [None, F16, BF16, F32])
def test_fake_output_dtype(name, dtype, out_dtype):
    """The output has dtype out_dtype, or a's dtype when it is None."""
    op = getattr(torch.ops.hgemm, name)
    with FakeTensorMode():
        a = torch.empty(2, 6, 3, dtype=dtype, device="cuda")
        b = torch.empty(3, 4, dtype=dtype, device="cuda")
        c = op(a[0], b, out_dtype=out_dtype) if name == "mm" else op(a, b, out_dtype=out_dtype)
        assert c.dtype == (dtype if out_dtype is None else out_dtype)
        assert c.shape == ((6, 4) if name == "mm" else (2, 6, 4)) and c.device == a.device


@pytest.mark.parametrize("name", ["mm", "matmul"])
def test_fake_rejects_bad_inputs(name):
    op = getattr(torch.ops.hgemm, name)
    a = torch.empty(3, 4, dtype=F16, device="meta")
    for dtype in (torch.float32, torch.float64, torch.int8):
        with pytest.raises(TypeError, match="float16 or bfloat16"):
            op(a.to(dtype), a.t().to(dtype))
    with pytest.raises(TypeError, match="argument 'b': expected a's dtype float16, got bfloat16"):
        op(a, a.t().to(BF16))
    with pytest.raises(TypeError, match="float16 or bfloat16"):
        op(a.to(BF16), a.t().float())
    with pytest.raises(TypeError, match="argument 'out_dtype': expected"):
        op(a, a.t(), out_dtype=torch.float64)
    for dtype, out_dtype in ((BF16, None), (BF16, BF16), (F16, F32), (F16, BF16)):
        with pytest.raises(TypeError, match="argument 'accum': expected 'f32' for .*'f16' needs float16"):
            op(a.to(dtype), a.t().to(dtype), accum="f16", out_dtype=out_dtype)
    with pytest.raises(ValueError, match="shapes"):
        op(a, a)
    with pytest.raises(ValueError, match="accum"):
        op(a, a.t(), accum="f64")
    with pytest.raises(ValueError, match=r"argument 'kernel_id': expected 'auto' or an id from hgemm.kernels\(\)"):
        op(a, a.t(), kernel_id="cuda.warp_drive")
    with pytest.raises(ValueError, match=r"argument 'a': expected (a 2-D tensor|2 or more dimensions)"):
        op(a[0], a.t())


def test_fake_matmul_rejects_batches_that_do_not_broadcast():
    a = torch.empty(2, 3, 4, dtype=F16, device="meta")
    b = torch.empty(3, 4, 5, dtype=F16, device="meta")
    with pytest.raises(ValueError, match="broadcast"):
        torch.ops.hgemm.matmul(a, b)
    assert torch.ops.hgemm.matmul(a[None], b[0]).shape == (1, 2, 3, 5)  # N-D, as torch.matmul
    with pytest.raises(ValueError, match="2 or more dimensions"):
        torch.ops.hgemm.matmul(a[0, 0], b[0])
    with pytest.raises(ValueError, match="2-D"):
        torch.ops.hgemm.mm(a, b[0])  # mm takes no batches


def test_cpu_tensors_are_refused_with_a_type_error():
    a = torch.ones(3, 4, dtype=F16)
    for op in (torch.ops.hgemm.mm, torch.ops.hgemm.matmul):
        with pytest.raises(TypeError, match="CUDA"):
            op(a, a.t())
    with pytest.raises(TypeError, match="CUDA"):
        hgemm.matmul(a.requires_grad_(), a.t())


def test_matmul_checks_the_kernel_name_before_the_operator():
    a = torch.empty(6, 4, dtype=F16, device="meta", requires_grad=True)
    with pytest.raises(ValueError, match=r"argument 'kernel_id': expected 'auto' or an id from hgemm.kernels\(\)"):
        hgemm.matmul(a, a.t(), kernel_id="cuda.warp_drive")


def test_opcheck_mm_meta():
    a = torch.empty(6, 4, dtype=F16, device="meta", requires_grad=True)
    b = torch.empty(4, 5, dtype=F16, device="meta", requires_grad=True)
    res = torch.library.opcheck(torch.ops.hgemm.mm, (a, b))
    assert set(res) >= {"test_schema", "test_autograd_registration", "test_faketensor", "test_aot_dispatch_dynamic"}
    assert set(res.values()) == {"SUCCESS"}


@pytest.mark.parametrize("name", ["mm", "matmul"])
@pytest.mark.parametrize("dtype,out_dtype", [(BF16, None), (BF16, F32), (F16, F32), (BF16, F16), (F16, BF16)])
def test_opcheck_types_meta(name, dtype, out_dtype):
    """bfloat16 inputs and every out_dtype: schema, autograd registration, fake kernel and AOT
    autograd, whose backward casts an incoming gradient of another dtype to the inputs' dtype."""
    a = torch.empty(6, 4, dtype=dtype, device="meta", requires_grad=True)
    b = torch.empty((4, 5) if name == "mm" else (3, 4, 5), dtype=dtype, device="meta", requires_grad=True)
    kwargs = {} if out_dtype is None else {"out_dtype": out_dtype}
    res = torch.library.opcheck(getattr(torch.ops.hgemm, name), (a, b), kwargs)
    assert set(res.values()) == {"SUCCESS"}


@pytest.mark.parametrize("sa,sb,sc", MATMUL_SHAPES)
def test_opcheck_matmul_meta(sa, sb, sc):
    """Schema, autograd registration, fake kernel and AOT autograd (forward and backward traced with
    dynamic shapes), on meta tensors."""
    a = torch.empty(sa, dtype=F16, device="meta", requires_grad=True)
    b = torch.empty(sb, dtype=F16, device="meta", requires_grad=True)
    res = torch.library.opcheck(torch.ops.hgemm.matmul, (a, b), {"accum": "f16"})
    assert set(res.values()) == {"SUCCESS"}


@pytest.mark.parametrize("need", [(True, True), (True, False), (False, True)])
def test_meta_backward_shapes(need):
    a = torch.empty(6, 4, dtype=F16, device="meta", requires_grad=need[0])
    b = torch.empty(4, 5, dtype=F16, device="meta", requires_grad=need[1])
    c = hgemm.matmul(a, b)
    assert c.requires_grad and c.shape == (6, 5)
    c.backward(torch.empty_like(c))
    assert (a.grad is not None) == need[0] and (b.grad is not None) == need[1]
    if need[0]:
        assert a.grad.shape == a.shape
    if need[1]:
        assert b.grad.shape == b.shape


@pytest.mark.parametrize("sa,sb,sc", MATMUL_SHAPES)
@pytest.mark.parametrize("need", [(True, True), (True, False), (False, True)])
def test_meta_matmul_backward_shapes(sa, sb, sc, need):
    """Each gradient has its input's shape (a shared operand's sums over the batch), and only the
    gradients asked for are computed."""
    a = torch.empty(sa, dtype=F16, device="meta", requires_grad=need[0])
    b = torch.empty(sb, dtype=F16, device="meta", requires_grad=need[1])
    c = hgemm.matmul(a, b)
    assert c.shape == sc and c.requires_grad
    grads = torch.autograd.grad(c, [t for t, n in zip((a, b), need) if n], torch.empty_like(c))
    assert [g.shape for g in grads] == [t.shape for t, n in zip((a, b), need) if n]


@pytest.mark.parametrize("sa,sb,sc", MATMUL_SHAPES)
@pytest.mark.parametrize("dtype,out_dtype", [(BF16, None), (BF16, F32), (F16, F32), (BF16, F16)])
def test_meta_gradients_come_in_the_input_dtype(sa, sb, sc, dtype, out_dtype):
    a = torch.empty(sa, dtype=dtype, device="meta", requires_grad=True)
    b = torch.empty(sb, dtype=dtype, device="meta", requires_grad=True)
    c = hgemm.matmul(a, b, out_dtype=out_dtype)
    assert c.dtype == (dtype if out_dtype is None else out_dtype) and c.shape == sc
    da, db = torch.autograd.grad(c, [a, b], torch.empty_like(c))
    assert (da.dtype, da.shape, db.dtype, db.shape) == (dtype, a.shape, dtype, b.shape)


@pytest.mark.parametrize("spelling,want", [("f16", F16), ("float16", F16), (F16, F16), ("bf16", BF16),
                                           ("bfloat16", BF16), (BF16, BF16), ("f32", F32), ("float32", F32),
                                           (F32, F32), (None, BF16)])
def test_matmul_out_dtype_spellings(spelling, want):
    """hgemm.matmul's out_dtype, as a string or a torch dtype, reaches the operators as a dtype."""
    a = torch.empty(6, 4, dtype=BF16, device="meta", requires_grad=True)
    b = torch.empty(4, 5, dtype=BF16, device="meta")
    assert hgemm.matmul(a, b, out_dtype=spelling).dtype == want
    assert hgemm.matmul(a.expand(3, 6, 4), b, out_dtype=spelling).dtype == want
    for bad in ("f64", torch.float64, torch.int32):
        with pytest.raises(TypeError, match="argument 'out_dtype': expected"):
            hgemm.matmul(a, b, out_dtype=bad)


@pytest.mark.parametrize("batched", [False, True])
def test_gradient_of_a_transposed_weight_is_row_major(batched):
    """x·Wᵀ with W.t() a view: dW comes back row-major like W (the transposed product is computed),
    so autograd need not copy it."""
    x = torch.empty((3, 5, 8) if batched else (5, 8), dtype=F16, device="meta")
    w = torch.empty(6, 8, dtype=F16, device="meta", requires_grad=True)
    c = hgemm.matmul(x, w.t())
    (dw,) = torch.autograd.grad(c, [w], torch.empty_like(c))
    assert dw.shape == w.shape and dw.stride() == w.stride()


def test_matmul_with_grad_refuses_extra_arguments():
    a = torch.empty(6, 4, dtype=F16, device="meta", requires_grad=True)
    b = torch.empty(4, 5, dtype=F16, device="meta")
    for kw in ({"alpha": 2.0}, {"out": torch.empty(6, 5, dtype=F16, device="meta")}, {"trans_b": True}):
        with pytest.raises(ValueError, match="grad"):
            hgemm.matmul(a, b if "trans_b" not in kw else b.t(), **kw)


@pytest.mark.parametrize("backend", ["eager", "aot_eager"])
def test_compile_fullgraph_traces_on_meta(backend):
    """Dynamo traces hgemm.matmul without a graph break (fake kernel), and AOT autograd gets the
    backward, without a GPU."""
    def f(a, b):
        return hgemm.matmul(a, b) * 2

    torch._dynamo.reset()
    a = torch.empty(8, 4, dtype=F16, device="meta", requires_grad=True)
    b = torch.empty(4, 3, dtype=F16, device="meta")
    c = torch.compile(f, fullgraph=True, backend=backend)(a, b)
    assert c.shape == (8, 3) and c.requires_grad
    c.sum().backward()
    assert a.grad.shape == (8, 4)


@pytest.mark.parametrize("backend", ["eager", "aot_eager"])
@pytest.mark.parametrize("out_dtype", ["f32", F32])
def test_compile_fullgraph_traces_types_on_meta(backend, out_dtype):
    """bfloat16 inputs and out_dtype (a string or a dtype) trace without a graph break, and the
    backward gives gradients in bfloat16."""
    def f(a, b):
        return hgemm.matmul(a, b, out_dtype=out_dtype) * 2

    torch._dynamo.reset()
    a = torch.empty(8, 4, dtype=BF16, device="meta", requires_grad=True)
    b = torch.empty(4, 3, dtype=BF16, device="meta", requires_grad=True)
    c = torch.compile(f, fullgraph=True, backend=backend)(a, b)
    assert c.shape == (8, 3) and c.dtype == F32
    c.sum().backward()
    assert a.grad.dtype == BF16 and b.grad.dtype == BF16 and b.grad.shape == (4, 3)


@pytest.mark.parametrize("backend", ["eager", "aot_eager"])
def test_compile_fullgraph_traces_batched_matmul_on_meta(backend):
    def f(x, w, v):
        return torch.ops.hgemm.matmul(hgemm.matmul(x, w).relu(), v)

    torch._dynamo.reset()
    x = torch.empty(4, 8, 16, dtype=F16, device="meta", requires_grad=True)
    w = torch.empty(16, 32, dtype=F16, device="meta", requires_grad=True)
    v = torch.empty(4, 32, 8, dtype=F16, device="meta", requires_grad=True)
    c = torch.compile(f, fullgraph=True, backend=backend)(x, w, v)
    assert c.shape == (4, 8, 8)
    c.sum().backward()
    assert x.grad.shape == x.shape and w.grad.shape == w.shape and v.grad.shape == v.shape


def test_inductor_lowers_the_operators():
    """Inductor compiles a graph holding the hgemm operators (as fallback kernels; their inputs need
    grad, so it goes through the autograd kernels): on CPU tensors the compiled code then reaches
    the operators' CPU kernel, whose TypeError shows that lowering and compiling succeeded."""
    def f(x, w, v):
        return torch.ops.hgemm.matmul(torch.relu(torch.ops.hgemm.mm(x, w)), v) * 2

    torch._dynamo.reset()
    x = torch.ones(8, 16, dtype=F16, requires_grad=True)
    w = torch.ones(16, 32, dtype=F16, requires_grad=True)
    v = torch.ones(3, 32, 4, dtype=F16, requires_grad=True)
    with pytest.raises(TypeError, match="expected an array in CUDA memory"):
        torch.compile(f, fullgraph=True, backend="inductor")(x, w, v)


def test_inductor_lowers_the_operators_with_out_dtype():
    """As above, with bfloat16 inputs and out_dtype: the compiled code passes the dtype argument."""
    def f(x, w):
        return torch.ops.hgemm.mm(x, w, out_dtype=torch.float32).relu() * 2

    torch._dynamo.reset()
    x = torch.ones(8, 16, dtype=BF16, requires_grad=True)
    w = torch.ones(16, 32, dtype=BF16, requires_grad=True)
    with pytest.raises(TypeError, match="expected an array in CUDA memory"):
        torch.compile(f, fullgraph=True, backend="inductor")(x, w)


# ---- GPU ----
# Tolerances are on the relative Frobenius error against float32 torch on the same 16-bit inputs:
# the C++ tests' bound for f32 accumulation over a sum of k products, twice the output's rounding
# u (2^-11 for float16, 2^-8 for bfloat16), plus one more u (of the incoming gradient). With
# float32 outputs the reference is float64 and the bound src/reference/tolerance.h's, (2k + 10)·2^-24:
# a float16 rounding anywhere on the way (about 2^-12 of the result) exceeds it for k ≤ 512.

def rand(*shape, requires_grad=False, dtype=F16):
    return ((torch.rand(*shape, device="cuda") * 2 - 1).to(dtype)).requires_grad_(requires_grad)


def rel_error(got, want):
    return (got.double() - want.double()).norm().item() / max(want.double().norm().item(), 1e-30)


def tol(k, dtype=F16):
    u = 2.0 ** -11 if dtype == F16 else 2.0 ** -8
    return 2 * u + k * 2.0 ** -22 + u


def tol_f32(k):
    return (2 * k + 10) * 2.0 ** -24


def operand(shape, layout, dtype=F16):
    """A float16 (or `dtype`) CUDA tensor of `shape` laid out as: "rows" (contiguous), "cols" (each
    matrix a transposed view), "padded" (rows with a leading dimension past the width), "expanded"
    (a 3-D batch whose matrices are all one, batch stride 0)."""
    *batch, r, c = shape
    if layout == "cols":
        return rand(*batch, c, r, dtype=dtype).mT
    if layout == "padded":
        return rand(*batch, r, c + 5, dtype=dtype)[..., :c]
    if layout == "expanded" and batch:
        return rand(1, r, c, dtype=dtype).expand(*shape)
    return rand(*shape, dtype=dtype)


def reference(a, b, g, dtype=torch.float32):
    """float32 (or `dtype`) torch: the product of a and b, and their gradients for the incoming
    gradient g."""
    af = a.detach().to(dtype).requires_grad_()
    bf = b.detach().to(dtype).requires_grad_()
    c = torch.matmul(af, bf)
    c.backward(g.to(dtype))
    return c.detach(), af.grad, bf.grad


@cuda
@pytest.mark.parametrize("m,k,n", [(7, 7, 7), (128, 256, 64), (129, 127, 33)])
@pytest.mark.parametrize("dtype", [F16, BF16])
def test_gradients_match_fp32(m, k, n, dtype):
    a, b = rand(m, k, requires_grad=True, dtype=dtype), rand(k, n, requires_grad=True, dtype=dtype)
    c = hgemm.matmul(a, b)
    assert c.requires_grad and c.dtype == dtype
    g = rand(m, n, dtype=dtype)
    c.backward(g)
    c32, da32, db32 = reference(a, b, g)
    assert a.grad.dtype == dtype and b.grad.dtype == dtype
    assert rel_error(c.detach(), c32) < tol(k, dtype)
    assert rel_error(a.grad, da32) < tol(n, dtype)
    assert rel_error(b.grad, db32) < tol(m, dtype)


@cuda
@pytest.mark.parametrize("sa,sb,sc", MATMUL_SHAPES)
@pytest.mark.parametrize("layout", ["rows", "cols", "padded", "expanded"])
@pytest.mark.parametrize("dtype", [F16, BF16])
def test_matmul_forward_and_gradients_match_fp32(sa, sb, sc, layout, dtype):
    """Every broadcasting case and operand layout, in float16 and bfloat16: the product, and both
    gradients (a shared operand's summed over the batch), against float32 torch.matmul."""
    grow = 17  # matrices past a tile edge: 5x3 by 3x4 becomes 85x51 by 51x68
    sa = sa[:-2] + (sa[-2] * grow, sa[-1] * grow)
    sb = sb[:-2] + (sb[-2] * grow, sb[-1] * grow)
    a = operand(sa, layout, dtype).detach().requires_grad_()
    b = operand(sb, "rows" if layout == "expanded" else layout, dtype).detach().requires_grad_()
    c = hgemm.matmul(a, b)
    assert c.shape == sc[:-2] + (sa[-2], sb[-1]) and c.is_contiguous() and c.dtype == dtype
    g = rand(*c.shape, dtype=dtype)
    c.backward(g)
    c32, da32, db32 = reference(a, b, g)
    batch = c.shape[0] if c.dim() == 3 else 1
    assert rel_error(c.detach(), c32) < tol(sa[-1], dtype)
    assert a.grad.shape == a.shape and rel_error(a.grad, da32) < tol(batch * sb[-1], dtype)
    assert b.grad.shape == b.shape and rel_error(b.grad, db32) < tol(batch * sa[-2], dtype)


@cuda
@pytest.mark.parametrize("sa,sb", [((129, 200), (200, 72)), ((3, 65, 96), (96, 40)), ((40, 96), (3, 96, 65))])
@pytest.mark.parametrize("dtype", [F16, BF16])
def test_out_dtype_float32_forward_and_gradients(sa, sb, dtype):
    """out_dtype=float32: the product keeps the f32 sum (held to the float32 bound against float64),
    and the gradients, computed from the float32 incoming gradient cast to the inputs' dtype, come
    in that dtype. The incoming gradient holds values of the inputs' dtype, so the cast is exact
    and the gradients are held to the same bound as without out_dtype."""
    a, b = rand(*sa, requires_grad=True, dtype=dtype), rand(*sb, requires_grad=True, dtype=dtype)
    c = hgemm.matmul(a, b, out_dtype=torch.float32)
    assert c.dtype == F32 and c.requires_grad
    g = rand(*c.shape, dtype=dtype).float()
    c.backward(g)
    c64, da64, db64 = reference(a, b, g, torch.float64)
    assert rel_error(c.detach(), c64) < tol_f32(sa[-1])
    assert a.grad.dtype == dtype and b.grad.dtype == dtype
    batch = c.shape[0] if c.dim() == 3 else 1
    assert rel_error(a.grad, da64) < tol(batch * sb[-1], dtype)
    assert rel_error(b.grad, db64) < tol(batch * sa[-2], dtype)


@cuda
@pytest.mark.parametrize("dtype,out_dtype", [(BF16, F16), (F16, BF16)])
def test_out_dtype_of_the_other_16_bit_type(dtype, out_dtype):
    """A 16-bit output of the other type: the product rounds to out_dtype, and the incoming gradient
    (of out_dtype) is cast to the inputs' dtype, one more rounding of the coarser type at most."""
    a, b = rand(100, 80, requires_grad=True, dtype=dtype), rand(80, 60, requires_grad=True, dtype=dtype)
    c = torch.ops.hgemm.mm(a, b, out_dtype=out_dtype)
    assert c.dtype == out_dtype
    g = rand(100, 60, dtype=out_dtype)
    c.backward(g)
    c32, da32, db32 = reference(a, b, g)
    assert rel_error(c.detach(), c32) < tol(80, out_dtype)
    assert a.grad.dtype == dtype and rel_error(a.grad, da32) < tol(60, BF16)
    assert b.grad.dtype == dtype and rel_error(b.grad, db32) < tol(100, BF16)


@cuda
@pytest.mark.parametrize("layout", ["rows", "cols"])
def test_matmul_batches_take_no_copies(layout):
    """A batch times a shared matrix, in place: the one allocation is the output (contiguous rows
    make a single (batch·M)×K product, transposed matrices a strided batch)."""
    x, w = operand((4, 64, 96), layout), operand((96, 128), layout)
    torch.cuda.synchronize()
    before = torch.cuda.memory_allocated()
    torch.cuda.reset_peak_memory_stats()
    c = torch.ops.hgemm.matmul(x, w)
    torch.cuda.synchronize()
    assert torch.cuda.max_memory_allocated() - before == c.numel() * 2
    assert rel_error(c, x.float() @ w.float()) < tol(96)


@cuda
def test_strided_inputs():
    base = rand(64, 80)
    a_t = rand(48, 64).t()            # transposed view: op T
    a_pad = base[:, :48]              # padded rows: a leading dimension
    b_odd = rand(96, 64)[::2, ::2]    # 48x32 with strides (128, 2): made contiguous
    for a in (a_t, a_pad):
        got = torch.ops.hgemm.mm(a, b_odd)
        assert rel_error(got, a.float() @ b_odd.float()) < tol(a.shape[1])


@cuda
def test_column_strided_views_run_through_a_copy_with_and_without_grad():
    """A view with no unit stride: the operators and hgemm.matmul's direct path (no gradients) both
    copy it and compute the right product, so that a tensor is taken alike with and without grad."""
    a, b = rand(40, 64)[:, ::2], rand(3, 32, 48)[:, :, ::2]  # strides (64, 2) and (1536, 48, 2)
    assert rel_error(torch.ops.hgemm.mm(a, b[0]), a.float() @ b[0].float()) < tol(32)
    assert rel_error(torch.ops.hgemm.matmul(a, b), a.float() @ b.float()) < tol(32)
    assert rel_error(hgemm.matmul(a, b), a.float() @ b.float()) < tol(32)
    a.requires_grad_()
    c = hgemm.matmul(a, b)
    g = rand(*c.shape)
    c.backward(g)
    _, da32, _ = reference(a, b, g)
    assert rel_error(a.grad, da32) < tol(3 * 24)


@cuda
@pytest.mark.parametrize("need", [(True, False), (False, True)])
def test_needs_input_grad(need):
    a, b = rand(32, 16, requires_grad=need[0]), rand(16, 8, requires_grad=need[1])
    hgemm.matmul(a, b).sum().backward()
    assert (a.grad is not None) == need[0] and (b.grad is not None) == need[1]


@cuda
def test_unsupported_dtypes_devices_and_shapes_raise_clearly():
    a = rand(8, 8)
    for dtype in (torch.float32, torch.float64):
        for op in (torch.ops.hgemm.mm, torch.ops.hgemm.matmul):
            with pytest.raises(TypeError, match="float16 or bfloat16"):
                op(a.to(dtype), a.to(dtype))
        with pytest.raises(TypeError, match="float16 or bfloat16"):
            hgemm.matmul(a.to(dtype), a)
        # a float32 or float64 layer is computed by torch, as torch.nn.Linear would
        layer = hgemm.nn.Linear(8, 8, device="cuda", dtype=F16).to(dtype)
        torch.testing.assert_close(layer(a.to(dtype)), torch.nn.functional.linear(a.to(dtype), layer.weight, layer.bias))
    for op in (torch.ops.hgemm.mm, torch.ops.hgemm.matmul):
        with pytest.raises(TypeError, match="both must have one dtype"):
            op(a, a.bfloat16())
        with pytest.raises(TypeError, match="argument 'accum': expected 'f32' for .*'f16'"):
            op(a.bfloat16(), a.bfloat16(), accum="f16")
        with pytest.raises(TypeError, match="argument 'accum': expected 'f32' for .*'f16'"):
            op(a, a, accum="f16", out_dtype=F32)
    with pytest.raises(TypeError, match="both must have one dtype"):
        hgemm.matmul(a.requires_grad_(), a.bfloat16())
    a.requires_grad_(False)
    for op in (torch.ops.hgemm.mm, torch.ops.hgemm.matmul):
        with pytest.raises(TypeError, match="CUDA"):
            op(a, a.cpu())
        with pytest.raises(ValueError, match="do not match"):
            op(a, rand(9, 8))
    with pytest.raises(ValueError, match="broadcast"):
        torch.ops.hgemm.matmul(rand(2, 8, 8), rand(3, 8, 8))
    with pytest.raises(ValueError, match=r"argument 'kernel_id': expected 'auto' or an id from hgemm.kernels\(\)"):
        torch.ops.hgemm.mm(a, a, kernel_id="cuda.warp_drive")


@cuda
def test_a_named_kernel_runs_through_the_operator():
    a, b = rand(64, 64, requires_grad=True), rand(64, 64)
    c = hgemm.matmul(a, b, kernel_id="cuda.t8x8_hfma2", accum="f16")
    assert rel_error(c.detach(), a.detach().float() @ b.float()) < 2.0 ** -10 * (2 + 0.5 * 8)
    with pytest.raises(ValueError, match="f32"):  # the rung has no f32 accumulation: refused, not run
        torch.ops.hgemm.mm(a.detach(), b, kernel_id="cuda.t8x8_hfma2")


@cuda
def test_runs_on_the_current_torch_stream():
    a, b = rand(4, 256, 256), rand(256, 256)
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        c = torch.ops.hgemm.matmul(a, b)
        d = torch.ops.hgemm.mm(a[0], b)
    s.synchronize()
    assert rel_error(c, a.float() @ b.float()) < tol(256)
    assert rel_error(d, a[0].float() @ b.float()) < tol(256)


@cuda
def test_torch_compile_fullgraph():
    def f(a, b):
        return hgemm.matmul(a, b) * 2

    torch._dynamo.reset()
    a, b = rand(64, 32), rand(32, 16)
    got = torch.compile(f, fullgraph=True)(a, b)
    assert rel_error(got, (a.float() @ b.float()) * 2) < tol(32)


@cuda
def test_torch_compile_bfloat16_with_float32_output():
    """Inductor with bfloat16 inputs and out_dtype=float32, forward and backward."""
    def f(a, b):
        return hgemm.matmul(a, b, out_dtype=torch.float32).relu()

    torch._dynamo.reset()
    a, b = rand(64, 96, requires_grad=True, dtype=BF16), rand(96, 48, requires_grad=True, dtype=BF16)
    got = torch.compile(f, fullgraph=True)(a, b)
    assert got.dtype == F32
    want = (a.detach().double() @ b.detach().double()).relu()
    assert rel_error(got.detach(), want) < tol_f32(96)
    g = rand(64, 48, dtype=BF16).float()
    got.backward(g)
    mask = (got.detach() > 0).double()  # relu's backward reads its output
    da = (g.double() * mask) @ b.detach().double().t()
    assert a.grad.dtype == BF16 and rel_error(a.grad, da) < tol(48, BF16)


class Block(torch.nn.Module):
    """hgemm layers and a batched hgemm.matmul, for the compile and graph tests."""

    def __init__(self, linear):
        super().__init__()
        self.up, self.down = linear(64, 96), linear(96, 64, bias=False)
        self.mix = torch.nn.Parameter(torch.randn(64, 64, device="cuda", dtype=F16) / 8)

    def forward(self, x):
        return hgemm.matmul(self.down(torch.relu(self.up(x))), self.mix)


def block_pair():
    """The same Block computed by hgemm and by torch (float32), from the same weights."""
    torch.manual_seed(0)
    ours = Block(lambda i, o, bias=True: hgemm.nn.Linear(i, o, bias=bias, device="cuda", dtype=F16)).cuda()
    ref = Block(lambda i, o, bias=True: torch.nn.Linear(i, o, bias=bias, device="cuda")).cuda()
    ref.load_state_dict(ours.state_dict())
    ref.float()
    ref.forward = lambda x: torch.matmul(ref.down(torch.relu(ref.up(x))), ref.mix)
    return ours, ref


def grads(model):
    return {n: p.grad.detach().clone() for n, p in model.named_parameters()}


@cuda
def test_torch_compile_fullgraph_default_mode_forward_and_backward():
    ours, ref = block_pair()
    torch._dynamo.reset()
    compiled = torch.compile(ours, fullgraph=True)
    x = rand(4, 16, 64)
    g = rand(4, 16, 64)
    out = compiled(x)
    out.backward(g)
    want = ref(x.float())
    want.backward(g.float())
    assert rel_error(out, want) < 4 * tol(96)  # three products, each rounded to float16
    for name, grad in grads(ours).items():
        assert rel_error(grad, dict(ref.named_parameters())[name].grad) < 8 * tol(4 * 16 * 96), name


@cuda
def test_torch_compile_reduce_overhead_replays_cuda_graphs():
    """mode="reduce-overhead": inductor captures the hgemm operators into CUDA graphs (no
    cudagraph skip) and each call, forward and backward, is right for its own inputs."""
    from torch._dynamo.utils import counters

    ours, ref = block_pair()
    torch._dynamo.reset()
    counters.clear()
    compiled = torch.compile(ours, mode="reduce-overhead", fullgraph=True)
    for step in range(5):  # the first calls record, the later ones replay
        torch.compiler.cudagraph_mark_step_begin()
        for p in ours.parameters():
            p.grad = None
        x, g = rand(4, 16, 64), rand(4, 16, 64)
        out = compiled(x)
        out.backward(g)
        got_out, got_grads = out.detach().clone(), grads(ours)
        for p in ref.parameters():
            p.grad = None
        want = ref(x.float())
        want.backward(g.float())
        assert rel_error(got_out, want) < 4 * tol(96), step
        for name, grad in got_grads.items():
            assert rel_error(grad, dict(ref.named_parameters())[name].grad) < 8 * tol(4 * 16 * 96), (step, name)
    assert counters["inductor"]["cudagraph_skips"] == 0


@cuda
def test_cuda_graph_capture_and_replay():
    """Captured once, replayed with new data copied into the same inputs: each replay computes
    from that replay's inputs (mm, a batched matmul and hgemm.nn.Linear)."""
    a, b = rand(64, 32), rand(32, 16)
    x, w = rand(3, 64, 32), rand(32, 48)
    layer = hgemm.nn.Linear(32, 40, device="cuda", dtype=F16)
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):  # warm up outside capture
        torch.ops.hgemm.mm(a, b), torch.ops.hgemm.matmul(x, w), layer(x)
    torch.cuda.current_stream().wait_stream(s)
    graph = torch.cuda.CUDAGraph()
    with torch.no_grad(), torch.cuda.graph(graph):
        c = torch.ops.hgemm.mm(a, b)
        d = torch.ops.hgemm.matmul(x, w)
        e = layer(x)
    for _ in range(2):
        a.copy_(rand(64, 32))
        x.copy_(rand(3, 64, 32))
        graph.replay()
        torch.cuda.synchronize()
        assert rel_error(c, a.float() @ b.float()) < tol(32)
        assert rel_error(d, x.float() @ w.float()) < tol(32)
        want = x.float() @ layer.weight.float().t() + layer.bias.float()
        assert rel_error(e, want) < 2 * tol(32)


@cuda
def test_opcheck_cuda():
    a, b = rand(33, 16, requires_grad=True), rand(16, 24, requires_grad=True)
    torch.library.opcheck(torch.ops.hgemm.mm, (a, b))


@cuda
@pytest.mark.parametrize("dtype,out_dtype", [(BF16, None), (BF16, F32), (F16, F32), (BF16, F16)])
def test_opcheck_types_cuda(dtype, out_dtype):
    """Real and fake kernels agree on the output dtype, and the gradients check, for bfloat16
    inputs and each out_dtype."""
    a, b = rand(33, 16, requires_grad=True, dtype=dtype), rand(3, 16, 24, requires_grad=True, dtype=dtype)
    kwargs = {} if out_dtype is None else {"out_dtype": out_dtype}
    torch.library.opcheck(torch.ops.hgemm.mm, (a, b[0]), kwargs)
    torch.library.opcheck(torch.ops.hgemm.matmul, (a, b), kwargs)


@cuda
@pytest.mark.parametrize("sa,sb,sc", MATMUL_SHAPES)
def test_opcheck_matmul_cuda(sa, sb, sc):
    a = rand(*sa, requires_grad=True)
    b = rand(*sb, requires_grad=True)
    torch.library.opcheck(torch.ops.hgemm.matmul, (a, b))
    torch.library.opcheck(torch.ops.hgemm.matmul, (a, b.mT.contiguous().mT), {"accum": "f16"})


@cuda
def test_no_grad_keeps_fast_path():
    a, b = rand(8, 8, requires_grad=True), rand(8, 8)
    with torch.no_grad():
        assert not hgemm.matmul(a, b).requires_grad
    assert not math.isnan(hgemm.matmul(a.detach(), b).float().sum().item())


@cuda
def test_matmul_fast_path_takes_batches_and_out():
    x, w = rand(5, 33, 40), rand(40, 24)
    out = torch.empty(5, 33, 24, device="cuda", dtype=F16)
    assert hgemm.matmul(x, w, out=out) is out
    assert rel_error(out, x.float() @ w.float()) < tol(40)
    got = hgemm.matmul(w.t(), x, trans_b=True)  # 24x40 by each 40x33 (op T of x's matrices)
    assert got.shape == (5, 24, 33) and rel_error(got, w.float().t() @ x.float().mT) < tol(40)


@cuda
def test_cupy_batches_if_available():
    cupy = pytest.importorskip("cupy")
    a = cupy.random.uniform(-1, 1, (3, 65, 33)).astype(cupy.float16)
    b = cupy.random.uniform(-1, 1, (33, 17)).astype(cupy.float16)
    c = hgemm.matmul(a, b)
    assert isinstance(c, cupy.ndarray) and c.shape == (3, 65, 17)
    want = cupy.matmul(a.astype(cupy.float64), b.astype(cupy.float64))
    err = float(cupy.linalg.norm(c.astype(cupy.float64) - want) / cupy.linalg.norm(want))
    assert err <= tol(33)
