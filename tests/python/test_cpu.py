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
        assert set(k) >= {"id", "family", "ladder", "summary", "min_arch", "ops", "accums", "baseline"}
        assert k["ops"] and set(k["ops"]) <= {"nn", "nt", "tn", "tt"}
        assert k["accums"] and set(k["accums"]) <= {"f16", "f32"}
    hfma2 = next(k for k in ks if k["id"] == "cuda.t8x8_hfma2")
    assert hfma2["accums"] == ["f16"]


def test_cpu_arrays_are_refused():
    with pytest.raises(TypeError, match="CUDA"):
        hgemm.matmul(half((4, 3)), half((3, 5)), out=half((4, 5)))


def test_wrong_dtype():
    with pytest.raises(TypeError, match="float16"):
        hgemm.matmul(np.ones((4, 3), np.float32), half((3, 5)), out=half((4, 5)))


def test_not_2d():
    with pytest.raises(ValueError, match="2-D"):
        hgemm.matmul(half((4, 3, 2)), half((3, 5)), out=half((4, 5)))
    with pytest.raises(TypeError, match="array"):
        hgemm.matmul([[1.0]], half((1, 1)), out=half((1, 1)))


def test_mismatched_shapes():
    with pytest.raises(ValueError, match="do not match"):
        hgemm.matmul(half((4, 3)), half((2, 5)), out=half((4, 5)))
    with pytest.raises(ValueError, match="do not match"):  # trans_a makes op(a) 3x4
        hgemm.matmul(half((4, 3)), half((3, 5)), out=half((4, 5)), trans_a=True)
    with pytest.raises(ValueError, match="out must be 4x5"):
        hgemm.matmul(half((4, 3)), half((3, 5)), out=half((5, 4)))


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
