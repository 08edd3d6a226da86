"""The Python package without a GPU: import, kernels(), and every error path, on numpy arrays."""
import numpy as np
import pytest

import hgemm


def half(shape):
    return np.ones(shape, dtype=np.float16)


def test_kernels_lists_the_registry():
    ks = hgemm.kernels()
    ids = [k["id"] for k in ks]
    assert "cuda.naive" in ids and "cublas.acc32" in ids
    for k in ks:
        assert set(k) >= {"id", "family", "ladder", "summary", "min_arch", "ops", "accums", "baseline", "in_types",
                          "out_types"}
        assert k["ops"] and set(k["ops"]) <= {"nn", "nt", "tn", "tt"}
        assert k["accums"] and set(k["accums"]) <= {"f16", "f32"}
        assert "f16" in k["in_types"] and set(k["in_types"]) <= {"f16", "bf16"}
        assert "f16" in k["out_types"] and set(k["out_types"]) <= {"f16", "bf16", "f32"}
    hfma2 = next(k for k in ks if k["id"] == "cuda.t8x8_hfma2")
    assert hfma2["accums"] == ["f16"] and hfma2["in_types"] == ["f16"] and hfma2["out_types"] == ["f16"]
    cublas = next(k for k in ks if k["id"] == "cublas.acc32")
    assert cublas["in_types"] == ["f16", "bf16"] and cublas["out_types"] == ["f16", "bf16", "f32"]


def test_cpu_arrays_are_refused():
    with pytest.raises(TypeError, match="CUDA"):
        hgemm.matmul(half((4, 3)), half((3, 5)), out=half((4, 5)))


def test_wrong_dtype():
    """a and b take float16 or bfloat16, out also float32; the message names the dtype given. The
    dtypes are checked before the device, so these host arrays reach the checks."""
    with pytest.raises(TypeError, match=r"a must have dtype float16 or bfloat16 \(float32 given\)"):
        hgemm.matmul(np.ones((4, 3), np.float32), half((3, 5)), out=half((4, 5)))
    with pytest.raises(TypeError, match=r"b must have dtype float16 or bfloat16 \(int32 given\)"):
        hgemm.matmul(half((4, 3)), np.ones((3, 5), np.int32), out=half((4, 5)))
    with pytest.raises(TypeError, match=r"out must have dtype float16, bfloat16 or float32 \(float64 given\)"):
        hgemm.matmul(half((4, 3)), half((3, 5)), out=np.ones((4, 5)))
    with pytest.raises(TypeError, match=r"\(bool given\)"):
        hgemm.matmul(half((4, 3)), half((3, 5)), out=np.ones((4, 5), bool))


def test_float32_out_passes_the_dtype_checks():
    with pytest.raises(TypeError, match="CUDA"):  # refused only for being host memory
        hgemm.matmul(half((4, 3)), half((3, 5)), out=np.ones((4, 5), np.float32))


def test_f16_accumulation_needs_float16_everywhere():
    with pytest.raises(TypeError, match="accum='f16' needs float16 a, b and out"):
        hgemm.matmul(half((4, 3)), half((3, 5)), out=np.ones((4, 5), np.float32), accum="f16")
    with pytest.raises(TypeError, match="accum='f16'"):
        hgemm._hgemm.describe_gemm(half((4, 3)), half((3, 5)), np.ones((4, 5), np.float32), accum="f16")
    call = hgemm._hgemm.describe_gemm(half((4, 3)), half((3, 5)), half((4, 5)), accum="f16")
    assert call["accum"] == "f16"


@pytest.mark.parametrize("spelling", ["f32", "float32", np.float32, np.dtype("float32")])
def test_out_dtype_spellings_that_name_out(spelling):
    """out_dtype agrees with a float32 out in every spelling, and disagrees with a float16 one."""
    with pytest.raises(TypeError, match="CUDA"):
        hgemm.matmul(half((4, 3)), half((3, 5)), out=np.ones((4, 5), np.float32), out_dtype=spelling)
    with pytest.raises(TypeError, match="out has dtype float16 but out_dtype is float32"):
        hgemm.matmul(half((4, 3)), half((3, 5)), out=half((4, 5)), out_dtype=spelling)


def test_unknown_out_dtype():
    for bad in ("f64", "float64", np.float64, "half-ish"):
        with pytest.raises(TypeError, match="out_dtype must be float16, bfloat16 or float32"):
            hgemm.matmul(half((4, 3)), half((3, 5)), out=half((4, 5)), out_dtype=bad)


def test_not_2d_or_3d():
    with pytest.raises(ValueError, match="2-D or 3-D"):
        hgemm.matmul(half((2, 4, 3, 2)), half((2, 5)), out=half((2, 4, 3, 5)))
    with pytest.raises(ValueError, match="2-D or 3-D"):
        hgemm.matmul(half((3,)), half((3, 5)), out=half((1, 5)))
    with pytest.raises(TypeError, match="array"):
        hgemm.matmul([[1.0]], half((1, 1)), out=half((1, 1)))


def test_mismatched_shapes():
    with pytest.raises(ValueError, match="do not match"):
        hgemm.matmul(half((4, 3)), half((2, 5)), out=half((4, 5)))
    with pytest.raises(ValueError, match="do not match"):  # trans_a makes op(a) 3x4
        hgemm.matmul(half((4, 3)), half((3, 5)), out=half((4, 5)), trans_a=True)
    with pytest.raises(ValueError, match="out must be 4x5"):
        hgemm.matmul(half((4, 3)), half((3, 5)), out=half((5, 4)))


def test_batches_that_do_not_broadcast():
    with pytest.raises(ValueError, match="broadcast"):
        hgemm.matmul(half((2, 4, 3)), half((3, 3, 5)), out=half((3, 4, 5)))
    with pytest.raises(ValueError, match="out must be 2x4x5"):
        hgemm.matmul(half((2, 4, 3)), half((3, 5)), out=half((4, 5)))
    with pytest.raises(ValueError, match="out must be 4x5"):  # 2-D by 2-D gives a 2-D out
        hgemm.matmul(half((4, 3)), half((3, 5)), out=half((1, 4, 5)))


def test_non_contiguous_inner_dimension():
    a = half((4, 6))[:, ::2]  # strides (6, 2): no dimension with stride 1
    with pytest.raises(ValueError, match="contiguous"):
        hgemm.matmul(a, half((3, 5)), out=half((4, 5)))


def test_unknown_kernel_and_accum():
    with pytest.raises(ValueError, match="unknown kernel"):
        hgemm.matmul(half((4, 3)), half((3, 5)), out=half((4, 5)), kernel="cuda.warp_drive")
    with pytest.raises(ValueError, match="accum"):
        hgemm.matmul(half((4, 3)), half((3, 5)), out=half((4, 5)), accum="f64")


def test_out_none_needs_a_known_framework_and_beta_zero():
    with pytest.raises(TypeError, match="out="):
        hgemm.matmul(half((4, 3)), half((3, 5)))
    with pytest.raises(ValueError, match="beta"):
        hgemm.matmul(half((4, 3)), half((3, 5)), beta=1.0)


def test_bench_module_finds_or_reports_the_executable():
    from hgemm import bench

    try:
        path = bench.executable()
    except FileNotFoundError as e:
        assert "hgemm-bench" in str(e)
    else:
        assert path.endswith("hgemm-bench")


# ---- the library call the binding makes, replayed on the host (describe_gemm launches nothing) ----

def carve(shape, strides, pad=3, dtype=np.float16):
    """An array of `shape` with element `strides`, inside a buffer of small integers (exact in any
    accumulation) with `pad` spare elements at its end: (buffer, view)."""
    size = 1 + sum((n - 1) * s for n, s in zip(shape, strides)) if all(shape) else 0
    buf = np.random.default_rng(len(shape) * 7 + size).integers(-3, 4, size + pad).astype(dtype)
    view = np.lib.stride_tricks.as_strided(buf, shape, tuple(buf.itemsize * s for s in strides))
    return buf, view


def row_major(*shape):
    strides, acc = [], 1
    for n in reversed(shape):
        strides.insert(0, acc)
        acc *= n
    return carve(shape, strides)


def replay(call, buffers):
    """Runs `call` (describe_gemm's answer) in float64 on copies of the buffers: each product
    C_i = op(A_i)·op(B_i) read and written through the pointers, leading dimensions and batch
    strides the library would get. Returns the output buffer and how often each element was written."""
    def locate(ptr):
        for i, buf in enumerate(buffers):
            if buf.ctypes.data <= ptr < buf.ctypes.data + buf.nbytes:
                return i, (ptr - buf.ctypes.data) // buf.itemsize
        raise AssertionError("a pointer outside every buffer")

    images = [buf.astype(np.float64) for buf in buffers]
    (ia, oa), (ib, ob), (ic, oc) = locate(call["a"]), locate(call["b"]), locate(call["c"])
    written = np.zeros(buffers[ic].size, dtype=int)
    m, n, k = call["m"], call["n"], call["k"]

    def matrix(img, offset, rows, cols, ld, op):
        stored = (rows, cols) if op == "n" else (cols, rows)
        v = np.lib.stride_tricks.as_strided(img[offset:], stored, (8 * ld, 8))
        return v if op == "n" else v.T

    out = images[ic].copy()
    for i in range(call["batch"]):
        a = matrix(images[ia], oa + i * call["stride_a"], m, k, call["lda"], call["op_a"])
        b = matrix(images[ib], ob + i * call["stride_b"], k, n, call["ldb"], call["op_b"])
        c0 = oc + i * call["stride_c"]
        for r in range(m):
            out[c0 + r * call["ldc"]:c0 + r * call["ldc"] + n] = (a @ b)[r]
            written[c0 + r * call["ldc"]:c0 + r * call["ldc"] + n] += 1
    return out, written


# (a's shape and strides, b's, out's, and whether the batch should be one (batch·M)×K product)
LAYOUTS = {
    "2d": (((5, 7), (7, 1)), ((7, 6), (6, 1)), ((5, 6), (6, 1)), None),
    "2d transposed views, padded": (((5, 7), (1, 9)), ((7, 6), (1, 8)), ((5, 6), (8, 1)), None),
    "batch x shared B, contiguous": (((4, 5, 7), (35, 7, 1)), ((7, 6), (6, 1)), ((4, 5, 6), (30, 6, 1)), True),
    "batch x shared B, transposed A": (((4, 5, 7), (35, 1, 5)), ((7, 6), (1, 7)), ((4, 5, 6), (30, 6, 1)), False),
    "batch x shared B, gaps between A": (((4, 5, 7), (40, 7, 1)), ((7, 6), (6, 1)), ((4, 5, 6), (30, 6, 1)), False),
    "shared A x batch": (((5, 7), (7, 1)), ((4, 7, 6), (42, 6, 1)), ((4, 5, 6), (30, 6, 1)), False),
    "batch x batch, transposed B": (((4, 5, 7), (35, 7, 1)), ((4, 7, 6), (42, 1, 7)), ((4, 5, 6), (30, 6, 1)), False),
    "batch of one x batch": (((1, 5, 7), (35, 7, 1)), ((4, 7, 6), (42, 6, 1)), ((4, 5, 6), (30, 6, 1)), False),
    "batch x batch of one": (((4, 5, 7), (35, 7, 1)), ((1, 7, 6), (42, 6, 1)), ((4, 5, 6), (30, 6, 1)), True),
    "expanded batch (stride 0)": (((4, 5, 7), (0, 7, 1)), ((4, 7, 6), (42, 6, 1)), ((4, 5, 6), (30, 6, 1)), False),
    "transposed out": (((4, 5, 7), (35, 7, 1)), ((7, 6), (6, 1)), ((4, 5, 6), (30, 1, 5)), False),
    "one row each": (((4, 1, 7), (7, 7, 1)), ((7, 6), (6, 1)), ((4, 1, 6), (6, 6, 1)), True),
}


@pytest.mark.parametrize("out_dtype", [np.float16, np.float32])
@pytest.mark.parametrize("name", list(LAYOUTS))
def test_described_call_computes_the_product(name, out_dtype):
    (sa, ta), (sb, tb), (so, to), one_product = LAYOUTS[name]
    (buf_a, a), (buf_b, b), (buf_c, c) = carve(sa, ta), carve(sb, tb), carve(so, to, dtype=out_dtype)
    call = hgemm._hgemm.describe_gemm(a, b, c)
    # out is C and D (in place), of out's type; A and B keep theirs, also when out's transpose swaps them.
    out_type = "f16" if out_dtype == np.float16 else "f32"
    assert (call["a_type"], call["b_type"], call["c_type"], call["d_type"]) == ("f16", "f16", out_type, out_type)
    assert (call["c"], call["ldc"], call["stride_c"]) == (call["d"], call["ldd"], call["stride_d"])
    assert call["accum"] == "f32"
    if one_product is not None:
        assert (call["batch"] == 1) == one_product, call
    if call["batch"] > 1 and (len(sa) == 2 or sa[0] == 1):
        assert call["stride_a"] == 0 or call["stride_b"] == 0  # the shared operand is repeated, not copied
    out, written = replay(call, [buf_a, buf_b, buf_c])
    want = np.matmul(a.astype(np.float64), b.astype(np.float64))
    got = np.lib.stride_tricks.as_strided(out, so, tuple(8 * s for s in to))
    np.testing.assert_array_equal(got, want)
    # Every element of out written exactly once, nothing else (padding, the spare tail) touched.
    covered = np.zeros(buf_c.size, dtype=int)
    np.lib.stride_tricks.as_strided(covered, so, tuple(8 * s for s in to))[...] = 1
    np.testing.assert_array_equal(written, covered)
    np.testing.assert_array_equal(out[covered == 0], buf_c.astype(np.float64)[covered == 0])


@pytest.mark.parametrize("trans_a", [False, True])
@pytest.mark.parametrize("trans_b", [False, True])
def test_described_call_with_trans_flags_on_batches(trans_a, trans_b):
    (buf_a, a) = row_major(3, 7, 5) if trans_a else row_major(3, 5, 7)
    (buf_b, b) = row_major(6, 7) if trans_b else row_major(7, 6)
    buf_c, c = row_major(3, 5, 6)
    call = hgemm._hgemm.describe_gemm(a, b, c, trans_a, trans_b)
    out, _ = replay(call, [buf_a, buf_b, buf_c])
    oa = a.transpose(0, 2, 1) if trans_a else a
    ob = b.T if trans_b else b
    want = np.matmul(oa.astype(np.float64), ob.astype(np.float64))
    np.testing.assert_array_equal(out[:c.size].reshape(c.shape), want)


@pytest.mark.parametrize("script", ["bench_overhead", "bench_mlp"])
def test_torch_benchmarks_print_their_options(script):
    """The benchmarks parse their options before importing torch or looking for a GPU."""
    import subprocess
    import sys

    run = subprocess.run([sys.executable, "-m", f"hgemm.{script}", "--help"], capture_output=True, text=True)
    assert run.returncode == 0 and "--json" in run.stdout
    if script == "bench_mlp":
        assert "--tokens" in run.stdout and "--intermediate" in run.stdout
        assert "--dtype {f16,bf16}" in run.stdout and "bfloat16" in run.stdout
