# SPDX-License-Identifier: Apache-2.0
"""The Python package without a GPU: import, kernels(), and every error path, on numpy arrays."""
import math

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
    with pytest.raises(TypeError, match=r"argument 'a': expected dtype float16 or bfloat16, got float32"):
        hgemm.matmul(np.ones((4, 3), np.float32), half((3, 5)), out=half((4, 5)))
    with pytest.raises(TypeError, match=r"argument 'b': expected dtype float16 or bfloat16, got int32"):
        hgemm.matmul(half((4, 3)), np.ones((3, 5), np.int32), out=half((4, 5)))
    with pytest.raises(TypeError, match=r"argument 'out': expected dtype float16, bfloat16 or float32, got float64"):
        hgemm.matmul(half((4, 3)), half((3, 5)), out=np.ones((4, 5)))
    with pytest.raises(TypeError, match=r"got bool"):
        hgemm.matmul(half((4, 3)), half((3, 5)), out=np.ones((4, 5), bool))


def test_float32_out_passes_the_dtype_checks():
    with pytest.raises(TypeError, match="CUDA"):  # refused only for being host memory
        hgemm.matmul(half((4, 3)), half((3, 5)), out=np.ones((4, 5), np.float32))


def test_f16_accumulation_needs_float16_everywhere():
    with pytest.raises(TypeError, match="argument 'accum': expected 'f32' for .*'f16' needs float16 a, b and output"):
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
    with pytest.raises(TypeError, match=r"argument 'out': expected dtype float32 \(out_dtype\), got float16"):
        hgemm.matmul(half((4, 3)), half((3, 5)), out=half((4, 5)), out_dtype=spelling)


def test_unknown_out_dtype():
    for bad in ("f64", "float64", np.float64, "half-ish"):
        with pytest.raises(TypeError, match="argument 'out_dtype': expected float16, bfloat16 or float32"):
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
    with pytest.raises(ValueError, match="argument 'out': must be 4x5"):
        hgemm.matmul(half((4, 3)), half((3, 5)), out=half((5, 4)))


def test_batches_that_do_not_broadcast():
    with pytest.raises(ValueError, match="broadcast"):
        hgemm.matmul(half((2, 4, 3)), half((3, 3, 5)), out=half((3, 4, 5)))
    with pytest.raises(ValueError, match="argument 'out': must be 2x4x5"):
        hgemm.matmul(half((2, 4, 3)), half((3, 5)), out=half((4, 5)))
    with pytest.raises(ValueError, match="argument 'out': must be 4x5"):  # 2-D by 2-D gives a 2-D out
        hgemm.matmul(half((4, 3)), half((3, 5)), out=half((1, 4, 5)))


def test_non_contiguous_inner_dimension():
    a = half((4, 6))[:, ::2]  # strides (6, 2): no dimension with stride 1
    with pytest.raises(ValueError, match="contiguous"):
        hgemm.matmul(a, half((3, 5)), out=half((4, 5)))


def test_unknown_kernel_and_accum():
    with pytest.raises(ValueError, match=r"argument 'kernel_id': expected 'auto' or an id from hgemm.kernels\(\)"):
        hgemm.matmul(half((4, 3)), half((3, 5)), out=half((4, 5)), kernel_id="cuda.warp_drive")
    with pytest.raises(ValueError, match="accum"):
        hgemm.matmul(half((4, 3)), half((3, 5)), out=half((4, 5)), accum="f64")


def test_out_none_needs_a_known_framework_and_beta_zero():
    with pytest.raises(TypeError, match="argument 'a': expected an array in CUDA memory"):  # numpy: host memory
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


def library_runs_one_product(call):
    """Whether the library's dispatch runs the described batch as one (batch·M)×K product
    (src/dispatch/batch_fold.cpp): B shared, op(A) = N, A's and D's rows (and aux's) following one
    another, no vector along M. The binding hands the batch over as it is."""
    m = call["m"]
    return (call["batch"] > 1 and call["stride_b"] == 0 and call["op_a"] == "n" and call["stride_a"] == m * call["lda"]
            and call["stride_d"] == m * call["ldd"] and call["bias_along"] != "m" and not call["scale_rows"]
            and (not call["aux_output"] or call["stride_aux"] == m * call["ldaux"]))


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
        assert library_runs_one_product(call) == one_product, call
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


# ---- the fused epilogue: describe_gemm's epilogue fields, replayed on the host ----

ACTIVATIONS = {
    "none": lambda z: z,
    "relu": lambda z: np.maximum(z, 0),
    "gelu": lambda z: 0.5 * z * (1 + np.vectorize(math.erf)(z / math.sqrt(2))),
    "gelu_tanh": lambda z: 0.5 * z * (1 + np.tanh(math.sqrt(2 / math.pi) * (z + 0.044715 * z ** 3))),
    "silu": lambda z: z / (1 + np.exp(-z)),
}


def locate(buffers, ptr):
    for i, buf in enumerate(buffers):
        if buf.ctypes.data <= ptr < buf.ctypes.data + buf.nbytes:
            return i, (ptr - buf.ctypes.data) // buf.itemsize
    raise AssertionError("a pointer outside every buffer")


def replay_epilogue(call, buffers):
    """replay, then the epilogue of every element of the problem as the library applies it, from
    the fields describe_gemm reports: Z = product + bias (one value per row of the problem for
    bias_along "m", per column for "n"), Z written to aux, D = act(Z)·row_scale[r]·col_scale[c].
    Returns D's buffer and aux's (None without aux), in float64."""
    out, _ = replay(call, buffers)
    images = [buf.astype(np.float64) for buf in buffers]
    m, n = call["m"], call["n"]

    def vector(name, length):
        i, o = locate(buffers, call[name])
        return images[i][o:o + length]

    along = call["bias_along"]
    bias = vector("bias", m if along == "m" else n) if along != "none" else None
    row_scale = vector("row_scale", m) if call["scale_rows"] else None
    col_scale = vector("col_scale", n) if call["scale_cols"] else None
    aux = None
    if call["aux_output"]:
        ix, ox = locate(buffers, call["aux"])
        aux = images[ix].copy()
    od = locate(buffers, call["d"])[1]
    for i in range(call["batch"]):
        for r in range(m):
            row = slice(od + i * call["stride_d"] + r * call["ldd"], od + i * call["stride_d"] + r * call["ldd"] + n)
            z = out[row].copy()
            if bias is not None:
                z += bias[r] if along == "m" else bias
            if aux is not None:
                start = ox + i * call["stride_aux"] + r * call["ldaux"]
                aux[start:start + n] = z
            v = ACTIVATIONS[call["activation"]](z)
            if row_scale is not None:
                v = v * row_scale[r]
            if col_scale is not None:
                v = v * col_scale
            out[row] = v
    return out, aux


def vec(length, dtype=np.float32):
    return carve((length,), (1,), dtype=dtype)


# (a's shape and strides, b's, out's; aux_out has out's shape, laid out like out with `aux_pad`
# more elements per row, or per column for a transposed out, and `aux_gap` more between matrices)
EPILOGUE_LAYOUTS = {
    "2d": (((5, 7), (7, 1)), ((7, 6), (6, 1)), ((5, 6), (6, 1))),
    "2d, transposed out": (((5, 7), (7, 1)), ((7, 6), (1, 7)), ((5, 6), (1, 5))),
    "batch x shared B, contiguous": (((4, 5, 7), (35, 7, 1)), ((7, 6), (6, 1)), ((4, 5, 6), (30, 6, 1))),
    "shared A x batch": (((5, 7), (7, 1)), ((4, 7, 6), (42, 6, 1)), ((4, 5, 6), (30, 6, 1))),
    "batch x batch, transposed out": (((4, 5, 7), (35, 7, 1)), ((4, 7, 6), (42, 6, 1)), ((4, 5, 6), (30, 1, 5))),
}


def aux_like(shape, out_strides, pad, gap, dtype):
    """An aux_out of `shape` laid out as out is (row-major or a transposed view), its rows (columns)
    `pad` elements longer and its matrices `gap` elements apart beyond that."""
    *batch, r, c = shape
    transposed = out_strides[-2] == 1 and out_strides[-1] != 1
    inner = (1, r + pad) if transposed else (c + pad, 1)
    size = (r + pad) * c if transposed else r * (c + pad)
    return carve(shape, ((size + gap,) if batch else ()) + inner, dtype=dtype)


@pytest.mark.parametrize("activation", list(ACTIVATIONS))
@pytest.mark.parametrize("name", list(EPILOGUE_LAYOUTS))
@pytest.mark.parametrize("along", ["n", "m"])
@pytest.mark.parametrize("aux", [None, (0, 0), (3, 0), (0, 5)])
def test_described_epilogue_computes_bias_activation_and_aux(activation, name, along, aux):
    """The epilogue's fields in the library's problem (transposed for a transposed out: a bias
    along out's columns is along the problem's rows then) give D = act(op(a)·op(b) + bias) and
    aux = the pre-activation, both in out's place, whatever the batch and layout; a batch whose
    matrices stack into one product still does so when the epilogue allows it."""
    (sa, ta), (sb, tb), (so, to) = EPILOGUE_LAYOUTS[name]
    (buf_a, a), (buf_b, b), (buf_c, c) = carve(sa, ta), carve(sb, tb), carve(so, to, dtype=np.float32)
    m, n = so[-2], so[-1]
    buf_bias, bias = vec(m if along == "m" else n, np.float16)
    buffers = [buf_a, buf_b, buf_c, buf_bias]
    kwargs = {"bias": bias, "bias_along": along, "activation": activation}
    if aux is not None:
        buf_aux, aux_out = aux_like(so, to, *aux, dtype=np.float32)
        buffers.append(buf_aux)
        kwargs["aux_out"] = aux_out
    call = hgemm._hgemm.describe_gemm(a, b, c, **kwargs)
    assert call["activation"] == activation and call["stride_bias"] == 0
    assert call["bias_type"] == "f16" and call["aux_output"] == (aux is not None)
    out, aux_image = replay_epilogue(call, buffers)
    z = np.matmul(a.astype(np.float64), b.astype(np.float64))
    z = z + (bias.astype(np.float64)[:, None] if along == "m" else bias.astype(np.float64))
    got = np.lib.stride_tricks.as_strided(out, so, tuple(8 * s for s in to))
    np.testing.assert_allclose(got, ACTIVATIONS[activation](z), rtol=1e-12, atol=1e-300)
    if aux is not None:
        got_aux = np.lib.stride_tricks.as_strided(aux_image[locate(buffers, call["aux"])[1]:], so,
                                                  tuple(8 * s // 4 for s in aux_out.strides))
        np.testing.assert_array_equal(got_aux, z)
    if name == "batch x shared B, contiguous":
        assert library_runs_one_product(call) == (along == "n" and (aux is None or aux[1] == 0)), call


@pytest.mark.parametrize("name", list(EPILOGUE_LAYOUTS))
def test_described_epilogue_scales_rows_and_columns(name):
    (sa, ta), (sb, tb), (so, to) = EPILOGUE_LAYOUTS[name]
    (buf_a, a), (buf_b, b), (buf_c, c) = carve(sa, ta), carve(sb, tb), carve(so, to)
    (buf_r, rows), (buf_c2, cols) = vec(so[-2]), vec(so[-1])
    call = hgemm._hgemm.describe_gemm(a, b, c, activation="relu", row_scale=rows, col_scale=cols)
    assert call["bias_along"] == "none" and not call["aux_output"]
    out, _ = replay_epilogue(call, [buf_a, buf_b, buf_c, buf_r, buf_c2])
    z = np.matmul(a.astype(np.float64), b.astype(np.float64))
    want = np.maximum(z, 0) * rows.astype(np.float64)[:, None] * cols.astype(np.float64)
    got = np.lib.stride_tricks.as_strided(out, so, tuple(8 * s for s in to))
    np.testing.assert_array_equal(got, want)


def describe(bias_len=6, **kwargs):
    """describe_gemm of a 5x7 by 7x6 product into a float16 out, with epilogue arguments."""
    if bias_len is not None:
        kwargs.setdefault("bias", np.ones(bias_len, np.float32))
    return hgemm._hgemm.describe_gemm(half((5, 7)), half((7, 6)), half((5, 6)), **kwargs)


def test_epilogue_arguments_are_checked_with_clear_errors():
    assert describe()["bias_along"] == "n"
    assert describe(bias_len=5, bias_along="m")["bias_along"] == "m"
    with pytest.raises(ValueError, match=r"bias must have 6 values \(one per column of out\), got 5"):
        describe(bias_len=5)
    with pytest.raises(ValueError, match=r"bias must have 5 values \(one per row of out\), got 6"):
        describe(bias_along="m")
    with pytest.raises(ValueError, match="bias_along must be 'n'"):
        describe(bias_along="k")
    with pytest.raises(TypeError, match=r"bias must have dtype float16, bfloat16 or float32 \(float64 given\)"):
        describe(bias=np.ones(6))
    with pytest.raises(TypeError, match=r"\(int32 given\)"):
        describe(bias=np.ones(6, np.int32))
    with pytest.raises(ValueError, match="bias must be 1-D"):
        describe(bias=np.ones((1, 6), np.float16))
    with pytest.raises(ValueError, match=r"bias must be contiguous \(stride 1\), got stride 2"):
        describe(bias=np.ones(12, np.float16)[::2])
    with pytest.raises(TypeError):  # not an array
        describe(bias=[1.0] * 6)
    with pytest.raises(ValueError, match="activation must be 'none', 'relu', 'gelu', 'gelu_tanh' or 'silu'"):
        describe(activation="tanh")
    with pytest.raises(ValueError, match="aux_out must have out's shape, 5x6, got 6x5"):
        describe(aux_out=half((6, 5)))
    with pytest.raises(ValueError, match="aux_out must have out's shape"):
        describe(aux_out=half((1, 5, 6)))
    with pytest.raises(TypeError, match=r"aux_out must have dtype float16, bfloat16 or float32 \(int8 given\)"):
        describe(aux_out=np.ones((5, 6), np.int8))
    with pytest.raises(ValueError, match="aux_out has strides .*laid out like out, row-major rows"):
        describe(aux_out=half((6, 5)).T)
    with pytest.raises(ValueError, match="laid out like out, a transposed view"):
        hgemm._hgemm.describe_gemm(half((5, 7)), half((7, 6)), half((6, 5)).T, aux_out=half((5, 6)))
    with pytest.raises(TypeError, match=r"row_scale must have dtype float32 \(float16 given\)"):
        describe(bias_len=None, row_scale=np.ones(5, np.float16))
    with pytest.raises(ValueError, match="col_scale must have 6 values"):
        describe(bias_len=None, col_scale=np.ones(5, np.float32))


def test_epilogue_on_host_arrays_is_refused_for_the_device():
    """On a GPU the vectors and aux_out must be GPU arrays too; here a's host memory is named first."""
    with pytest.raises(TypeError, match="CUDA"):
        hgemm._hgemm.gemm(half((5, 7)), half((7, 6)), half((5, 6)), 1.0, 0.0, "f32", "auto", False, False, 0,
                          bias=np.ones(6, np.float16), activation="gelu")


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


def test_kernel_keyword_is_kernel_id_and_kernel_warns():
    with pytest.warns(DeprecationWarning, match="kernel_id"):
        with pytest.raises(ValueError, match=r"argument 'kernel_id': expected 'auto' or an id from hgemm.kernels\(\)"):
            hgemm.matmul(half((4, 3)), half((3, 5)), out=half((4, 5)), kernel="cuda.warp_drive")
    with pytest.raises(ValueError, match="argument 'kernel': expected kernel_id's value"):
        hgemm.matmul(half((4, 3)), half((3, 5)), out=half((4, 5)), kernel="cuda.naive", kernel_id="cuda.mma")


def test_accum_takes_dtypes_and_stream_takes_stream_objects():
    class Stream:  # what torch.cuda.Stream offers
        cuda_stream = 0

    # accepted up to the device check, which these host arrays then fail
    for accum in (np.float32, np.float16, "f32"):
        with pytest.raises(TypeError, match="CUDA"):
            hgemm.matmul(half((4, 3)), half((3, 5)), out=half((4, 5)), accum=accum, stream=Stream())
    with pytest.raises(ValueError, match="argument 'accum': expected"):
        hgemm.matmul(half((4, 3)), half((3, 5)), out=half((4, 5)), accum=np.float64)
    with pytest.raises(TypeError, match="argument 'stream': expected an int"):
        hgemm.matmul(half((4, 3)), half((3, 5)), out=half((4, 5)), stream="default")
