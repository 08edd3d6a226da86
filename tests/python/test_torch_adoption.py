# SPDX-License-Identifier: Apache-2.0
"""What a PyTorch user meets first: the operators after `import hgemm`, autocast, N-D batches with
torch.matmul's broadcasting, hgemm.nn.Linear as a drop-in, a torch.export round trip, and the same
inputs taken with and without grad. Shapes and dtypes are checked on the CPU (fake and meta
tensors); values on a GPU (skipped without one)."""
import os
import subprocess
import sys
import textwrap

import pytest

torch = pytest.importorskip("torch")

import hgemm  # noqa: E402  (registers torch.ops.hgemm.*)
import hgemm.nn  # noqa: E402
from torch._subclasses.fake_tensor import FakeTensorMode  # noqa: E402

cuda = pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device")
F16, BF16, F32 = torch.float16, torch.bfloat16, torch.float32


# ---- autocast (on CPU fake tensors: AutocastCPU runs the same rule as AutocastCUDA) ----

def test_autocast_casts_float32_inputs_to_the_autocast_dtype():
    with FakeTensorMode():
        a, b, bias = torch.empty(8, 16), torch.empty(16, 4), torch.empty(4)
        with pytest.raises(TypeError, match="float16 or bfloat16"):
            torch.ops.hgemm.mm(a, b)  # no autocast: float32 is refused
        with torch.autocast("cpu", dtype=BF16):
            assert torch.ops.hgemm.mm(a, b).dtype == BF16
            assert torch.ops.hgemm.matmul(a.expand(3, 8, 16), b).dtype == BF16
            assert torch.ops.hgemm.addmm(bias, a, b, activation="relu").dtype == BF16
            assert torch.ops.hgemm.mm(a.half(), b).dtype == BF16  # float16 too, as torch.mm
            assert torch.ops.hgemm.mm(a, b, out_dtype=F32).dtype == F32  # an explicit out_dtype stays


# ---- N-D batches ----

@pytest.mark.parametrize("sa,sb,want", [
    ((2, 1, 8, 16), (3, 16, 4), (2, 3, 8, 4)),        # torch.matmul's broadcasting
    ((2, 4, 32, 16), (2, 4, 16, 32), (2, 4, 32, 32)),  # B×H×S×D · B×H×D×S, attention scores
    ((2, 4, 32, 32), (2, 4, 32, 16), (2, 4, 32, 16)),  # scores · V
    ((2, 3, 5, 8, 16), (16, 4), (2, 3, 5, 8, 4)),      # a 2-D b: rows of one product
    ((8, 16), (2, 3, 16, 4), (2, 3, 8, 4)),
    ((1, 1, 8, 16), (2, 3, 16, 4), (2, 3, 8, 4)),
])
def test_nd_shapes_match_torch_matmul(sa, sb, want):
    with FakeTensorMode():
        a, b = torch.empty(sa, dtype=F16), torch.empty(sb, dtype=F16)
        assert tuple(torch.ops.hgemm.matmul(a, b).shape) == want == tuple(torch.matmul(a, b).shape)


def test_nd_batches_that_do_not_broadcast_are_refused():
    with FakeTensorMode():
        with pytest.raises(ValueError, match="do not broadcast"):
            torch.ops.hgemm.matmul(torch.empty(2, 3, 8, 16, dtype=F16), torch.empty(4, 16, 4, dtype=F16))


def test_nd_gradients_have_the_inputs_shapes_on_meta():
    a = torch.empty(2, 1, 8, 16, dtype=F16, device="meta", requires_grad=True)
    b = torch.empty(3, 16, 4, dtype=F16, device="meta", requires_grad=True)
    y = torch.ops.hgemm.matmul(a, b)
    assert y.shape == (2, 3, 8, 4)
    da, db = torch.autograd.grad(y, (a, b), torch.empty_like(y))
    assert da.shape == a.shape and db.shape == b.shape


# ---- hgemm.nn.Linear as a drop-in ----

def test_linear_factory_arguments_and_default_dtype():
    assert hgemm.nn.Linear(8, 4).weight.dtype == torch.get_default_dtype() == torch.nn.Linear(8, 4).weight.dtype
    layer = hgemm.nn.Linear(8, 4, device="meta", dtype=BF16)
    assert layer.weight.device.type == "meta" and layer.weight.dtype == BF16 and layer.bias.dtype == BF16
    old = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    try:
        assert hgemm.nn.Linear(8, 4).weight.dtype == torch.float64
    finally:
        torch.set_default_dtype(old)


def test_float32_layer_runs_like_torch_outside_autocast():
    torch.manual_seed(0)
    ours, ref = hgemm.nn.Linear(8, 4), torch.nn.Linear(8, 4)
    ours.load_state_dict(ref.state_dict())
    x = torch.randn(3, 8)
    torch.testing.assert_close(ours(x), ref(x))
    # a 16-bit layer moved with .to(torch.float32) runs too
    half = hgemm.nn.Linear(8, 4, dtype=F16, activation="relu").to(F32)
    torch.testing.assert_close(half(x), torch.relu(torch.nn.functional.linear(x, half.weight, half.bias)))


def test_float32_layer_and_input_under_autocast():
    with FakeTensorMode():
        layer = hgemm.nn.Linear(16, 4)
        x = torch.empty(2, 5, 16)
        with torch.autocast("cpu", dtype=BF16):
            y = layer(x)
        assert y.dtype == BF16 and y.shape == (2, 5, 4)


def test_two_16_bit_dtypes_are_refused_naming_the_tensor():
    layer = hgemm.nn.Linear(8, 4, dtype=BF16, device="meta")
    with pytest.raises(TypeError, match="argument 'weight': expected the input's dtype float16, got bfloat16"):
        layer(torch.empty(2, 8, dtype=F16, device="meta"))


# ---- torch.export: save a module that calls the operators, load it after `import hgemm` only ----

class _Block(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.up = hgemm.nn.Linear(16, 32, dtype=F16, activation="gelu")
        self.down = hgemm.nn.Linear(32, 16, bias=False, dtype=F16)
        self.register_buffer("mix", torch.eye(16, dtype=F16))

    def forward(self, x):
        return self.down(self.up(x)) + torch.ops.hgemm.matmul(x, self.mix)


def _export(module, x, path):
    ep = torch.export.export(module, (x,))
    torch.export.save(ep, path)
    return ep


_LOAD = textwrap.dedent("""
    import sys, torch, hgemm
    ep = torch.export.load(sys.argv[1])
    ops = sorted({str(n.target) for n in ep.graph.nodes if str(n.target).startswith("hgemm.")})
    print(" ".join(ops))
    if len(sys.argv) > 2:  # run it on the GPU and save the output
        x = torch.load(sys.argv[2])
        torch.save(ep.module()(x), sys.argv[3])
""")


def test_export_round_trip_loads_after_import_hgemm(tmp_path):
    path = str(tmp_path / "block.pt2")
    x = torch.empty(4, 16, dtype=F16)  # traced with fake tensors: no kernel runs on the CPU
    _export(_Block(), x, path)
    run = subprocess.run([sys.executable, "-c", _LOAD, path], capture_output=True, text=True,
                         env={k: v for k, v in os.environ.items() if k != "HGEMM_NO_TORCH"})
    assert run.returncode == 0, run.stderr
    assert run.stdout.split() == ["hgemm.addmm.default", "hgemm.matmul.default", "hgemm.mm.default"]


@cuda
def test_export_round_trip_runs_on_the_gpu(tmp_path):
    torch.manual_seed(0)
    block = _Block().cuda()
    x = torch.randn(4, 16, dtype=F16, device="cuda")
    path, xin, yout = str(tmp_path / "block.pt2"), str(tmp_path / "x.pt"), str(tmp_path / "y.pt")
    _export(block, x, path)
    torch.save(x, xin)
    run = subprocess.run([sys.executable, "-c", _LOAD, path, xin, yout], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    torch.testing.assert_close(torch.load(yout), block(x))


# ---- on the GPU ----

def rand(*shape, dtype=F16, requires_grad=False):
    return torch.randn(*shape, device="cuda", dtype=dtype).div_(4).requires_grad_(requires_grad)


@cuda
def test_autocast_on_the_gpu_matches_torch():
    a, b = rand(64, 96, dtype=F32), rand(96, 80, dtype=F32)
    for dtype in (F16, BF16):
        with torch.autocast("cuda", dtype=dtype):
            y, ref = torch.ops.hgemm.mm(a, b), torch.mm(a, b)
        assert y.dtype == ref.dtype == dtype
        torch.testing.assert_close(y.float(), ref.float(), atol=2e-2, rtol=2e-2)


@cuda
def test_linear_under_autocast_matches_torch_linear():
    torch.manual_seed(0)
    ours, ref = hgemm.nn.Linear(96, 80, device="cuda"), torch.nn.Linear(96, 80, device="cuda")
    ours.load_state_dict(ref.state_dict())
    x = rand(3, 37, 96, dtype=F32, requires_grad=True)
    with torch.autocast("cuda", dtype=BF16):
        y, want = ours(x), ref(x)
    assert y.dtype == want.dtype == BF16
    torch.testing.assert_close(y.float(), want.float(), atol=3e-2, rtol=3e-2)
    g = torch.randn_like(y)
    (dx,) = torch.autograd.grad(y, x, g)
    (dx_ref,) = torch.autograd.grad(want, x, g)
    assert dx.dtype == F32
    torch.testing.assert_close(dx, dx_ref, atol=3e-2, rtol=3e-2)


@cuda
@pytest.mark.parametrize("sa,sb", [((2, 1, 40, 24), (3, 24, 56)), ((2, 4, 64, 32), (2, 4, 32, 64)),
                                   ((2, 3, 5, 8, 16), (16, 4)), ((1, 1, 8, 16), (2, 3, 16, 4))])
def test_nd_matmul_matches_torch_with_and_without_grad(sa, sb):
    a, b = rand(*sa), rand(*sb)
    ref = torch.matmul(a.float(), b.float())
    torch.testing.assert_close(hgemm.matmul(a, b).float(), ref, atol=1e-2, rtol=1e-2)
    torch.testing.assert_close(torch.ops.hgemm.matmul(a, b).float(), ref, atol=1e-2, rtol=1e-2)
    ag, bg = a.clone().requires_grad_(), b.clone().requires_grad_()
    y = hgemm.matmul(ag, bg)
    torch.testing.assert_close(y.float(), ref, atol=1e-2, rtol=1e-2)
    g = rand(*y.shape)
    da, db = torch.autograd.grad(y, (ag, bg), g)
    af, bf = a.float().requires_grad_(), b.float().requires_grad_()
    da_ref, db_ref = torch.autograd.grad(torch.matmul(af, bf), (af, bf), g.float())
    torch.testing.assert_close(da.float(), da_ref, atol=3e-2, rtol=3e-2)
    torch.testing.assert_close(db.float(), db_ref, atol=3e-2, rtol=3e-2)


@cuda
def test_same_inputs_are_taken_with_and_without_grad():
    """A column-strided view and a strided bias: copied with grad (the operators) and without
    (the fast path) alike, with the same result."""
    a = rand(48, 128)[:, ::2]  # strides (128, 2): neither layout the library reads in place
    b = rand(64, 40)
    bias = rand(80)[::2]
    want = torch.nn.functional.linear(a.float(), b.float().t(), bias.float())
    no_grad = hgemm.matmul(a, b, bias=bias)
    with_grad = hgemm.matmul(a.clone().requires_grad_(), b, bias=bias)
    torch.testing.assert_close(no_grad.float(), want, atol=1e-2, rtol=1e-2)
    torch.testing.assert_close(with_grad.detach(), no_grad)


@cuda
def test_stream_takes_a_torch_stream():
    a, b = rand(64, 64), rand(64, 64)
    s = torch.cuda.Stream()
    with torch.cuda.stream(s):
        y = hgemm.matmul(a, b, stream=s)
    s.synchronize()
    torch.testing.assert_close(y.float(), a.float() @ b.float(), atol=1e-2, rtol=1e-2)


# ---- addmm in torch.addmm's order, with beta and alpha ----

def test_addmm_takes_beta_and_alpha_as_torch_addmm():
    schema = str(torch.ops.hgemm.addmm.default._schema)
    assert "Tensor? bias, Tensor a, Tensor b, *, Scalar beta=1, Scalar alpha=1" in schema
    a = torch.empty(8, 16, dtype=F16, device="meta", requires_grad=True)
    b = torch.empty(16, 4, dtype=F16, device="meta")
    bias = torch.empty(4, dtype=F16, device="meta", requires_grad=True)
    y = torch.ops.hgemm.addmm(bias, a, b, beta=0.5, alpha=2.0, activation="gelu")
    assert y.shape == (8, 4)
    da, dbias = torch.autograd.grad(y, (a, bias), torch.empty_like(y))
    assert da.shape == a.shape and dbias.shape == bias.shape


@cuda
@pytest.mark.parametrize("beta,alpha", [(1, 1), (0.5, 2.0), (0, 1.5)])
def test_addmm_beta_alpha_values_and_gradients_match_torch(beta, alpha):
    a, b, bias = rand(64, 96, requires_grad=True), rand(96, 80, requires_grad=True), rand(80, requires_grad=True)
    y = torch.ops.hgemm.addmm(bias, a, b, beta=beta, alpha=alpha, activation="silu")
    af, bf, biasf = (t.detach().float().requires_grad_() for t in (a, b, bias))
    want = torch.nn.functional.silu(torch.addmm(biasf, af, bf, beta=beta, alpha=alpha))
    torch.testing.assert_close(y.float(), want, atol=2e-2, rtol=2e-2)
    g = rand(64, 80)
    got = torch.autograd.grad(y, (a, b, bias), g)
    ref = torch.autograd.grad(want, (af, bf, biasf), g.float())
    for x, r in zip(got, ref):
        torch.testing.assert_close(x.float(), r, atol=5e-2, rtol=5e-2)
