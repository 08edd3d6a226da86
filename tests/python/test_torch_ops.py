"""torch.ops.hgemm.mm: schema, fake kernel and autograd on the CPU (meta/fake tensors), and the
CUDA kernel, gradients, torch.compile and CUDA graphs on a GPU (skipped without one)."""
import math
import subprocess
import sys

import pytest

torch = pytest.importorskip("torch")

import hgemm  # noqa: E402
import hgemm.torch_ops  # noqa: E402,F401
from torch._subclasses.fake_tensor import FakeTensorMode  # noqa: E402

cuda = pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device")
F16 = torch.float16


def test_import_hgemm_does_not_import_torch():
    code = "import sys, hgemm; assert 'torch' not in sys.modules; print('ok')"
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True).stdout.strip() == "ok"


def test_schema():
    schema = torch.ops.hgemm.mm.default._schema
    assert str(schema) == 'hgemm::mm(Tensor a, Tensor b, *, str accum="f32", str kernel="auto") -> Tensor'


def test_autograd_is_registered():
    assert torch._C._dispatch_has_kernel_for_dispatch_key("hgemm::mm", "Autograd")


@pytest.mark.parametrize("m,k,n", [(3, 4, 5), (1, 7, 1), (128, 64, 32)])
def test_fake_shapes(m, k, n):
    with FakeTensorMode():
        a = torch.empty(m, k, dtype=F16, device="cuda")
        b = torch.empty(k, n, dtype=F16, device="cuda")
        c = torch.ops.hgemm.mm(a, b)
        assert c.shape == (m, n) and c.dtype == F16 and c.device == a.device
        assert torch.ops.hgemm.mm(b.t(), a.t(), accum="f16").shape == (n, m)


def test_fake_rejects_bad_inputs():
    a = torch.empty(3, 4, dtype=torch.float32, device="meta")
    with pytest.raises(TypeError, match="float16"):
        torch.ops.hgemm.mm(a, a.t())
    a = torch.empty(3, 4, dtype=F16, device="meta")
    with pytest.raises(ValueError, match="shapes"):
        torch.ops.hgemm.mm(a, a)
    with pytest.raises(ValueError, match="accum"):
        torch.ops.hgemm.mm(a, a.t(), accum="f64")


def test_opcheck_meta():
    a = torch.empty(6, 4, dtype=F16, device="meta")
    b = torch.empty(4, 5, dtype=F16, device="meta")
    res = torch.library.opcheck(torch.ops.hgemm.mm, (a, b), test_utils=("test_schema", "test_faketensor"))
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


# ---- GPU ----

def rand(*shape, requires_grad=False):
    return ((torch.rand(*shape, device="cuda") * 2 - 1).half()).requires_grad_(requires_grad)


def rel_error(got, want):
    return (got.float() - want).norm().item() / max(want.norm().item(), 1e-30)


def tol(k):
    return 2.0 ** -10 + k * 2.0 ** -22 + 2.0 ** -11  # the C++ tests' f32 bound, plus fp16 rounding of dD


@cuda
@pytest.mark.parametrize("m,k,n", [(7, 7, 7), (128, 256, 64), (129, 127, 33)])
def test_gradients_match_fp32(m, k, n):
    a, b = rand(m, k, requires_grad=True), rand(k, n, requires_grad=True)
    c = hgemm.matmul(a, b)
    assert c.requires_grad
    g = rand(m, n)
    c.backward(g)
    af, bf, gf = a.detach().float(), b.detach().float(), g.float()
    assert rel_error(c.detach(), af @ bf) < tol(k)
    assert rel_error(a.grad, gf @ bf.T) < tol(n)
    assert rel_error(b.grad, af.T @ gf) < tol(m)


@cuda
def test_strided_inputs():
    base = rand(64, 80)
    a_t = rand(48, 64).t()            # transposed view: op T
    a_pad = base[:, :48]              # padded rows: a leading dimension
    b_odd = rand(48, 64)[::2, ::2]    # neither: made contiguous
    for a in (a_t, a_pad):
        got = torch.ops.hgemm.mm(a, b_odd)
        assert rel_error(got, a.float() @ b_odd.float()) < tol(a.shape[1])


@cuda
@pytest.mark.parametrize("need", [(True, False), (False, True)])
def test_needs_input_grad(need):
    a, b = rand(32, 16, requires_grad=need[0]), rand(16, 8, requires_grad=need[1])
    hgemm.matmul(a, b).sum().backward()
    assert (a.grad is not None) == need[0] and (b.grad is not None) == need[1]


@cuda
def test_cuda_rejects_float32():
    a = torch.rand(4, 4, device="cuda")
    with pytest.raises((TypeError, RuntimeError), match="float16"):
        torch.ops.hgemm.mm(a, a)


@cuda
def test_torch_compile_fullgraph():
    def f(a, b):
        return hgemm.matmul(a, b) * 2

    a, b = rand(64, 32), rand(32, 16)
    got = torch.compile(f, fullgraph=True)(a, b)
    assert rel_error(got, (a.float() @ b.float()) * 2) < tol(32)


@cuda
def test_cuda_graph_capture_and_replay():
    a, b = rand(64, 32), rand(32, 16)
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        torch.ops.hgemm.mm(a, b)  # warm up outside capture
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        c = torch.ops.hgemm.mm(a, b)
    a.copy_(rand(64, 32))
    g.replay()
    torch.cuda.synchronize()
    assert rel_error(c, a.float() @ b.float()) < tol(32)


@cuda
def test_opcheck_cuda():
    a, b = rand(33, 16, requires_grad=True), rand(16, 24, requires_grad=True)
    torch.library.opcheck(torch.ops.hgemm.mm, (a, b))


@cuda
def test_no_grad_keeps_fast_path():
    a, b = rand(8, 8, requires_grad=True), rand(8, 8)
    with torch.no_grad():
        assert not hgemm.matmul(a, b).requires_grad
    assert not math.isnan(hgemm.matmul(a.detach(), b).float().sum().item())
