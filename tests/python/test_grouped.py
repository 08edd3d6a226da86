# SPDX-License-Identifier: Apache-2.0
"""hgemm.grouped_mm and torch.ops.hgemm.grouped_mm: the binding's library call replayed on the host,
shapes, errors, schema, fake kernels, autograd, opcheck and torch.compile on the CPU (numpy arrays,
meta/fake tensors), and the products, gradients and CUDA graphs on a GPU (skipped without one)
against a float32 loop of torch.mm per group."""
import os
import subprocess
import sys

import numpy as np
import pytest

import hgemm
from hgemm.bench_grouped import SHAPES, grouped_rows

torch = pytest.importorskip("torch")

import hgemm.torch_ops  # noqa: E402,F401
from torch._subclasses.fake_tensor import FakeTensorMode  # noqa: E402

cuda = pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device")
F16, BF16, F32, I32 = torch.float16, torch.bfloat16, torch.float32, torch.int32


# ---- the binding's library call, replayed on the host (describe_grouped launches nothing) ----

def carve(shape, strides, seed, dtype=np.float16):
    """An array of `shape` with element `strides` inside a buffer of small integers (exact in any
    accumulation), with spare elements at its end: (buffer, view)."""
    size = 1 + sum((n - 1) * s for n, s in zip(shape, strides)) if all(shape) else 0
    buf = np.random.default_rng(seed).integers(-3, 4, size + 3).astype(dtype)
    return buf, np.lib.stride_tricks.as_strided(buf, shape, tuple(buf.itemsize * s for s in strides))


def layout(shape, kind, seed):
    """A 2-D or 3-D array whose matrices are row-major ("rows"), transposed views ("cols") or rows
    with a leading dimension past the width ("padded")."""
    *batch, r, c = shape
    if kind == "cols":
        inner, each = (1, r), r * c
    elif kind == "padded":
        inner, each = (c + 5, 1), r * (c + 5)
    else:
        inner, each = (c, 1), r * c
    return carve(shape, ((each,) if batch else ()) + inner, seed)


def replay(call, buffers, sizes):
    """Runs describe_grouped's answer in float64 through its pointers, leading dimensions, ops and
    strides, with the group sizes read from `sizes` as the kernel reads them (clamped to [0, M],
    offsets made nondecreasing). Returns the output buffer, NaN where nothing was written."""
    def locate(ptr):
        for i, buf in enumerate(buffers):
            if buf.ctypes.data <= ptr < buf.ctypes.data + buf.nbytes:
                return i, (ptr - buf.ctypes.data) // buf.itemsize
        raise AssertionError("a pointer outside every buffer")

    def matrix(i, offset, rows, cols, ld, op):
        stored = (rows, cols) if op == "n" else (cols, rows)
        v = np.lib.stride_tricks.as_strided(buffers[i][offset:].astype(np.float64), stored, (8 * ld, 8))
        return v if op == "n" else v.T

    (ia, oa), (ib, ob), (id_, od) = locate(call["a"]), locate(call["b"]), locate(call["d"])
    m, n, k, masked = call["m"], call["n"], call["k"], call["layout"] == "masked"
    out = np.full(buffers[id_].size, np.nan)
    end = 0
    for g in range(call["groups"]):
        b = matrix(ib, ob + g * call["stride_b"], k, n, call["ldb"], call["op_b"])
        if masked:
            rows = min(max(int(sizes[g]), 0), m)
            a = matrix(ia, oa + g * call["stride_a"], m, k, call["lda"], call["op_a"])[:rows]
            first, d_at = 0, od + g * call["stride_d"]
        else:
            first, end = end, max(end, min(max(int(sizes[g]), 0), m))
            a = matrix(ia, oa, m, k, call["lda"], call["op_a"])[first:end]
            d_at = od
        prod = a @ b
        for r in range(prod.shape[0]):
            row = d_at + (first + r) * call["ldd"]
            out[row:row + n] = prod[r]
    return out


def group_loop(a, b, sizes, masked):
    """float64 numpy: the rows each group writes, NaN elsewhere."""
    a, b = a.astype(np.float64), b.astype(np.float64)
    if masked:
        out = np.full(a.shape[:2] + (b.shape[2],), np.nan)
        for g, rows in enumerate(sizes):
            out[g, :rows] = a[g, :rows] @ b[g]
        return out
    out = np.full((a.shape[0], b.shape[2]), np.nan)
    start = 0
    for g, end in enumerate(sizes):
        out[start:end] = a[start:end] @ b[g]
        start = end
    return out


@pytest.mark.parametrize("a_kind", ["rows", "cols", "padded"])
@pytest.mark.parametrize("b_kind", ["rows", "cols", "padded"])
def test_contiguous_call_replays_to_the_group_loop(a_kind, b_kind):
    """Uneven groups with an empty one and unused rows at the end: each group's rows come out right
    and the rows past offs[-1] are not written, for every layout of a and b (no copies)."""
    rows = [5, 0, 9, 3]
    total, k, n = sum(rows) + 4, 7, 6
    abuf, a = layout((total, k), a_kind, 1)
    bbuf, b = layout((len(rows), k, n), b_kind, 2)
    dbuf, d = carve((total, n), (n, 1), 3, np.float32)
    offs = np.cumsum(rows).astype(np.int32)
    if a_kind == "cols":  # groups start at any row: a column-major a is refused (torch tensors are copied)
        with pytest.raises(ValueError, match="row-major rows"):
            hgemm._hgemm.describe_grouped(a, b, d, offs, False)
        return
    call = hgemm._hgemm.describe_grouped(a, b, d, offs, False)
    assert call["layout"] == "contiguous" and call["op_a"] == "n"
    assert call["op_b"] == ("t" if b_kind == "cols" else "n") and call["d_type"] == "f32"
    assert (call["groups"], call["m"], call["n"], call["k"]) == (4, total, n, k)
    got = replay(call, [abuf, bbuf, dbuf], offs).reshape(-1)[:total * n].reshape(total, n)
    want = group_loop(a, b, offs, False)
    np.testing.assert_array_equal(got, want)  # NaN (not written) in the same places


@pytest.mark.parametrize("kind", ["rows", "cols", "padded"])
def test_masked_call_replays_to_the_group_loop(kind):
    m_valid = np.array([4, 0, 6, 2], dtype=np.int32)
    g, m, k, n = 4, 6, 5, 7
    abuf, a = layout((g, m, k), kind, 4)
    bbuf, b = layout((g, k, n), "cols" if kind == "rows" else "rows", 5)
    dbuf, d = carve((g, m, n), (m * n, n, 1), 6)
    call = hgemm._hgemm.describe_grouped(a, b, d, m_valid, True)
    assert call["layout"] == "masked" and call["stride_a"] == a.strides[0] // 2 and call["stride_d"] == m * n
    got = replay(call, [abuf, bbuf, dbuf], m_valid)[:g * m * n].reshape(g, m, n)
    np.testing.assert_array_equal(got, group_loop(a, b, m_valid, True))


def test_one_weight_for_every_group_is_a_zero_stride():
    _, a = carve((32, 8), (8, 1), 1)
    _, w = carve((8, 4), (4, 1), 2)
    b = np.broadcast_to(w, (3, 8, 4))
    call = hgemm._hgemm.describe_grouped(a, b, np.zeros((32, 4), np.float16), np.zeros(3, np.int32), False)
    assert call["stride_b"] == 0 and call["ldb"] == 4


def test_binding_errors():
    a, b, d = np.ones((8, 4), np.float16), np.ones((2, 4, 3), np.float16), np.ones((8, 3), np.float16)
    offs = np.array([3, 8], np.int32)
    describe = hgemm._hgemm.describe_grouped
    with pytest.raises(TypeError, match=r"offs must have dtype int32 \(int64 given\)"):
        describe(a, b, d, offs.astype(np.int64), False)
    with pytest.raises(ValueError, match="offs has 3 entries but b has 2 groups"):
        describe(a, b, d, np.zeros(3, np.int32), False)
    with pytest.raises(ValueError, match="contiguous layout takes a 2-D a"):
        describe(a[None], b, d, offs, False)
    with pytest.raises(ValueError, match="masked layout takes a 3-D a"):
        describe(a, b, d, offs, True)
    with pytest.raises(ValueError, match="b must be 3-D"):
        describe(a, b[0], d, offs, False)
    with pytest.raises(ValueError, match="shapes do not match"):
        describe(a, np.ones((2, 5, 3), np.float16), d, offs, False)
    with pytest.raises(ValueError, match="out must be 8x3"):
        describe(a, b, d[:7], offs, False)
    with pytest.raises(ValueError, match="row-major rows"):
        describe(a, b, np.ones((3, 8), np.float16).T, offs, False)
    with pytest.raises(TypeError, match=r"b must have dtype float16 or bfloat16 \(float32 given\)"):
        describe(a, b.astype(np.float32), d, offs, False)
    with pytest.raises(TypeError, match="CUDA"):  # host memory: refused before any launch
        hgemm._hgemm.grouped_gemm(a, b, d, offs, False, 0)
    with pytest.raises(TypeError, match="CUDA"):
        hgemm.grouped_mm(a, b, offs, out=d)


def test_grouped_rows_is_hgemm_benchs_rule():
    """The same sizes as tools/bench/config.cpp's grouped_rows (its test's values)."""
    assert grouped_rows(8, 64) == [16, 0, 16, 16, 0, 16, 0, 0]
    assert grouped_rows(1, 48) == [48]
    with pytest.raises(ValueError, match="multiple of 16"):
        grouped_rows(4, 100)
    for g, m, _, _ in SHAPES:
        rows = grouped_rows(g, m)
        assert len(rows) == g and sum(rows) == m and 0 in rows and min(rows) != max(rows)
        assert all(r % 16 == 0 for r in rows)


def test_bench_and_grouped_mm_need_no_torch():
    code = ("import sys, hgemm, hgemm.bench_grouped; hgemm.grouped_mm; assert 'torch' not in sys.modules; "
            "print('ok')")
    env = {**os.environ, "HGEMM_NO_TORCH": "1"}  # with torch installed, import hgemm registers the operators
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env).stdout.strip() == "ok"


# ---- the operator on meta / fake tensors ----

def meta(*shape, dtype=BF16, grad=False):
    return torch.empty(shape, dtype=dtype, device="meta", requires_grad=grad)


def sizes(n, device="meta"):
    return torch.zeros(n, dtype=I32, device=device)


def test_schema_and_autograd():
    assert str(torch.ops.hgemm.grouped_mm.default._schema) == (
        "hgemm::grouped_mm(Tensor a, Tensor b, Tensor? offs=None, Tensor? bias=None, ScalarType? out_dtype=None, "
        "Tensor? m_valid=None) -> Tensor")
    assert torch._C._dispatch_has_kernel_for_dispatch_key("hgemm::grouped_mm", "Autograd")


@pytest.mark.parametrize("dtype", [F16, BF16])
@pytest.mark.parametrize("out_dtype", [None, F16, BF16, F32])
def test_fake_shapes(dtype, out_dtype):
    """The shapes of torch._grouped_mm: ΣM×K by G×K×N with offs is ΣM×N; G×M×K by G×K×N is G×M×N;
    G×M×K by K×ΣN with offs is M×ΣN; M×ΣK by ΣK×N with offs is G×M×N."""
    want = dtype if out_dtype is None else out_dtype
    with FakeTensorMode():
        a = torch.empty(100, 32, dtype=dtype, device="cuda")
        b = torch.empty(4, 32, 24, dtype=dtype, device="cuda")
        offs = torch.zeros(4, dtype=I32, device="cuda")
        c = torch.ops.hgemm.grouped_mm(a, b, offs, out_dtype=out_dtype)
        assert c.shape == (100, 24) and c.dtype == want and c.is_contiguous()
        assert c.shape == hgemm.grouped_mm(a, b.mT.contiguous().mT, offs, out_dtype=out_dtype).shape
        a3 = torch.empty(4, 10, 32, dtype=dtype, device="cuda")
        for m_valid in (None, offs):
            c = torch.ops.hgemm.grouped_mm(a3, b, None, m_valid=m_valid, out_dtype=out_dtype)
            assert c.shape == (4, 10, 24) and c.dtype == want
        c = torch.ops.hgemm.grouped_mm(a3, b[0], offs, None, out_dtype)  # positional, as torch._grouped_mm's
        assert c.shape == (10, 24) and c.dtype == want and c.is_contiguous()
        k_a, k_b = torch.empty(10, 100, dtype=dtype, device="cuda"), torch.empty(100, 24, dtype=dtype, device="cuda")
        c = torch.ops.hgemm.grouped_mm(k_a, k_b, offs, out_dtype=out_dtype)
        assert c.shape == (4, 10, 24) and c.dtype == want and c.is_contiguous()
        if dtype is BF16 and out_dtype in (None, BF16):  # torch's own meta kernel agrees
            assert torch._grouped_mm(a, b, offs=offs).shape == (100, 24)
            assert torch._grouped_mm(a3, b).shape == (4, 10, 24)
            assert torch._grouped_mm(a3, b[0], offs=offs).shape == (10, 24)
            assert torch._grouped_mm(k_a, k_b, offs=offs).shape == (4, 10, 24)


def test_fake_rejects_what_is_not_supported():
    a, b, offs = meta(64, 32), meta(4, 32, 16), sizes(4)
    op = torch.ops.hgemm.grouped_mm
    with pytest.raises(NotImplementedError, match=r"argument 'bias': expected None \(a bias on grouped products"):
        op(a, b, offs, meta(4, 16))
    with pytest.raises(TypeError, match="argument 'a': expected an array in CUDA memory, got one on meta"):  # K-grouped
        hgemm.grouped_mm(a.mT, meta(64, 16), offs.to("meta"))
    with pytest.raises(ValueError, match=r"argument 'offs': expected the groups' cumulative ends along K"):
        op(a.mT, meta(64, 16))
    with pytest.raises(ValueError, match=r"argument 'offs': expected the groups' cumulative ends along b's columns"):
        op(meta(4, 8, 32), meta(32, 16))
    with pytest.raises(ValueError, match=r"argument 'offs': expected 1-D with one entry per group \(4\), got shape \(3,\)"):
        op(meta(4, 8, 32), meta(32, 16), sizes(3))  # the cols form: one entry per matrix of a
    with pytest.raises(ValueError, match=r"argument 'b': expected 32 rows \(a is 4x8x32\), got 31x16"):
        op(meta(4, 8, 32), meta(31, 16), offs)
    with pytest.raises(ValueError, match=r"argument 'm_valid': expected None \(m_valid is for 3-D a and b"):
        op(meta(4, 8, 32), meta(32, 16), offs, m_valid=offs)
    with pytest.raises(ValueError, match=r"^hgemm::grouped_mm: argument 'offs': expected .* \(a 2-D a needs offs\), got None$"):
        op(a, b)
    with pytest.raises(ValueError, match=r"argument 'offs': expected None \(offs is not taken"):
        op(meta(4, 8, 32), b, offs)
    with pytest.raises(ValueError, match=r"argument 'm_valid': expected None \(m_valid is for 3-D a"):
        op(a, b, offs, None, None, offs)
    with pytest.raises(TypeError, match=r"^hgemm::grouped_mm: argument 'offs': expected dtype int32, got int64$"):
        op(a, b, offs.long())
    with pytest.raises(ValueError, match=r"argument 'offs': expected 1-D with one entry per group \(4\), got shape \(3,\)"):
        op(a, b, sizes(3))
    with pytest.raises(ValueError, match=r"argument 'b': expected 4 groups \(as a\), got 3"):
        op(meta(4, 8, 32), meta(3, 32, 16))
    with pytest.raises(ValueError, match=r"argument 'b': expected 32 rows in each group .*contraction"):
        op(a, meta(4, 31, 16), offs)
    with pytest.raises(TypeError, match=r"argument 'a': expected dtype float16 or bfloat16, got float32"):
        op(a.float(), b.float(), offs)
    with pytest.raises(TypeError, match="both must have one dtype"):
        op(a, b.half(), offs)
    with pytest.raises(TypeError, match="argument 'out_dtype': expected"):
        op(a, b, offs, out_dtype=torch.float64)


def test_cpu_tensors_are_refused_with_a_type_error():
    a, b = torch.ones(8, 4, dtype=F16), torch.ones(2, 4, 3, dtype=F16)
    with pytest.raises(TypeError, match="CUDA"):
        torch.ops.hgemm.grouped_mm(a, b, torch.tensor([3, 8], dtype=I32))
    with pytest.raises(TypeError, match="CUDA"):
        hgemm.grouped_mm(a.requires_grad_(), b, torch.tensor([3, 8], dtype=I32))


def test_out_with_grad_is_refused():
    with pytest.raises(ValueError, match=r"argument 'out': expected None .*out= would drop the gradient"):
        hgemm.grouped_mm(meta(8, 4, grad=True), meta(2, 4, 3), sizes(2), out=meta(8, 3))


CASES = {  # (a's shape, b's shape, offs, m_valid)
    "contiguous": ((64, 32), (4, 32, 16), True, False),
    "masked": ((4, 8, 32), (4, 32, 16), False, True),
    "batch": ((4, 8, 32), (4, 32, 16), False, False),
    "k_grouped": ((24, 64), (64, 16), True, False),
    "cols": ((4, 8, 32), (32, 40), True, False),
}


def transposed_shape(shape):
    return tuple(shape[:-2]) + (shape[-1], shape[-2])


def case_args(name, dtype=BF16, grad=True, b_transposed=False):
    sa, sb, with_offs, with_m_valid = CASES[name]
    b = meta(*transposed_shape(sb), dtype=dtype, grad=grad).mT if b_transposed else meta(*sb, dtype=dtype, grad=grad)
    return (meta(*sa, dtype=dtype, grad=grad), b, sizes(4) if with_offs else None, sizes(4) if with_m_valid else None)


@pytest.mark.parametrize("name", list(CASES))
@pytest.mark.parametrize("dtype,out_dtype", [(BF16, None), (F16, None), (BF16, F32), (F16, F32), (F16, BF16)])
def test_opcheck_meta(name, dtype, out_dtype):
    """Schema, autograd registration, fake kernel and AOT autograd (forward and backward traced with
    dynamic shapes), on meta tensors."""
    a, b, offs, m_valid = case_args(name, dtype)
    kwargs = {"m_valid": m_valid} if out_dtype is None else {"m_valid": m_valid, "out_dtype": out_dtype}
    res = torch.library.opcheck(torch.ops.hgemm.grouped_mm, (a, b, offs), kwargs)
    assert set(res.values()) == {"SUCCESS"}


def test_opcheck_k_grouped_meta():
    args = (meta(32, 64, dtype=F16), meta(64, 16, dtype=F16), sizes(4))
    assert set(torch.library.opcheck(torch.ops.hgemm._k_grouped_mm, args).values()) == {"SUCCESS"}


@pytest.mark.parametrize("name", list(CASES))
@pytest.mark.parametrize("b_transposed", [False, True])
@pytest.mark.parametrize("need", [(True, True), (True, False), (False, True)])
def test_meta_backward_shapes(name, b_transposed, need):
    """Each gradient has its input's shape and dtype, b's laid out like b (a transposed view gets a
    transposed gradient: row-major in b's storage); only the gradients asked for are computed."""
    a, b, offs, m_valid = case_args(name, F16, grad=False)
    a.requires_grad_(need[0])
    leaf_b = (meta(*transposed_shape(b.shape), dtype=F16) if b_transposed else b).requires_grad_(need[1])
    b = leaf_b.mT if b_transposed else leaf_b
    c = hgemm.grouped_mm(a, b, offs, m_valid=m_valid, out_dtype=F32)
    assert c.requires_grad and c.dtype == F32
    c.backward(torch.empty_like(c))
    assert (a.grad is not None) == need[0] and (leaf_b.grad is not None) == need[1]
    if need[0]:
        assert a.grad.shape == a.shape and a.grad.dtype == F16
    if need[1]:
        assert leaf_b.grad.shape == leaf_b.shape and leaf_b.grad.dtype == F16
        assert leaf_b.grad.stride() == leaf_b.stride()


@pytest.mark.parametrize("backend", ["eager", "aot_eager"])
@pytest.mark.parametrize("name", list(CASES))
def test_compile_fullgraph_traces_on_meta(backend, name):
    """Dynamo traces hgemm.grouped_mm without a graph break (fake kernels), and AOT autograd gets the
    backward (for the contiguous layout through _k_grouped_mm), without a GPU."""
    def f(a, b, offs, m_valid):
        return hgemm.grouped_mm(a, b, offs, m_valid=m_valid, out_dtype="f32").relu() * 2

    torch._dynamo.reset()
    a, b, offs, m_valid = case_args(name)
    c = torch.compile(f, fullgraph=True, backend=backend)(a, b, offs, m_valid)
    assert c.dtype == F32 and c.requires_grad
    c.sum().backward()
    assert a.grad.shape == a.shape and b.grad.shape == b.shape and b.grad.dtype == BF16


def test_inductor_lowers_the_operator():
    """Inductor compiles a graph holding hgemm::grouped_mm (a fallback kernel): on CPU tensors the
    compiled code reaches the operator's CPU kernel, whose TypeError shows that lowering succeeded."""
    def f(a, b, offs):
        return torch.ops.hgemm.grouped_mm(a, b, offs).relu() * 2

    torch._dynamo.reset()
    a, b = torch.ones(8, 16, dtype=BF16, requires_grad=True), torch.ones(2, 16, 4, dtype=BF16, requires_grad=True)
    with pytest.raises(TypeError, match="argument 'a': expected an array in CUDA memory"):
        torch.compile(f, fullgraph=True, backend="inductor")(a, b, torch.tensor([3, 8], dtype=I32))


# ---- the algebra of the forms, on the CPU ----
# The K-grouped and cols forms run on the two launches of the other forms, through transposes; here
# those launches are float64 loops on CPU tensors (the CUDA ones are tested below), so that the
# transposes, the zeroed rows and the gradients' shapes are checked without a GPU.

def rows_on_cpu(a, b, offs, bias=None, out_dtype=None):
    """The rows form as the kernel computes it: offsets clamped to [0, rows] and nondecreasing,
    NaN in the rows no group writes."""
    out = torch.full((a.shape[0], b.shape[2]), float("nan"), dtype=torch.float64)
    end = 0
    for g, size in enumerate(offs.tolist()):
        start, end = end, max(end, min(max(size, 0), a.shape[0]))
        out[start:end] = a[start:end].double() @ b[g].double()
    return out


def k_on_cpu(a, b, offs):
    out = torch.zeros((offs.shape[0], a.shape[0], b.shape[1]), dtype=torch.float64)
    end = 0
    for g, size in enumerate(offs.tolist()):
        start, end = end, max(end, min(max(size, 0), a.shape[1]))
        out[g] = a[:, start:end].double() @ b[start:end].double()
    return out


def cpu_offsets(sizes):
    return torch.tensor(sizes, dtype=torch.int64).cumsum(0).to(I32)


def backward_on_cpu(form, a, b, offs, grad):
    from types import SimpleNamespace

    ctx = SimpleNamespace(saved_tensors=(a, b, offs, None), needs_input_grad=(True, True) + (False,) * 4,
                          dtype=torch.float64, form=form, a_shape=tuple(a.shape), b_shape=tuple(b.shape),
                          a_transposed=False, b_transposed=False)
    return hgemm.torch_ops._grouped_backward(ctx, grad)[:2]


@pytest.fixture
def launches_on_cpu(monkeypatch):
    monkeypatch.setattr(hgemm.torch_ops, "_rows_op", rows_on_cpu)
    monkeypatch.setattr(hgemm.torch_ops, "_k_op", k_on_cpu)


def test_cols_form_is_the_transposed_rows_form(launches_on_cpu):
    sizes, m, k, spare = [5, 0, 9, 3], 6, 7, 2
    a, b = torch.randn(4, m, k, dtype=torch.float64), torch.randn(k, sum(sizes) + spare, dtype=torch.float64)
    out = hgemm.torch_ops._cols_via_rows(a, b, cpu_offsets(sizes), torch.float64, rows_on_cpu)
    want, _, _ = cols_reference(a, b, sizes)
    assert out.shape == (m, sum(sizes) + spare) and out.is_contiguous()
    assert torch.allclose(out[:, :sum(sizes)], want[:, :sum(sizes)])


@pytest.mark.parametrize("sizes", [[5, 0, 9, 3], [0, 0, 4], [6]])
def test_cols_form_gradients(launches_on_cpu, sizes):
    m, k, spare = 6, 7, 2
    a, b = torch.randn(len(sizes), m, k, dtype=torch.float64), torch.randn(k, sum(sizes) + spare, dtype=torch.float64)
    grad = torch.randn(m, sum(sizes) + spare, dtype=torch.float64)
    da, db = backward_on_cpu("cols", a, b, cpu_offsets(sizes), grad)
    _, want_da, want_db = cols_reference(a, b, sizes, grad)
    assert da.shape == a.shape and torch.allclose(da, want_da)
    assert db.shape == b.shape and torch.allclose(db, want_db)  # zeros past the last group


@pytest.mark.parametrize("sizes", [[5, 0, 9, 3], [0, 0, 4], [6]])
def test_k_grouped_form_gradients(launches_on_cpu, sizes):
    m, n, spare = 6, 7, 2
    a, b = torch.randn(m, sum(sizes) + spare, dtype=torch.float64), torch.randn(sum(sizes) + spare, n, dtype=torch.float64)
    grad = torch.randn(len(sizes), m, n, dtype=torch.float64)
    da, db = backward_on_cpu("k", a, b, cpu_offsets(sizes), grad)
    _, want_da, want_db = k_grouped_reference(a, b, sizes, grad)
    assert da.shape == a.shape and torch.allclose(da, want_da)
    assert db.shape == b.shape and torch.allclose(db, want_db)


def test_no_groups_give_zero_gradients(launches_on_cpu):
    offs = torch.zeros(0, dtype=I32)
    a, b = torch.randn(6, 9, dtype=torch.float64), torch.randn(9, 7, dtype=torch.float64)
    da, db = backward_on_cpu("k", a, b, offs, torch.randn(0, 6, 7, dtype=torch.float64))
    assert da.shape == a.shape and db.shape == b.shape and not da.any() and not db.any()
    a3, b2 = torch.randn(0, 6, 9, dtype=torch.float64), torch.randn(9, 5, dtype=torch.float64)
    da, db = backward_on_cpu("cols", a3, b2, offs, torch.randn(6, 5, dtype=torch.float64))
    assert da.shape == a3.shape and db.shape == b2.shape and not db.any()


# ---- GPU ----
# Against float32 torch.mm per group on the same 16-bit inputs. The bound is test_torch_ops.py's:
# twice the output's rounding u (2^-11 float16, 2^-8 bfloat16) plus k·2^-22 for the f32 sum plus one
# more u for the incoming gradient; float32 outputs against float64, (2k + 10)·2^-24.

def rand(*shape, dtype=F16, requires_grad=False):
    return ((torch.rand(*shape, device="cuda") * 2 - 1).to(dtype)).requires_grad_(requires_grad)


def rel_error(got, want):
    return (got.double() - want.double()).norm().item() / max(want.double().norm().item(), 1e-30)


def tol(k, dtype=F16):
    u = 2.0 ** -11 if dtype == F16 else 2.0 ** -8
    return 2 * u + k * 2.0 ** -22 + u


def tol_f32(k):
    return (2 * k + 10) * 2.0 ** -24


def offsets(rows):
    return torch.tensor(rows, dtype=torch.int64).cumsum(0).to(I32).cuda()


def loop_reference(a, b, rows, g_out=None, dtype=torch.float32):
    """The per-group torch.mm loop in `dtype`: the output rows of the groups and, for the incoming
    gradient g_out, both gradients (a's rows in no group get zeros)."""
    af = a.detach().to(dtype).requires_grad_()
    bf = b.detach().to(dtype).requires_grad_()
    start, parts = 0, []
    for g, r in enumerate(rows):
        parts.append(af[start:start + r] @ bf[g])
        start += r
    c = torch.cat(parts)
    if g_out is None:
        return c.detach(), None, None
    c.backward(g_out[:start].to(dtype))
    return c.detach(), af.grad, bf.grad


ROWS = [  # uneven, with empty groups (first, middle, last), a group of one row, and tile edges
    [37, 0, 129, 5, 0, 64],
    [0, 1, 300, 0],
    [16, 0, 16, 16, 0, 16, 0, 0],
]


@cuda
@pytest.mark.parametrize("rows", ROWS)
@pytest.mark.parametrize("dtype", [F16, BF16])
@pytest.mark.parametrize("b_layout", ["rows", "cols"])
def test_contiguous_forward_and_gradients(rows, dtype, b_layout):
    k, n, spare = 96, 72, 7  # spare rows past offs[-1]: not written forward, zero gradient
    total = sum(rows)
    a = rand(total + spare, k, dtype=dtype, requires_grad=True)
    b = (rand(len(rows), n, k, dtype=dtype).mT if b_layout == "cols" else rand(len(rows), k, n, dtype=dtype))
    b.requires_grad_()
    c = hgemm.grouped_mm(a, b, offsets(rows))
    assert c.shape == (total + spare, n) and c.dtype == dtype
    g = rand(*c.shape, dtype=dtype)
    c.backward(g)
    c32, da32, db32 = loop_reference(a, b, rows, g)
    assert rel_error(c.detach()[:total], c32) < tol(k, dtype)
    assert rel_error(a.grad[:total], da32[:total]) < tol(n, dtype)
    assert torch.all(a.grad[total:] == 0)
    assert b.grad.shape == b.shape and rel_error(b.grad, db32) < tol(max(rows), dtype)
    for gi, r in enumerate(rows):
        if r == 0:
            assert torch.all(b.grad[gi] == 0), gi


@cuda
@pytest.mark.parametrize("dtype", [F16, BF16])
def test_out_dtype_float32_against_float64(dtype):
    rows, k, n = [50, 0, 77, 3], 200, 40
    a, b = rand(sum(rows), k, dtype=dtype, requires_grad=True), rand(4, k, n, dtype=dtype, requires_grad=True)
    c = hgemm.grouped_mm(a, b, offsets(rows), out_dtype=torch.float32)
    assert c.dtype == F32
    g = rand(*c.shape, dtype=dtype).float()
    c.backward(g)
    c64, da64, db64 = loop_reference(a, b, rows, g, torch.float64)
    assert rel_error(c.detach(), c64) < tol_f32(k)
    assert a.grad.dtype == dtype and rel_error(a.grad, da64) < tol(n, dtype)
    assert b.grad.dtype == dtype and rel_error(b.grad, db64) < tol(max(rows), dtype)


@cuda
@pytest.mark.parametrize("dtype", [F16, BF16])
def test_odd_sizes_and_unaligned_operands(dtype):
    """K and N not multiples of 8 and a at an odd element: hgemm repacks what TMA cannot read, and the
    weight gradient copies what torch._grouped_mm cannot read."""
    rows, k, n = [9, 0, 20], 37, 13
    a = rand(sum(rows) * k + 1, dtype=dtype)[1:].view(sum(rows), k).requires_grad_()
    b = rand(3, k, n, dtype=dtype, requires_grad=True)
    c = hgemm.grouped_mm(a, b, offsets(rows))
    g = rand(*c.shape, dtype=dtype)
    c.backward(g)
    c32, da32, db32 = loop_reference(a, b, rows, g)
    assert rel_error(c.detach(), c32) < tol(k, dtype)
    assert rel_error(a.grad, da32) < tol(n, dtype) and rel_error(b.grad, db32) < tol(20, dtype)


@cuda
@pytest.mark.parametrize("dtype", [F16, BF16])
def test_matches_torch_grouped_mm(dtype):
    """The same sizes as torch._grouped_mm (bfloat16 on its device kernel, float16 its fallback)."""
    rows = grouped_rows(8, 1024)
    a, b = rand(1024, 256, dtype=dtype), rand(8, 128, 256, dtype=dtype).mT
    offs = offsets(rows)
    ours = hgemm.grouped_mm(a, b, offs)
    try:
        theirs = torch._grouped_mm(a, b, offs=offs)
    except RuntimeError as e:  # a torch without this dtype
        pytest.skip(f"torch._grouped_mm: {e}")
    want, _, _ = loop_reference(a, b, rows)
    assert rel_error(ours, want) < tol(256, dtype)
    assert rel_error(ours, theirs) < 2 * tol(256, dtype)


@cuda
@pytest.mark.parametrize("dtype", [F16, BF16])
@pytest.mark.parametrize("masked", [False, True])
def test_batch_and_masked_forward_and_gradients(dtype, masked):
    g_count, m, k, n = 5, 70, 48, 40
    m_valid = torch.tensor([70, 0, 33, 1, 64], dtype=I32, device="cuda") if masked else None
    a, b = rand(g_count, m, k, dtype=dtype, requires_grad=True), rand(g_count, k, n, dtype=dtype, requires_grad=True)
    if masked:
        with torch.no_grad():
            a[1] = float("nan")  # an empty group's rows take no part (its gradient and b's stay finite)
    c = hgemm.grouped_mm(a, b, m_valid=m_valid)
    assert c.shape == (g_count, m, n)
    g = rand(*c.shape, dtype=dtype)
    c.backward(g)
    valid = [m] * g_count if m_valid is None else m_valid.tolist()
    for i, r in enumerate(valid):
        if r == 0:
            assert torch.all(a.grad[i] == 0) and torch.all(b.grad[i] == 0)
            continue
        ai, bi = a.detach()[i, :r].float().requires_grad_(), b.detach()[i].float().requires_grad_()
        ci = ai @ bi
        ci.backward(g[i, :r].float())
        assert rel_error(c.detach()[i, :r], ci.detach()) < tol(k, dtype), i
        assert rel_error(a.grad[i, :r], ai.grad) < tol(n, dtype), i
        assert torch.all(a.grad[i, r:] == 0), i
        assert rel_error(b.grad[i], bi.grad) < tol(r, dtype), i


@cuda
def test_no_grad_direct_path_and_out():
    rows = [10, 0, 22]
    a, b = rand(32, 16), rand(3, 16, 8)
    out = torch.full((32, 8), float("nan"), device="cuda", dtype=F32)
    assert hgemm.grouped_mm(a, b, offsets(rows), out=out, out_dtype="f32") is out
    want, _, _ = loop_reference(a, b, rows)
    assert rel_error(out, want) < tol_f32(16)
    with pytest.raises(TypeError, match="out_dtype"):
        hgemm.grouped_mm(a, b, offsets(rows), out=out, out_dtype="f16")


@cuda
def test_runs_on_the_current_torch_stream():
    rows = [100, 0, 156]
    a, b = rand(256, 128), rand(3, 128, 64)
    offs = offsets(rows)
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        c = torch.ops.hgemm.grouped_mm(a, b, offs)
    s.synchronize()
    assert rel_error(c, loop_reference(a, b, rows)[0]) < tol(128)


@cuda
@pytest.mark.parametrize("dtype", [F16, BF16])
def test_cuda_graph_replays_with_new_offsets(dtype):
    """Captured once (forward and backward: the weight gradient is hgemm's K-grouped layout, on the
    device), replayed with new group sizes written into the same offs: each replay computes its own
    groups, without a synchronisation."""
    total, k, n = 256, 64, 48
    a = rand(total, k, dtype=dtype, requires_grad=True)
    b = rand(4, k, n, dtype=dtype, requires_grad=True)
    g = rand(total, n, dtype=dtype)
    offs = offsets([64, 64, 64, 64])
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):  # warm up outside capture
        for _ in range(2):
            c = hgemm.grouped_mm(a, b, offs)
            da, db = torch.autograd.grad(c, [a, b], g)
    torch.cuda.current_stream().wait_stream(s)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        c = hgemm.grouped_mm(a, b, offs)
        da, db = torch.autograd.grad(c, [a, b], g)
    for rows in ([0, 100, 3, 153], [256, 0, 0, 0], [16, 0, 16, 200]):
        offs.copy_(offsets(rows))
        graph.replay()
        torch.cuda.synchronize()
        want, da32, db32 = loop_reference(a, b, rows, g)
        assert rel_error(c[:sum(rows)], want) < tol(k, dtype), rows
        assert rel_error(da, da32) < tol(n, dtype) and rel_error(db, db32) < tol(total, dtype), rows


@cuda
@pytest.mark.parametrize("dtype", [F16, BF16])
@pytest.mark.parametrize("out_dtype", [None, F32])
@pytest.mark.parametrize("a_layout", ["cols", "rows"])
@pytest.mark.parametrize("b_layout", ["rows", "cols"])
def test_k_grouped_product(dtype, out_dtype, a_layout, b_layout):
    """grouped_mm's 2-D × 2-D form (the weight gradient): out[g] = a[:, s_g:e_g] · b[s_g:e_g, :] for
    uneven slices of K, empty ones included (zeros), ending inside a 64-deep slice; a read in place
    when column-major (x.t()), b when row-major; the other layouts copied. Tolerance: the f16/bf16
    rounding of the output plus f32 accumulation over the group's depth (tol), or the f32 bound."""
    sizes, m, n = [0, 130, 1, 0, 257, 64, 127, 0], 72, 136
    depth = sum(sizes) + 5  # k past the last offset: read by no group
    a = rand(depth, m, dtype=dtype).t() if a_layout == "cols" else rand(m, depth, dtype=dtype)
    b = rand(n, depth, dtype=dtype).t() if b_layout == "cols" else rand(depth, n, dtype=dtype)
    out = hgemm.grouped_mm(a, b, offsets(sizes), out_dtype=out_dtype)
    assert out.shape == (len(sizes), m, n) and out.dtype == (dtype if out_dtype is None else out_dtype)
    start = 0
    for g, size in enumerate(sizes):
        want = a[:, start:start + size].double() @ b[start:start + size].double()
        if size == 0:
            assert torch.all(out[g] == 0), g
        else:
            bound = tol_f32(size) if out_dtype is F32 else tol(size, dtype)
            assert rel_error(out[g], want) < bound, (g, size)
        start += size


def k_grouped_reference(a, b, sizes, g_out=None, dtype=torch.float64):
    """out[g] = a[:, s_g:e_g]·b[s_g:e_g] per group in `dtype`, and for g_out both gradients (the
    columns of a and rows of b in no group get zeros)."""
    af, bf = (x.detach().to(dtype).requires_grad_() for x in (a, b))
    parts, start = [], 0
    for size in sizes:
        parts.append(af[:, start:start + size] @ bf[start:start + size])
        start += size
    out = torch.stack(parts)
    if g_out is None:
        return out.detach(), None, None
    out.backward(g_out.to(dtype))
    return out.detach(), af.grad, bf.grad


def cols_reference(a, b, sizes, g_out=None, dtype=torch.float64):
    """out[:, s_g:e_g] = a[g]·b[:, s_g:e_g] in `dtype` (the columns past the groups: zeros), and for
    g_out both gradients."""
    af, bf = (x.detach().to(dtype).requires_grad_() for x in (a, b))
    parts, start = [], 0
    for g, size in enumerate(sizes):
        parts.append(af[g] @ bf[:, start:start + size])
        start += size
    out = torch.cat(parts + [af.new_zeros(af.shape[1], bf.shape[1] - start)], dim=1)
    if g_out is None:
        return out.detach(), None, None
    out[:, :start].backward(g_out[:, :start].to(dtype))
    return out.detach(), af.grad, bf.grad


@cuda
@pytest.mark.parametrize("dtype", [F16, BF16])
@pytest.mark.parametrize("a_layout", ["cols", "rows"])
def test_k_grouped_gradients(dtype, a_layout):
    """The K-grouped form with autograd: da[:, s_g:e_g] = dD_g·b[s_g:e_g]ᵀ and db[s_g:e_g] =
    a[:, s_g:e_g]ᵀ·dD_g (the rows form), zeros past the last group; empty groups included."""
    sizes, m, n = [0, 130, 1, 0, 257, 64], 72, 136
    depth = sum(sizes) + 5
    a = (rand(depth, m, dtype=dtype).t() if a_layout == "cols" else rand(m, depth, dtype=dtype)).requires_grad_()
    b = rand(depth, n, dtype=dtype, requires_grad=True)
    out = hgemm.grouped_mm(a, b, offsets(sizes))
    g = rand(*out.shape, dtype=dtype)
    out.backward(g)
    want, da, db = k_grouped_reference(a, b, sizes, g)
    assert rel_error(out.detach(), want) < tol(max(sizes), dtype)
    assert a.grad.shape == a.shape and rel_error(a.grad, da) < tol(n, dtype)
    assert b.grad.shape == b.shape and rel_error(b.grad, db) < tol(m, dtype)
    assert torch.all(a.grad[:, sum(sizes):] == 0) and torch.all(b.grad[sum(sizes):] == 0)


@cuda
@pytest.mark.parametrize("dtype", [F16, BF16])
@pytest.mark.parametrize("b_layout", ["rows", "cols"])
@pytest.mark.parametrize("out_dtype", [None, F32])
def test_cols_form_forward_and_gradients(dtype, b_layout, out_dtype):
    """The 3-D × 2-D form (groups along b's columns): out[:, s_g:e_g] = a[g]·b[:, s_g:e_g], M×ΣN,
    with uneven and empty groups and columns past the last group (not written, zero gradient);
    da_g = dD[:, g]·b[:, g]ᵀ (the K-grouped layout), db[:, g] = a_gᵀ·dD[:, g] (the rows form)."""
    sizes, m, k = [37, 0, 129, 5, 0, 64], 72, 96
    total, spare = sum(sizes), 7
    a = rand(len(sizes), m, k, dtype=dtype, requires_grad=True)
    b = (rand(total + spare, k, dtype=dtype).t() if b_layout == "cols" else rand(k, total + spare, dtype=dtype))
    b.requires_grad_()
    out = hgemm.grouped_mm(a, b, offsets(sizes), out_dtype=out_dtype)
    assert out.shape == (m, total + spare) and out.dtype == (dtype if out_dtype is None else out_dtype)
    assert out.is_contiguous()
    g = rand(*out.shape, dtype=dtype).to(out.dtype)
    out.backward(g)
    want, da, db = cols_reference(a, b, sizes, g)
    bound = tol_f32(k) if out_dtype is F32 else tol(k, dtype)
    assert rel_error(out.detach()[:, :total], want[:, :total]) < bound
    assert a.grad.shape == a.shape and rel_error(a.grad, da) < tol(max(sizes), dtype)
    for gi, size in enumerate(sizes):
        if size == 0:
            assert torch.all(a.grad[gi] == 0), gi
    assert b.grad.shape == b.shape and rel_error(b.grad, db) < tol(m, dtype)
    assert torch.all(b.grad[:, total:] == 0)
    with torch.no_grad():  # the direct call, and out= (a copy of the operator's result)
        into = torch.full_like(out, float("nan"))
        assert hgemm.grouped_mm(a, b, offsets(sizes), out_dtype=out_dtype, out=into) is into
        assert torch.equal(into[:, :total], out.detach()[:, :total])


@cuda
@pytest.mark.parametrize("dtype", [F16, BF16])
def test_every_form_matches_torch_grouped_mm(dtype):
    """torch._grouped_mm's four forms with its positional arguments, against torch's own kernel."""
    sizes = grouped_rows(4, 256)
    offs = offsets(sizes)
    x, w = rand(256, 128, dtype=dtype), rand(4, 128, 96, dtype=dtype)
    x3, w2 = rand(4, 64, 128, dtype=dtype), rand(128, 256, dtype=dtype)
    kx, ky = rand(256, 48, dtype=dtype).t(), rand(256, 80, dtype=dtype)
    forms = {"2-D x 3-D": (x, w, offs), "3-D x 3-D": (x3, w, None), "3-D x 2-D": (x3, w2, offs),
             "2-D x 2-D": (kx, ky, offs)}
    for name, args in forms.items():
        ours = torch.ops.hgemm.grouped_mm(*args)
        try:
            theirs = torch._grouped_mm(*args)
        except RuntimeError as e:  # a torch without this dtype or form
            pytest.skip(f"torch._grouped_mm ({name}): {e}")
        assert ours.shape == theirs.shape, name
        assert rel_error(ours, theirs) < 2 * tol(256, dtype), name


@cuda
def test_torch_compile_fullgraph():
    def f(a, b, offs):
        return hgemm.grouped_mm(a, b, offs).float().relu()

    torch._dynamo.reset()
    rows = [40, 0, 88]
    a, b = rand(128, 64, dtype=BF16, requires_grad=True), rand(3, 64, 32, dtype=BF16, requires_grad=True)
    got = torch.compile(f, fullgraph=True)(a, b, offsets(rows))
    want, _, _ = loop_reference(a, b, rows)
    assert rel_error(got, want.relu()) < tol(64, BF16)
    got.sum().backward()
    assert a.grad.shape == a.shape and b.grad.shape == b.shape


@cuda
@pytest.mark.parametrize("name", list(CASES))
def test_opcheck_cuda(name):
    """Real and fake kernels agree and the gradients check (every row in a group: the rows past the
    groups are not written, so two runs would differ there)."""
    dtype = BF16
    sa, sb, with_offs, with_m_valid = CASES[name]
    a, b = rand(*sa, dtype=dtype, requires_grad=True), rand(*sb, dtype=dtype, requires_grad=True)
    offs = offsets([16, 0, 40, 8]) if with_offs else None
    m_valid = torch.full((4,), sa[1] if len(sa) == 3 else 0, dtype=I32, device="cuda") if with_m_valid else None
    torch.library.opcheck(torch.ops.hgemm.grouped_mm, (a, b, offs), {"m_valid": m_valid})
