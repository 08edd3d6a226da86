# SPDX-License-Identifier: Apache-2.0
"""hgemm.matmul's types: bfloat16 inputs, and float16, bfloat16 or float32 outputs (out_dtype, or
an out= of that dtype). The checks and the library call the binding describes, on torch CPU
tensors; the products on a GPU against float64 (skipped without one).

Tolerances (relative Frobenius error against float64 on the same inputs) are the library's for
f32 accumulation (src/reference/tolerance.h): 2·u + (2K + 8)·2^-24, with u the output's rounding,
2^-11 for float16, 2^-8 for bfloat16 and 2^-24 for float32. For a float32 output the bound is
(2K + 10)·2^-24; a float16 rounding anywhere on the way errs by about 2^-12 of the result, which
exceeds it for every K used here (≤ 512)."""
import re
import pytest

torch = pytest.importorskip("torch")

import hgemm  # noqa: E402
from hgemm._hgemm import describe_gemm  # noqa: E402

cuda = pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device")
F16, BF16, F32 = torch.float16, torch.bfloat16, torch.float32
NAME = {F16: "f16", BF16: "bf16", F32: "f32"}


# ---- CPU: the dtype checks, and the call the binding makes ----

@pytest.mark.parametrize("dtype", [F16, BF16])
@pytest.mark.parametrize("out_dtype", [F16, BF16, F32])
def test_described_call_carries_each_operand_type(dtype, out_dtype):
    """Through DLPack: a's and b's dtype become A's and B's type, out's becomes C's and D's (out is
    both, updated in place), also when a transposed out swaps A and B."""
    a, b = torch.ones(5, 7, dtype=dtype), torch.ones(7, 6, dtype=dtype)
    out = torch.empty(5, 6, dtype=out_dtype)
    call = describe_gemm(a, b, out)
    assert (call["a_type"], call["b_type"]) == (NAME[dtype], NAME[dtype])
    assert (call["c_type"], call["d_type"]) == (NAME[out_dtype], NAME[out_dtype])
    assert call["c"] == call["d"] == out.data_ptr() and call["ldc"] == call["ldd"] == 6
    assert (call["op_a"], call["op_b"], call["m"], call["n"], call["k"]) == ("n", "n", 5, 6, 7)

    storage = torch.empty(6, 5, dtype=out_dtype)
    call = describe_gemm(a, b, storage.T)  # outᵀ = bᵀ·aᵀ into the storage
    assert (call["a"], call["b"], call["d"]) == (b.data_ptr(), a.data_ptr(), storage.data_ptr())
    assert (call["op_a"], call["op_b"], call["m"], call["n"], call["ldd"]) == ("t", "t", 6, 5, 5)
    assert (call["a_type"], call["b_type"], call["d_type"]) == (NAME[dtype], NAME[dtype], NAME[out_dtype])


def test_described_batch_times_a_shared_matrix_is_one_product_in_any_type():
    a, b = torch.ones(4, 5, 7, dtype=BF16), torch.ones(7, 6, dtype=BF16)
    call = describe_gemm(a, b, torch.empty(4, 5, 6, dtype=F32))
    assert (call["batch"], call["m"], call["lda"], call["ldd"]) == (1, 20, 7, 6)
    assert (call["a_type"], call["d_type"]) == ("bf16", "f32")
    call = describe_gemm(a, b.expand(4, 7, 6), torch.empty(4, 5, 6, dtype=F32))  # b repeated by stride 0
    assert (call["batch"], call["stride_b"], call["stride_d"]) == (1, 0, 0)


def test_mixed_input_dtypes_are_refused():
    a16, b16 = torch.ones(4, 3, dtype=F16), torch.ones(3, 5, dtype=F16)
    with pytest.raises(TypeError, match="argument 'b': expected a's dtype float16, got bfloat16"):
        hgemm.matmul(a16, b16.bfloat16())  # the torch fast path
    with pytest.raises(TypeError, match="a is bfloat16 but b is float16: both must have one dtype"):
        describe_gemm(a16.bfloat16(), b16, torch.empty(4, 5, dtype=F32))  # DLPack


def test_other_dtypes_are_refused_naming_the_dtype():
    a, b = torch.ones(4, 3, dtype=BF16), torch.ones(3, 5, dtype=BF16)
    cases = [((a.float(), b), r"argument 'a': expected dtype float16 or bfloat16, got float32"),
             ((a, b.double()), r"argument 'b': expected dtype float16 or bfloat16, got float64"),
             ((a.to(torch.int8), b), r"argument 'a': expected dtype float16 or bfloat16, got int8")]
    for (x, y), message in cases:
        name, allowed, given = re.match(r"argument '(\w+)': expected dtype (.*), got (\w+)", message).groups()
        native = rf"{name} must have dtype {allowed} \({given} given\)"
        with pytest.raises(TypeError, match=message):
            hgemm.matmul(x, y)  # the torch fast path
        with pytest.raises(TypeError, match=native):  # the native layer's own check
            describe_gemm(x, y, torch.empty(4, 5, dtype=F32))  # DLPack
    for out in (torch.empty(4, 5, dtype=torch.float64), torch.empty(4, 5, dtype=torch.int32)):
        given = str(out.dtype)[6:]
        message = rf"argument 'out': expected dtype float16, bfloat16 or float32, got {given}"
        with pytest.raises(TypeError, match=message):
            hgemm.matmul(a, b, out=out)
        with pytest.raises(TypeError, match=rf"out must have dtype float16, bfloat16 or float32 \({given} given\)"):
            describe_gemm(a, b, out)


def test_f16_accumulation_with_bfloat16_or_float32_is_refused():
    a, b = torch.ones(4, 3, dtype=F16), torch.ones(3, 5, dtype=F16)
    for x, y, kwargs in ((a.bfloat16(), b.bfloat16(), {}), (a, b, {"out_dtype": "f32"}),
                         (a, b, {"out": torch.empty(4, 5, dtype=BF16)})):
        with pytest.raises(TypeError, match="argument 'accum': expected 'f32' for .*'f16' needs float16 a, b and out"):
            hgemm.matmul(x, y, accum="f16", **kwargs)
    with pytest.raises(TypeError, match="accum='f16'"):
        describe_gemm(a.bfloat16(), b.bfloat16(), torch.empty(4, 5, dtype=BF16), accum="f16")


def test_bfloat16_and_float32_pass_the_checks_up_to_the_device():
    """Host tensors of allowed types get as far as the device check."""
    a, b = torch.ones(4, 3, dtype=BF16), torch.ones(3, 5, dtype=BF16)
    for kwargs in ({}, {"out_dtype": "f32"}, {"out_dtype": F16}, {"out": torch.empty(4, 5, dtype=F32)},
                   {"out": torch.empty(4, 5, dtype=F32), "out_dtype": torch.float32}):
        with pytest.raises(TypeError, match="CUDA"):
            hgemm.matmul(a, b, **kwargs)


def test_out_and_out_dtype_must_agree():
    a, b = torch.ones(4, 3, dtype=BF16), torch.ones(3, 5, dtype=BF16)
    with pytest.raises(TypeError, match=r"argument 'out': expected dtype bfloat16 \(out_dtype\), got float32"):
        hgemm.matmul(a, b, out=torch.empty(4, 5, dtype=F32), out_dtype="bf16")
    with pytest.raises(TypeError, match=r"argument 'out': expected dtype float32 \(out_dtype\), got bfloat16"):
        hgemm.matmul(a, b, out=torch.empty(4, 5, dtype=BF16), out_dtype=F32)
    with pytest.raises(TypeError, match="argument 'out_dtype': expected"):
        hgemm.matmul(a, b, out=torch.empty(4, 5, dtype=F32), out_dtype=torch.float64)


# ---- GPU ----

U = {F16: 2.0 ** -11, BF16: 2.0 ** -8, F32: 2.0 ** -24}


def tol(out_dtype, k):
    return 2 * U[out_dtype] + (2 * k + 8) * 2.0 ** -24


def rand(*shape, dtype):
    return (torch.rand(*shape, device="cuda") * 2 - 1).to(dtype)


def integers(*shape, dtype):
    """Integers in [-16, 16]: exact in float16 and bfloat16, products up to 256."""
    return torch.randint(-16, 17, shape, device="cuda").to(dtype)


def rel_error(got, want):
    return (got.double() - want).norm().item() / max(want.norm().item(), 1e-300)


# (a's shape, b's shape, layout): 2-D, a batch times a shared matrix (one (batch·M)×K product),
# two batches, and a shared matrix times a batch of transposed views (a strided batch).
CASES = {
    "2d": ((129, 131), (131, 127), "rows"),
    "2d transposed views": ((129, 131), (131, 127), "cols"),
    "batch x shared": ((3, 65, 96), (96, 40), "rows"),
    "batch x batch": ((3, 33, 72), (3, 72, 50), "rows"),
    "shared x batch, transposed": ((40, 72), (3, 72, 50), "cols"),
}


def operand(shape, layout, dtype, make=rand):
    if layout == "cols":
        return make(*shape[:-2], shape[-1], shape[-2], dtype=dtype).mT
    return make(*shape, dtype=dtype)


@cuda
@pytest.mark.parametrize("case", list(CASES))
@pytest.mark.parametrize("dtype", [F16, BF16])
@pytest.mark.parametrize("out_dtype", [None, F16, BF16, F32])
def test_every_type_pair_matches_fp64(case, dtype, out_dtype):
    """Each input type with each output type, through the torch fast path: the output has the
    asked dtype and the product is within that dtype's bound of float64."""
    sa, sb, layout = CASES[case]
    a, b = operand(sa, layout, dtype), operand(sb, layout, dtype)
    c = hgemm.matmul(a, b, out_dtype=out_dtype)
    want = torch.matmul(a.double(), b.double())
    assert c.dtype == (dtype if out_dtype is None else out_dtype) and c.shape == want.shape
    assert rel_error(c, want) <= tol(c.dtype, sa[-1])


@cuda
@pytest.mark.parametrize("dtype", [F16, BF16])
@pytest.mark.parametrize("case", ["2d", "batch x shared", "shared x batch, transposed"])
def test_float32_output_is_exact_on_integers(dtype, case):
    """f32 accumulation and a float32 output: every partial sum of these integer products is an
    integer below 2^24, so the result must equal the exact one bit for bit, where a 16-bit output
    (or any 16-bit step) would round the many results beyond 256 or 2048."""
    sa, sb, layout = CASES[case]
    k = 512
    sa, sb = sa[:-1] + (k,), sb[:-2] + (k, sb[-1])
    a, b = operand(sa, layout, dtype, integers), operand(sb, layout, dtype, integers)
    want = torch.matmul(a.double(), b.double()).float()
    assert not torch.equal(want.to(dtype).float(), want)  # a 16-bit rounding would show
    got = hgemm.matmul(a, b, out_dtype="f32")
    assert got.dtype == F32 and torch.equal(got, want)


@cuda
@pytest.mark.parametrize("dtype", [F16, BF16])
def test_out_float32_tensor_in_place(dtype):
    """out= a float32 tensor with padded rows: alpha·a·b + beta·out read and written in float32
    (exact on integers), the padding untouched; and a transposed float32 view, on random data."""
    m, n, k = 100, 90, 256
    a, b = integers(m, k, dtype=dtype), integers(k, n, dtype=dtype)
    big = torch.randint(-1000, 1000, (m, n + 3), device="cuda").float()
    out, padding = big[:, :n], big[:, n:].clone()
    c0 = out.double().clone()
    assert hgemm.matmul(a, b, out=out, alpha=2.0, beta=-1.0) is out
    assert torch.equal(out, (2 * (a.double() @ b.double()) - c0).float())
    assert torch.equal(big[:, n:], padding)

    a, b = rand(m, k, dtype=dtype), rand(k, n, dtype=dtype)
    storage = torch.randn(n, m, device="cuda")
    c0 = storage.T.double().clone()
    hgemm.matmul(a, b, out=storage.T, alpha=-1.5, beta=0.75, out_dtype=F32)
    want = -1.5 * (a.double() @ b.double()) + 0.75 * c0
    assert rel_error(storage.T, want) <= tol(F32, k)


@cuda
def test_fast_path_and_dlpack_path_agree_on_types():
    """The torch fast path (dtype codes) and DLPack give the same bits for bfloat16 in, float32 out."""
    from hgemm._hgemm import gemm as dlpack_gemm

    a, b = rand(129, 65, dtype=BF16).T.contiguous().T, rand(65, 127, dtype=BF16)
    fast = hgemm.matmul(a, b, out_dtype=F32)
    slow = torch.empty_like(fast)
    dlpack_gemm(a, b, slow, 1.0, 0.0, "f32", "auto", False, False, torch.cuda.current_stream().cuda_stream)
    torch.cuda.synchronize()
    assert fast.dtype == slow.dtype == F32 and torch.equal(fast, slow)


@cuda
def test_a_kernel_named_for_a_type_it_does_not_take_is_refused():
    """The ladder's rungs take float16 only: the library's Status::UnsupportedType becomes a
    TypeError naming the types, and nothing runs."""
    rung = next(k["id"] for k in hgemm.kernels() if k["in_types"] == ["f16"] and "nn" in k["ops"])
    a, b = rand(64, 64, dtype=BF16), rand(64, 64, dtype=BF16)
    with pytest.raises(TypeError, match="bf16"):
        hgemm.matmul(a, b, kernel_id=rung)
    with pytest.raises(TypeError, match="f32"):
        hgemm.matmul(a.half(), b.half(), kernel_id=rung, out_dtype=F32)


@cuda
@pytest.mark.parametrize("kernel", [k for k in hgemm.kernels() if "bf16" in k["in_types"]], ids=lambda k: k["id"])
def test_every_kernel_that_takes_bfloat16(kernel):
    """Each entry that takes bfloat16, named, with each output type it writes."""
    if torch.cuda.get_device_capability() < tuple(int(x) for x in kernel["min_arch"].split(".")):
        pytest.skip(f"{kernel['id']} needs compute capability {kernel['min_arch']}")
    m, n, k = 129, 136, 72  # leading dimensions multiples of 8: no entry refuses them for alignment
    a = rand(m, k, dtype=BF16)
    b = rand(k, n, dtype=BF16) if "nn" in kernel["ops"] else rand(n, k, dtype=BF16).T
    want = a.double() @ b.double()
    for out_type in kernel["out_types"]:
        out_dtype = {"f16": F16, "bf16": BF16, "f32": F32}[out_type]
        c = hgemm.matmul(a, b, kernel_id=kernel["id"], out_dtype=out_dtype)
        assert c.dtype == out_dtype
        assert rel_error(c, want) <= tol(out_dtype, k), (kernel["id"], out_type)


@cuda
def test_cupy_types_if_available():
    cupy = pytest.importorskip("cupy")
    a = cupy.random.uniform(-1, 1, (65, 33)).astype(cupy.float16)
    b = cupy.random.uniform(-1, 1, (33, 17)).astype(cupy.float16)
    c = hgemm.matmul(a, b, out_dtype="f32")
    assert isinstance(c, cupy.ndarray) and c.dtype == cupy.float32
    want = a.astype(cupy.float64) @ b.astype(cupy.float64)
    assert float(cupy.linalg.norm(c - want) / cupy.linalg.norm(want)) <= tol(F32, 33)
    assert hgemm.matmul(a, b).dtype == cupy.float16
    with pytest.raises(TypeError, match="cupy has no bfloat16"):
        hgemm.matmul(a, b, out_dtype="bf16")
