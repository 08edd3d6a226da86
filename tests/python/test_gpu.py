# SPDX-License-Identifier: Apache-2.0
"""The Python package on a GPU, against torch.matmul in float32 (skipped without torch + CUDA)."""
import math
import time

import pytest

torch = pytest.importorskip("torch")
if not torch.cuda.is_available():
    pytest.skip("no CUDA device", allow_module_level=True)

import hgemm  # noqa: E402

# Same tolerances as the C++ tests (tests/gpu/gpu_util.cpp), on the relative Frobenius error.
def tolerance(accum, k):
    eps = 2.0 ** -10
    return eps + k * 2.0 ** -22 if accum == "f32" else eps * (2 + 0.5 * math.sqrt(k))


def rel_error(got, want):
    return (got.float() - want).norm().item() / max(want.norm().item(), 1e-30)


def rand(*shape):
    return (torch.rand(*shape, device="cuda") * 2 - 1).half()


SHAPES = [(1, 1, 1), (7, 7, 7), (127, 129, 128), (129, 127, 7), (33, 31, 1000), (256, 256, 256), (4093, 7, 129),
          (16, 264, 256)]
KERNELS = [k for k in hgemm.kernels()]


# Row limits of shape-limited kernels (Status::UnsupportedShape beyond them).
MAX_M = {"skinny.m16_mma_nt": 16}


@pytest.mark.parametrize("m,n,k", SHAPES)
@pytest.mark.parametrize("kernel", KERNELS, ids=lambda k: k["id"])
def test_every_kernel_matches_torch(kernel, m, n, k):
    """Each kernel on its first op (B stored N×K, a transposed view, for kernels without nn); a
    problem the entry cannot take (leading dimensions off its alignment, too many rows) must be
    refused with ValueError naming the reason, not run."""
    if "nn" not in kernel["ops"] and min(n, k) == 1:
        pytest.skip("a transposed view one element wide is also row-major: the wrapper passes op N")
    a = rand(m, k)
    b = rand(k, n) if "nn" in kernel["ops"] else rand(n, k).T
    want = a.float() @ b.float()
    lds = (k, n if "nn" in kernel["ops"] else k, n)
    misaligned = any(ld % kernel["align"] for ld in lds)
    too_tall = m > MAX_M.get(kernel["id"], m)
    for accum in kernel["accums"]:
        if misaligned or too_tall:
            with pytest.raises(ValueError, match="aligned" if misaligned else "shape"):
                hgemm.matmul(a, b, kernel_id=kernel["id"], accum=accum)
            continue
        c = hgemm.matmul(a, b, kernel_id=kernel["id"], accum=accum)
        torch.cuda.synchronize()
        assert c.shape == (m, n) and c.dtype == torch.float16
        assert rel_error(c, want) <= tolerance(accum, k), (kernel["id"], accum)


@pytest.mark.parametrize("trans_a", [False, True])
@pytest.mark.parametrize("trans_b", [False, True])
def test_transposes_flags_and_views(trans_a, trans_b):
    m, n, k = 129, 127, 131
    a = rand(k, m) if trans_a else rand(m, k)
    b = rand(n, k) if trans_b else rand(k, n)
    oa = a.float().T if trans_a else a.float()
    ob = b.float().T if trans_b else b.float()
    want = oa @ ob
    got = hgemm.matmul(a, b, trans_a=trans_a, trans_b=trans_b)
    assert rel_error(got, want) <= tolerance("f32", k)
    # The same through transposed views instead of flags: no copy, op T inside.
    view_a = a.t() if trans_a else a  # the logical m×k matrix
    view_b = b.t() if trans_b else b
    assert rel_error(hgemm.matmul(view_a, view_b), want) <= tolerance("f32", k)


def test_padded_rows_alpha_beta_and_out():
    m, n, k = 100, 90, 80
    big_a, big_b, big_c = rand(m, k + 7), rand(k, n + 5), rand(m, n + 3)
    a, b, c = big_a[:, :k], big_b[:, :n], big_c[:, :n]  # row strides larger than the width
    c0 = c.float().clone()
    want = -1.5 * (a.float() @ b.float()) + 0.75 * c0
    padding = big_c[:, n:].clone()
    out = hgemm.matmul(a, b, out=c, alpha=-1.5, beta=0.75)
    assert out.data_ptr() == c.data_ptr()
    assert rel_error(c, want) <= tolerance("f32", k)
    assert torch.equal(big_c[:, n:], padding)  # nothing written beyond column n


def test_transposed_out_view():
    m, n, k = 64, 48, 32
    a, b = rand(m, k), rand(k, n)
    storage = torch.empty(n, m, device="cuda", dtype=torch.float16)
    hgemm.matmul(a, b, out=storage.T)  # out is an m×n column-major view
    assert rel_error(storage.T, a.float() @ b.float()) <= tolerance("f32", k)


def test_no_copy_for_transposed_views():
    m = n = k = 1024
    a, b = rand(k, m), rand(n, k)
    out = torch.empty(m, n, device="cuda", dtype=torch.float16)
    torch.cuda.synchronize()
    before = torch.cuda.memory_allocated()
    torch.cuda.reset_peak_memory_stats()
    hgemm.matmul(a.T, b.T, out=out)
    torch.cuda.synchronize()
    assert torch.cuda.memory_allocated() == before
    assert torch.cuda.max_memory_allocated() == before  # nothing was allocated, not even briefly
    assert rel_error(out, a.float().T @ b.float().T) <= tolerance("f32", k)


def test_runs_on_the_current_torch_stream():
    s = torch.cuda.Stream()
    a, b = rand(512, 512), rand(512, 512)
    with torch.cuda.stream(s):
        c = hgemm.matmul(a, b)
    s.synchronize()
    assert rel_error(c, a.float() @ b.float()) <= tolerance("f32", 512)


def test_cupy_arrays_if_available():
    cupy = pytest.importorskip("cupy")
    a = cupy.random.uniform(-1, 1, (65, 33)).astype(cupy.float16)
    b = cupy.random.uniform(-1, 1, (33, 17)).astype(cupy.float16)
    c = hgemm.matmul(a, b)
    assert isinstance(c, cupy.ndarray)
    want = a.astype(cupy.float64) @ b.astype(cupy.float64)
    err = float(cupy.linalg.norm(c.astype(cupy.float64) - want) / cupy.linalg.norm(want))
    assert err <= tolerance("f32", 33)


def test_unsupported_kernel_for_problem():
    a, b = rand(64, 64), rand(64, 64)
    with pytest.raises(ValueError, match="f32"):
        hgemm.matmul(a, b, kernel_id="cuda.t8x8_hfma2", accum="f32")


def test_per_call_overhead_against_cpp(record_property):
    """Host time to issue one 64×64×64 GEMM, Python binding against the C++ API (reported). Both
    loops are timed before their closing sync, 200 calls at a time (well under the launch queue's
    depth, so the host never waits for the GPU); the best of 20 rounds."""
    from hgemm._hgemm import cpp_seconds_per_call

    a, b, c = rand(64, 64), rand(64, 64), torch.empty(64, 64, device="cuda", dtype=torch.float16)
    stream = torch.cuda.current_stream().cuda_stream
    iters = 200
    for _ in range(iters):
        hgemm.matmul(a, b, out=c)
    torch.cuda.synchronize()
    cpp = min(cpp_seconds_per_call(a, b, c, "auto", iters, stream) for _ in range(20))
    py = []
    for _ in range(20):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        for _ in range(iters):
            hgemm.matmul(a, b, out=c)
        py.append((time.perf_counter() - t0) / iters)
    torch.cuda.synchronize()
    overhead_us = (min(py) - cpp) * 1e6
    print(f"\nper-call host time, 64x64x64: C++ {cpp * 1e6:.2f} us, Python {min(py) * 1e6:.2f} us, "
          f"overhead {overhead_us:.2f} us")
    record_property("overhead_us", overhead_us)


def test_torch_fast_path_and_dlpack_path_agree():
    """torch tensors skip DLPack (hgemm reads data_ptr and strides); the DLPack path must give the
    same bits, and a torch tensor of another dtype or on the CPU must be refused the same way."""
    from hgemm._hgemm import gemm as dlpack_gemm

    a, b = rand(129, 65), rand(65, 127)
    fast = hgemm.matmul(a.T.contiguous().T, b)  # a column-major view: op T on both paths
    slow = torch.empty_like(fast)
    dlpack_gemm(a.T.contiguous().T, b, slow, 1.0, 0.0, "f32", "auto", False, False,
                torch.cuda.current_stream().cuda_stream)
    torch.cuda.synchronize()
    assert torch.equal(fast, slow)
    with pytest.raises(TypeError, match="float16"):
        hgemm.matmul(a.float(), b, out=torch.empty(129, 127, device="cuda", dtype=torch.float16))
    with pytest.raises(TypeError, match="CUDA"):
        hgemm.matmul(a.cpu(), b.cpu(), out=torch.empty(129, 127, dtype=torch.float16))
