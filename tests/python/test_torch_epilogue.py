# SPDX-License-Identifier: Apache-2.0
"""The fused epilogue from Python: torch.ops.hgemm.addmm (act(a·b + bias)) and hgemm::_addmm_aux
(the same and the pre-activation Z), their fake kernels, autograd and opcheck, hgemm.matmul's bias,
activation and aux_out, and hgemm.nn.Linear(activation=...).

Without a GPU: schemas, fake kernels, argument errors, opcheck and AOT autograd on meta tensors,
and the autograd's arithmetic on the CPU, with the operators computed by torch (ReferenceKernels).
With a GPU: the CUDA kernels against float32 torch (skipped without one)."""
import pytest

torch = pytest.importorskip("torch")

import hgemm  # noqa: E402
import hgemm.nn  # noqa: E402
import hgemm.torch_ops  # noqa: E402
from torch.utils._python_dispatch import TorchDispatchMode  # noqa: E402

F16, BF16, F32 = torch.float16, torch.bfloat16, torch.float32
functional = torch.nn.functional
ACTIVATIONS = ["none", "relu", "gelu", "gelu_tanh", "silu"]

# The activations as torch computes them: the references.
TORCH_ACT = {
    "none": lambda z: z,
    "relu": torch.relu,
    "gelu": functional.gelu,
    "gelu_tanh": lambda z: functional.gelu(z, approximate="tanh"),
    "silu": functional.silu,
}
TORCH_MODULE = {
    "relu": torch.nn.ReLU,
    "gelu": torch.nn.GELU,
    "gelu_tanh": lambda: torch.nn.GELU(approximate="tanh"),
    "silu": torch.nn.SiLU,
}
addmm, addmm_aux = torch.ops.hgemm.addmm.default, torch.ops.hgemm._addmm_aux.default


def meta(*shape, dtype=F16, requires_grad=False):
    return torch.empty(*shape, dtype=dtype, device="meta", requires_grad=requires_grad)


# ---- schemas, fake kernels, errors (meta tensors) ----

def test_schemas():
    assert str(torch.ops.hgemm.addmm.default._schema) == (
        'hgemm::addmm(Tensor? bias, Tensor a, Tensor b, *, Scalar beta=1, Scalar alpha=1, str activation="none", str accum="f32", '
        'str kernel_id="auto", ScalarType? out_dtype=None) -> Tensor')
    assert str(torch.ops.hgemm._addmm_aux.default._schema) == (
        'hgemm::_addmm_aux(Tensor? bias, Tensor a, Tensor b, *, Scalar beta=1, Scalar alpha=1, str activation="none", str accum="f32", '
        'str kernel_id="auto", ScalarType? out_dtype=None) -> (Tensor, Tensor)')
    assert hgemm.torch_ops.addmm is addmm


@pytest.mark.parametrize("name", ["addmm", "_addmm_aux"])
def test_autograd_is_registered(name):
    assert torch._C._dispatch_has_kernel_for_dispatch_key(f"hgemm::{name}", "Autograd")


@pytest.mark.parametrize("bias_dtype", [None, F16, BF16, F32])
@pytest.mark.parametrize("out_dtype", [None, F32, BF16])
def test_fake_shapes_and_dtypes(bias_dtype, out_dtype):
    """The output (and Z) is M×N of out_dtype (a's dtype by default), whatever the bias's dtype."""
    a, b = meta(5, 3), meta(3, 4)
    bias = None if bias_dtype is None else meta(4, dtype=bias_dtype)
    want = F16 if out_dtype is None else out_dtype
    y = addmm(bias, a, b, activation="gelu", out_dtype=out_dtype)
    assert y.shape == (5, 4) and y.dtype == want
    d, z = addmm_aux(bias, a, b, activation="silu", out_dtype=out_dtype)
    assert d.shape == z.shape == (5, 4) and d.dtype == z.dtype == want


def test_fake_rejects_bad_arguments():
    a, b = meta(5, 3), meta(3, 4)
    for op in (addmm, addmm_aux):
        with pytest.raises(ValueError, match=r"argument 'activation': expected None, 'relu', 'gelu' \(erf\), "
                                             r"'gelu_tanh' or 'silu'"):
            op(None, a, b, activation="tanh")
        with pytest.raises(ValueError, match=r"argument 'bias': expected a 1-D array of 4 values \(one per column"):
            op(meta(5), a, b)
        with pytest.raises(ValueError, match=r"got shape \(1, 4\)"):
            op(meta(1, 4), a, b)
        with pytest.raises(TypeError, match="argument 'bias': expected dtype float16, bfloat16 or float32"):
            op(meta(4, dtype=torch.float64), a, b)
        with pytest.raises(TypeError, match="argument 'bias': expected dtype"):
            op(meta(4, dtype=torch.int32), a, b)
        with pytest.raises(ValueError, match="argument 'bias': expected a tensor on a's device meta, got one on cpu"):
            op(torch.zeros(4, dtype=F16), a, b)
        with pytest.raises(ValueError, match="argument 'a': expected a 2-D tensor"):
            op(None, meta(2, 5, 3), b)
        with pytest.raises(ValueError, match="shapes do not match"):
            op(None, a, meta(4, 4))
        with pytest.raises(TypeError, match="float16 or bfloat16"):
            op(None, a.float(), b.float())
        with pytest.raises(TypeError, match="both must have one dtype"):
            op(None, a, b.bfloat16())
        with pytest.raises(ValueError, match=r"argument 'kernel_id': expected 'auto' or an id from hgemm.kernels\(\)"):
            op(None, a, b, kernel_id="cuda.warp_drive")


def test_cpu_tensors_are_refused_with_a_type_error():
    a = torch.ones(3, 4, dtype=F16)
    for op in (addmm, addmm_aux):
        with pytest.raises(TypeError, match="expected an array in CUDA memory"):
            op(None, a, a.t(), activation="relu")


# ---- opcheck and AOT autograd (meta tensors) ----

@pytest.mark.parametrize("activation", ACTIVATIONS)
@pytest.mark.parametrize("with_bias", [True, False])
@pytest.mark.parametrize("name", ["addmm", "_addmm_aux"])
def test_opcheck_meta(activation, with_bias, name):
    """Schema, autograd registration, fake kernel and AOT autograd (forward and backward traced with
    dynamic shapes), for every activation, with and without a bias."""
    a, b = meta(6, 4, requires_grad=True), meta(4, 5, requires_grad=True)
    bias = meta(5, requires_grad=True) if with_bias else None
    res = torch.library.opcheck(getattr(torch.ops.hgemm, name), (bias, a, b), {"activation": activation})
    assert set(res) >= {"test_schema", "test_autograd_registration", "test_faketensor", "test_aot_dispatch_dynamic"}
    assert set(res.values()) == {"SUCCESS"}


@pytest.mark.parametrize("dtype,bias_dtype,out_dtype", [(BF16, BF16, None), (F16, F32, None), (BF16, F32, F32),
                                                         (F16, F16, F32), (BF16, BF16, F16)])
def test_opcheck_types_meta(dtype, bias_dtype, out_dtype):
    a, b = meta(6, 4, dtype=dtype, requires_grad=True), meta(4, 5, dtype=dtype, requires_grad=True)
    bias = meta(5, dtype=bias_dtype, requires_grad=True)
    kwargs = {"activation": "gelu_tanh"} if out_dtype is None else {"activation": "gelu_tanh", "out_dtype": out_dtype}
    assert set(torch.library.opcheck(addmm, (bias, a, b), kwargs).values()) == {"SUCCESS"}


@pytest.mark.parametrize("activation", ACTIVATIONS)
@pytest.mark.parametrize("need", [(True, True, True), (True, False, False), (False, True, False),
                                  (False, False, True)])
def test_meta_backward_gives_the_gradients_asked_for(activation, need):
    """Only the gradients asked for are computed; each has its input's shape, dbias the bias's dtype
    (float32 here) and dA, dB the inputs'."""
    bias = meta(5, dtype=F32, requires_grad=need[0])
    a, b = meta(6, 4, requires_grad=need[1]), meta(4, 5, requires_grad=need[2])
    y = addmm(bias, a, b, activation=activation)
    assert y.requires_grad and y.shape == (6, 5)
    wanted = [t for t, n in zip((bias, a, b), need) if n]
    grads = torch.autograd.grad(y, wanted, torch.empty_like(y))
    assert [(g.shape, g.dtype) for g in grads] == [(t.shape, t.dtype) for t in wanted]


class Log(TorchDispatchMode):
    """The hgemm operators that run below autograd."""

    def __init__(self):
        super().__init__()
        self.ops = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        if str(func).startswith("hgemm."):
            self.ops.append(str(func))
        return func(*args, **(kwargs or {}))


@pytest.mark.parametrize("activation", ACTIVATIONS)
def test_forward_keeps_z_only_where_the_backward_reads_it(activation):
    """With a gradient wanted, gelu, gelu_tanh and silu run _addmm_aux (one launch writes the output
    and Z) and save Z; relu saves the output, none saves neither. Without a gradient addmm runs."""
    a, b, bias = meta(6, 4, requires_grad=True), meta(4, 5), meta(5)
    saved = []

    def pack(t):
        saved.append(tuple(t.shape))
        return t

    with Log() as log, torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        addmm(bias, a, b, activation=activation)
    reads_z = activation in ("gelu", "gelu_tanh", "silu")
    assert log.ops == ["hgemm._addmm_aux.default" if reads_z else "hgemm.addmm.default"]
    assert saved.count((6, 5)) == (0 if activation == "none" else 1)  # b is 4x5: saved for dA
    with Log() as log, torch.no_grad():
        addmm(bias, a, b, activation=activation)
    assert log.ops == ["hgemm.addmm.default"]


@pytest.mark.parametrize("backend", ["eager", "aot_eager"])
@pytest.mark.parametrize("activation", ["relu", "gelu", "silu"])
def test_compile_fullgraph_traces_on_meta(backend, activation):
    """Dynamo traces addmm, hgemm.matmul with an epilogue and a Linear with an activation without a
    graph break, and AOT autograd gets the backward, without a GPU."""
    layer = hgemm.nn.Linear(16, 32, device="meta", dtype=F16, activation=activation)
    w = meta(32, 8, requires_grad=True)

    def f(x, bias):
        return hgemm.matmul(addmm(bias, layer(x), w, activation="gelu_tanh"), w.t(), activation=activation)

    torch._dynamo.reset()
    x, bias = meta(4, 16, requires_grad=True), meta(8, requires_grad=True)
    y = torch.compile(f, fullgraph=True, backend=backend)(x, bias)
    assert y.shape == (4, 32)
    y.sum().backward()
    assert x.grad.shape == x.shape and bias.grad.shape == bias.shape and w.grad.shape == w.shape
    assert layer.weight.grad.shape == layer.weight.shape and layer.bias.grad.shape == layer.bias.shape


def test_inductor_lowers_addmm_and_addmm_aux():
    """Inductor compiles a graph holding addmm and the two outputs of _addmm_aux (as fallback
    kernels); on CPU tensors the compiled code reaches their CPU kernel, whose TypeError shows that
    lowering and compiling succeeded."""
    def f(x, w, v, bias):
        return addmm(bias, addmm(None, x, w, activation="relu"), v, activation="gelu") * 2

    torch._dynamo.reset()
    x, w = torch.ones(8, 16, dtype=F16, requires_grad=True), torch.ones(16, 32, dtype=F16, requires_grad=True)
    v, bias = torch.ones(32, 4, dtype=F16, requires_grad=True), torch.ones(4, dtype=F16, requires_grad=True)
    with pytest.raises(TypeError, match="expected an array in CUDA memory"):
        torch.compile(f, fullgraph=True, backend="inductor")(x, w, v, bias)


# ---- hgemm.matmul's and hgemm.nn's arguments ----

def test_matmul_checks_the_activation():
    a, b = meta(6, 4, requires_grad=True), meta(4, 5)
    for bad in ("tanh", "GELU", 1, torch.nn.GELU()):
        with pytest.raises(ValueError, match="argument 'activation': expected None, 'relu', 'gelu'"):
            hgemm.matmul(a, b, activation=bad)
        with pytest.raises(ValueError, match="argument 'activation': expected None"):
            hgemm.matmul(a.detach(), b, activation=bad)
        with pytest.raises(ValueError, match="argument 'activation': expected None"):
            hgemm.nn.Linear(4, 5, activation=bad)
        with pytest.raises(ValueError, match="argument 'activation': expected None"):
            hgemm.nn.linear(a, b.t(), activation=bad)


def test_matmul_with_grad_routes_the_epilogue_through_addmm():
    a, b, bias = meta(6, 4, requires_grad=True), meta(4, 5), meta(5)
    with Log() as log:
        y = hgemm.matmul(a, b, bias=bias, activation="relu")
    assert log.ops == ["hgemm.addmm.default"] and y.shape == (6, 5) and y.requires_grad
    with Log() as log:  # only the bias needs a gradient
        y = hgemm.matmul(a.detach(), b, bias=meta(5, requires_grad=True), activation="silu", out_dtype="f32")
    assert log.ops == ["hgemm._addmm_aux.default"] and y.dtype == F32 and y.requires_grad
    x = meta(3, 6, 4, requires_grad=True)  # a batch of rows times one matrix: flattened into addmm's a
    y = hgemm.matmul(x, b, bias=bias, activation="gelu")
    assert y.shape == (3, 6, 5)
    y.backward(torch.empty_like(y))
    assert x.grad.shape == x.shape


def test_matmul_with_grad_refuses_what_would_drop_the_gradient():
    a, b, bias = meta(6, 4, requires_grad=True), meta(4, 5), meta(5)
    with pytest.raises(ValueError, match="aux_out="):
        hgemm.matmul(a, b, bias=bias, activation="gelu", aux_out=meta(6, 5))
    # a batch of b with a bias: taken with grad as without (the product, then the bias by torch)
    y = hgemm.matmul(meta(3, 6, 4, requires_grad=True), meta(3, 4, 5), bias=bias, activation="relu")
    assert y.shape == (3, 6, 5) and y.dtype == F16 and y.requires_grad
    with pytest.raises(TypeError, match="argument 'bias': expected a 1-D tensor"):
        hgemm.matmul(a, b, bias=[0.0] * 5)


def test_matmul_fast_path_checks_the_bias_before_the_device():
    """Without gradients (the direct call) a bias of an unsupported dtype or rank is named before
    the CPU tensors are refused."""
    a, b = torch.ones(6, 4, dtype=F16), torch.ones(4, 5, dtype=F16)
    with pytest.raises(TypeError, match=r"argument 'bias': expected dtype float16, bfloat16 or float32, got float64"):
        hgemm.matmul(a, b, bias=torch.ones(5, dtype=torch.float64))
    with pytest.raises(ValueError, match=r"argument 'bias': expected a 1-D array of 5 values .*got shape \(1, 5\)"):
        hgemm.matmul(a, b, bias=torch.ones(1, 5, dtype=F16))
    with pytest.raises(TypeError, match=r"argument 'aux_out': expected dtype float16, bfloat16 or float32, got int32"):
        hgemm.matmul(a, b, aux_out=torch.ones(6, 5, dtype=torch.int32))
    with pytest.raises(TypeError, match="CUDA"):
        hgemm.matmul(a, b, bias=torch.ones(5, dtype=F16), activation="gelu")


@pytest.mark.parametrize("activation", [None, "relu", "gelu", "gelu_tanh", "silu"])
@pytest.mark.parametrize("bias", [True, False])
def test_linear_parameters_state_dict_and_repr(activation, bias):
    """activation adds no parameter: the state dict is torch.nn.Linear's, loadable both ways; the
    repr names the activation, and without one is torch's."""
    ours = hgemm.nn.Linear(8, 4, bias=bias, activation=activation, dtype=F16)
    ref = torch.nn.Linear(8, 4, bias=bias, dtype=F16)
    assert list(ours.state_dict()) == list(ref.state_dict())
    ours.load_state_dict(ref.state_dict())
    ref.load_state_dict(ours.state_dict())
    assert ours.activation == activation
    if activation is None:
        assert repr(ours) == repr(ref)
    else:
        assert repr(ours) == repr(ref)[:-1] + f", activation={activation!r})"


@pytest.mark.parametrize("activation", ACTIVATIONS)
@pytest.mark.parametrize("lead", [(), (5,), (2, 3)])
def test_linear_any_leading_shape_on_meta(activation, lead):
    layer = hgemm.nn.Linear(8, 6, device="meta", dtype=F16, activation=activation)
    x = meta(*lead, 8, requires_grad=True)
    y = layer(x)
    assert y.shape == (*lead, 6)
    y.backward(torch.empty_like(y))
    assert x.grad.shape == x.shape and layer.weight.grad.shape == (6, 8) and layer.bias.grad.shape == (6,)
    assert layer.weight.grad.is_contiguous()


# ---- the autograd's arithmetic, on the CPU ----

@pytest.mark.parametrize("activation", ACTIVATIONS)
@pytest.mark.parametrize("dtype", [torch.float64, F32])
def test_activation_backward_is_the_exact_derivative(activation, dtype):
    """dZ = g·act'(Z) as the backward computes it is torch autograd's derivative of the activation
    (erf GELU, tanh GELU, SiLU, ReLU), over Z across the range where they bend and far out."""
    z = torch.cat([torch.linspace(-12, 12, 2401, dtype=dtype), torch.tensor([0.0, -0.0, 30.0, -30.0], dtype=dtype)])
    g = torch.linspace(-2, 3, z.numel(), dtype=dtype)
    zr = z.clone().requires_grad_()
    y = TORCH_ACT[activation](zr)
    (want,) = torch.autograd.grad(y, zr, g)
    saved = y.detach() if activation == "relu" else z
    got = hgemm.torch_ops._activation_backward(g, saved, activation)
    torch.testing.assert_close(got, want, rtol=0, atol=0)


class ReferenceKernels(TorchDispatchMode):
    """hgemm's operators computed by torch in float32 and rounded to their output's dtype, as the
    CUDA kernels are: runs the operators' autograd (what the forward saves, dZ, dbias, the
    backward's products through hgemm::mm) on the CPU, without a GPU."""

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if func in (torch.ops.hgemm.mm.default, torch.ops.hgemm.matmul.default):
            a, b = args
            return torch.matmul(a.float(), b.float()).to(kwargs.get("out_dtype") or a.dtype)
        if func in (addmm, addmm_aux):
            bias, a, b = args
            dtype = kwargs.get("out_dtype") or a.dtype
            z = a.float() @ b.float() + (0 if bias is None else bias.float())
            d = TORCH_ACT[kwargs.get("activation", "none")](z).to(dtype)
            return (d, z.to(dtype)) if func is addmm_aux else d
        return func(*args, **kwargs)


def unit(dtype):
    """The unit roundoff of a 16-bit dtype."""
    return 2.0 ** -11 if dtype == F16 else 2.0 ** -8


def rel_error(got, want):
    return (got.double() - want.double()).norm().item() / max(want.double().norm().item(), 1e-30)


def tol_forward(k, dtype):
    """act(a·b + bias) against float32 torch: the f32 sum over k products (k·2^-22 bounds its
    relative error, as the other tests take it), the activation in f32 (2 ulp), then one rounding to
    dtype (u/2 per element). An activation can shrink the norm the error is measured against (relu
    keeps about half of it), hence 2k·2^-22; and 2u, four times the rounding, leaves room for
    values near 0, where the relative rounding error of a 16-bit number is largest."""
    return 2 * unit(dtype) + 2 * k * 2.0 ** -22


def tol_grad(k, dtype):
    """A gradient against float32 autograd on the same 16-bit inputs and incoming gradient. dZ =
    g·act'(Z) reads Z rounded to dtype (u/2): act' moves by |z·act''(z)|·u/2 ≤ u/4 there (≤ 0.5 for
    GELU and SiLU; relu's mask is exact), and dZ is rounded to dtype (u/2); then a sum over k
    terms (k·2^-22) and one more rounding (u/2). 4u + 2k·2^-22 bounds these with the factor of two
    the forward keeps."""
    return 4 * unit(dtype) + 2 * k * 2.0 ** -22


def reference_grads(bias, a, b, g, activation):
    """float32 torch autograd of act(a·b + bias) with incoming gradient g: (output, dbias, da, db)."""
    af, bf = a.detach().float().requires_grad_(), b.detach().float().requires_grad_()
    biasf = None if bias is None else bias.detach().float().requires_grad_()
    z = af @ bf if biasf is None else af @ bf + biasf
    y = TORCH_ACT[activation](z)
    y.backward(g.float())
    return y.detach(), None if biasf is None else biasf.grad, af.grad, bf.grad


@pytest.mark.parametrize("activation", ACTIVATIONS)
@pytest.mark.parametrize("dtype", [F16, BF16])
@pytest.mark.parametrize("transposed", [False, True])
def test_gradients_on_the_cpu_with_reference_kernels(activation, dtype, transposed):
    """The backward against float32 autograd, each gradient in its input's dtype and, for a weight
    used as a transposed view (nn.Linear's), laid out like its input."""
    g = torch.Generator().manual_seed(5)

    def rand(*shape):
        return (torch.rand(*shape, generator=g) * 2 - 1).to(dtype)

    m, k, n = 37, 29, 23
    a = rand(m, k).requires_grad_()
    w = rand(n, k).requires_grad_() if transposed else rand(k, n).requires_grad_()
    bias = rand(n).requires_grad_()
    grad = rand(m, n)
    with ReferenceKernels():
        y = addmm(bias, a, w.t() if transposed else w, activation=activation)
        y.backward(grad)
    b = w.t() if transposed else w
    want, dbias, da, db = reference_grads(bias, a, b, grad, activation)
    assert rel_error(y.detach(), want) < tol_forward(k, dtype)
    assert bias.grad.dtype == a.grad.dtype == w.grad.dtype == dtype
    assert w.grad.stride() == w.stride()
    assert rel_error(bias.grad, dbias) < tol_grad(m, dtype)
    assert rel_error(a.grad, da) < tol_grad(n, dtype)
    assert rel_error(w.grad.t() if transposed else w.grad, db) < tol_grad(m, dtype)


@pytest.mark.parametrize("activation", ["gelu", "silu", "relu"])
def test_aux_output_gradient_adds_to_dz(activation):
    """_addmm_aux's Z is differentiable too: a loss of both outputs gets dZ = dD·act'(Z) + dZ_aux."""
    g = torch.Generator().manual_seed(2)
    a = (torch.rand(9, 7, generator=g) - 0.5).half().requires_grad_()
    b = (torch.rand(7, 5, generator=g) - 0.5).half().requires_grad_()
    bias = (torch.rand(5, generator=g) - 0.5).half().requires_grad_()
    gd, gz = (torch.rand(9, 5, generator=g) - 0.5).half(), (torch.rand(9, 5, generator=g) - 0.5).half()
    with ReferenceKernels():
        d, z = addmm_aux(bias, a, b, activation=activation)
        torch.autograd.backward([d, z], [gd, gz])
    af, bf, biasf = (t.detach().float().requires_grad_() for t in (a, b, bias))
    zf = af @ bf + biasf
    torch.autograd.backward([TORCH_ACT[activation](zf), zf], [gd.float(), gz.float()])
    for got, want in ((a.grad, af.grad), (b.grad, bf.grad), (bias.grad, biasf.grad)):
        assert rel_error(got, want) < tol_grad(9, F16)
    with ReferenceKernels():  # Z alone: dD is None, not zeros
        a.grad = None
        addmm_aux(None, a, b, activation=activation)[1].backward(gz)
    assert rel_error(a.grad, gz.float() @ b.detach().float().t()) < tol_grad(5, F16)


@pytest.mark.parametrize("activation", [None, "relu", "gelu", "gelu_tanh", "silu"])
def test_linear_with_activation_on_the_cpu_with_reference_kernels(activation):
    """hgemm.nn.Linear(activation=...) against torch.nn.Linear followed by torch's activation module,
    from the same weights, forward and gradients."""
    torch.manual_seed(0)
    ours = hgemm.nn.Linear(24, 16, activation=activation, dtype=F16)
    linear = torch.nn.Linear(24, 16)
    linear.load_state_dict(ours.state_dict())
    ref = linear if activation is None else torch.nn.Sequential(linear, TORCH_MODULE[activation]())
    x = (torch.rand(3, 11, 24) * 2 - 1).half().requires_grad_()
    grad = (torch.rand(3, 11, 16) * 2 - 1).half()
    with ReferenceKernels():
        y = ours(x)
        y.backward(grad)
    x32 = x.detach().float().requires_grad_()
    want = ref(x32)
    want.backward(grad.float())
    assert y.shape == want.shape and rel_error(y.detach(), want) < tol_forward(24, F16)
    assert rel_error(x.grad, x32.grad) < tol_grad(16, F16)
    assert rel_error(ours.weight.grad, linear.weight.grad) < tol_grad(33, F16)
    assert rel_error(ours.bias.grad, linear.bias.grad) < tol_grad(33, F16)


# ---- GPU ----

_GPU = {}


@pytest.fixture
def gpu():
    """Skips unless torch has a CUDA device and hgemm runs an epilogue on it."""
    if "reason" not in _GPU:
        reason = None
        if not torch.cuda.is_available():
            reason = "no CUDA device"
        else:
            try:
                x = torch.zeros(8, 8, device="cuda", dtype=F16)
                hgemm.matmul(x, x, bias=torch.zeros(8, device="cuda", dtype=F16), activation="relu")
                torch.cuda.synchronize()
            except (RuntimeError, ValueError, TypeError) as e:
                reason = f"hgemm cannot run on this GPU: {e}"
        _GPU["reason"] = reason
    if _GPU["reason"]:
        pytest.skip(_GPU["reason"])


def rand(*shape, requires_grad=False, dtype=F16):
    return ((torch.rand(*shape, device="cuda") * 2 - 1).to(dtype)).requires_grad_(requires_grad)


SHAPES = [(1, 1, 1), (127, 129, 65), (1000, 1001, 1003)]  # M, K, N: one element, ragged, past a wave


def tol_f32_aux(k, dtype):
    """Z in a float32 aux_out against float32 torch. On Hopper the engine fuses the epilogue and
    writes the f32 sum itself: two f32 sums over k products in different orders (2k·2^-22), plus
    2^-20 for the bias's addition and small k. Elsewhere "auto" follows the product with a pass
    that reads Z back from the output, rounded to its dtype first: tol_forward."""
    if torch.cuda.get_device_capability()[0] == 9:
        return 2 * k * 2.0 ** -22 + 2.0 ** -20
    return tol_forward(k, dtype)


@pytest.mark.parametrize("m,k,n", SHAPES)
@pytest.mark.parametrize("activation", ACTIVATIONS)
@pytest.mark.parametrize("with_bias", [True, False])
@pytest.mark.parametrize("dtype", [F16, BF16])
def test_forward_matches_fp32(gpu, m, k, n, activation, with_bias, dtype):
    torch.manual_seed(0)
    a, b = rand(m, k, dtype=dtype), rand(k, n, dtype=dtype)
    bias = rand(n, dtype=dtype) if with_bias else None
    z32 = a.float() @ b.float() + (0 if bias is None else bias.float())
    want = TORCH_ACT[activation](z32)
    y = addmm(bias, a, b, activation=activation)
    assert y.dtype == dtype and y.shape == (m, n)
    assert rel_error(y, want) < tol_forward(k, dtype)
    via_matmul = hgemm.matmul(a, b, bias=bias, activation=None if activation == "none" else activation)
    assert torch.equal(via_matmul, y)  # the same call to the library


@pytest.mark.parametrize("m,k,n", SHAPES)
@pytest.mark.parametrize("activation", ACTIVATIONS)
@pytest.mark.parametrize("dtype", [F16, BF16])
def test_aux_is_the_pre_activation(gpu, m, k, n, activation, dtype):
    """_addmm_aux's Z, and hgemm.matmul's aux_out (float16/bfloat16, and float32), hold
    a·b + bias: one rounding of the f32 sum, as the output."""
    torch.manual_seed(1)
    a, b, bias = rand(m, k, dtype=dtype), rand(k, n, dtype=dtype), rand(n, dtype=dtype)
    z32 = a.float() @ b.float() + bias.float()
    d, z = addmm_aux(bias, a, b, activation=activation)
    assert z.dtype == d.dtype == dtype
    assert rel_error(z, z32) < tol_forward(k, dtype)
    assert rel_error(d, TORCH_ACT[activation](z32)) < tol_forward(k, dtype)
    aux = torch.empty(m, n, device="cuda", dtype=F32)
    out = hgemm.matmul(a, b, bias=bias, activation=activation, aux_out=aux)
    assert torch.equal(out, d)
    assert rel_error(aux, z32) < tol_f32_aux(k, dtype)


@pytest.mark.parametrize("m,k,n", SHAPES)
@pytest.mark.parametrize("activation", ACTIVATIONS)
@pytest.mark.parametrize("with_bias", [True, False])
@pytest.mark.parametrize("dtype", [F16, BF16])
def test_gradients_match_fp32_autograd(gpu, m, k, n, activation, with_bias, dtype):
    torch.manual_seed(2)
    a, b = rand(m, k, requires_grad=True, dtype=dtype), rand(k, n, requires_grad=True, dtype=dtype)
    bias = rand(n, requires_grad=True, dtype=dtype) if with_bias else None
    g = rand(m, n, dtype=dtype)
    y = addmm(bias, a, b, activation=activation)
    y.backward(g)
    want, dbias, da, db = reference_grads(bias, a, b, g, activation)
    assert rel_error(y.detach(), want) < tol_forward(k, dtype)
    assert a.grad.dtype == b.grad.dtype == dtype
    assert rel_error(a.grad, da) < tol_grad(n, dtype)
    assert rel_error(b.grad, db) < tol_grad(m, dtype)
    if with_bias:
        assert bias.grad.dtype == dtype and rel_error(bias.grad, dbias) < tol_grad(m, dtype)


@pytest.mark.parametrize("activation", ["gelu", "silu"])
def test_float32_bias_and_output(gpu, activation):
    """A float32 bias gets a float32 gradient; out_dtype=float32 keeps Z and dZ in float32, and dA and
    dB come in the inputs' dtype."""
    torch.manual_seed(3)
    a, b = rand(200, 96, requires_grad=True, dtype=BF16), rand(96, 72, requires_grad=True, dtype=BF16)
    bias = rand(72, requires_grad=True, dtype=F32)
    g = rand(200, 72, dtype=BF16).float()
    y = addmm(bias, a, b, activation=activation, out_dtype=F32)
    assert y.dtype == F32
    y.backward(g)
    want, dbias, da, db = reference_grads(bias, a, b, g, activation)
    assert rel_error(y.detach(), want) < 2 * 96 * 2.0 ** -22 + 2.0 ** -20
    assert bias.grad.dtype == F32 and rel_error(bias.grad, dbias) < 2 * 200 * 2.0 ** -22 + 2.0 ** -20
    assert a.grad.dtype == BF16 and rel_error(a.grad, da) < tol_grad(72, BF16)  # dZ rounded to bfloat16
    assert b.grad.dtype == BF16 and rel_error(b.grad, db) < tol_grad(200, BF16)


@pytest.mark.parametrize("need", [(True, False, False), (False, True, False), (False, False, True)])
def test_needs_input_grad(gpu, need):
    bias, a, b = rand(8, requires_grad=need[0]), rand(32, 16, requires_grad=need[1]), rand(16, 8, requires_grad=need[2])
    addmm(bias, a, b, activation="gelu").sum().backward()
    assert [(t.grad is not None) for t in (bias, a, b)] == list(need)


@pytest.mark.parametrize("activation", ["relu", "gelu", "gelu_tanh", "silu"])
@pytest.mark.parametrize("dtype", [F16, BF16])
def test_linear_matches_torch_linear_and_activation(gpu, activation, dtype):
    """hgemm.nn.Linear(activation=...) against torch.nn.Linear + the torch activation in float32,
    from the same weights: the output and the gradients of x, the weight and the bias."""
    torch.manual_seed(4)
    layer = hgemm.nn.Linear(96, 80, device="cuda", dtype=dtype, activation=activation)
    linear = torch.nn.Linear(96, 80, device="cuda")
    linear.load_state_dict(layer.state_dict())
    ref = torch.nn.Sequential(linear, TORCH_MODULE[activation]())
    x, g = rand(3, 37, 96, requires_grad=True, dtype=dtype), rand(3, 37, 80, dtype=dtype)
    y = layer(x)
    y.backward(g)
    x32 = x.detach().float().requires_grad_()
    want = ref(x32)
    want.backward(g.float())
    assert y.dtype == dtype and rel_error(y, want) < tol_forward(96, dtype)
    assert rel_error(x.grad, x32.grad) < tol_grad(80, dtype)
    assert rel_error(layer.weight.grad, linear.weight.grad) < tol_grad(3 * 37, dtype)
    assert rel_error(layer.bias.grad, linear.bias.grad) < tol_grad(3 * 37, dtype)


def test_torch_compile_fullgraph_with_activations(gpu):
    """Inductor compiles a Linear with an activation and addmm with another (forward and backward),
    and the results match float32 torch from the same weights."""
    torch.manual_seed(5)
    layer = hgemm.nn.Linear(64, 96, device="cuda", dtype=F16, activation="gelu")
    w, bias = rand(96, 32, requires_grad=True), rand(32, requires_grad=True)

    def f(x):
        return addmm(bias, layer(x), w, activation="silu")

    torch._dynamo.reset()
    x, g = rand(50, 64, requires_grad=True), rand(50, 32)
    y = torch.compile(f, fullgraph=True)(x)
    y.backward(g)
    lw, lb = (p.detach().float().requires_grad_() for p in (layer.weight, layer.bias))
    x32, w32, b32 = (t.detach().float().requires_grad_() for t in (x, w, bias))
    want = functional.silu(functional.gelu(x32 @ lw.t() + lb) @ w32 + b32)
    want.backward(g.float())
    # two products, the hidden layer's output rounded to float16 before the second
    assert rel_error(y.detach(), want) < 2 * tol_forward(96, F16)
    for got, ref in ((x.grad, x32.grad), (w.grad, w32.grad), (bias.grad, b32.grad), (layer.weight.grad, lw.grad),
                     (layer.bias.grad, lb.grad)):
        assert rel_error(got, ref) < 2 * tol_grad(96, F16)


def test_matmul_epilogue_on_batches_and_transposed_outputs(gpu):
    """hgemm.matmul's direct path: a batch with one shared bias, and a transposed out whose aux_out
    is transposed too (the library then computes the transposed problem, the bias along its rows)."""
    torch.manual_seed(6)
    x, w, bias = rand(4, 65, 96), rand(96, 40), rand(40)
    z = x.float() @ w.float() + bias.float()
    aux = torch.empty(4, 65, 40, device="cuda", dtype=F16)
    y = hgemm.matmul(x, w, bias=bias, activation="gelu_tanh", aux_out=aux)
    assert rel_error(y, TORCH_ACT["gelu_tanh"](z)) < tol_forward(96, F16)
    assert rel_error(aux, z) < tol_forward(96, F16)
    out = torch.empty(40, 65, device="cuda", dtype=F16).t()
    aux_t = torch.empty(40, 65, device="cuda", dtype=BF16).t()
    hgemm.matmul(x[0], w, out=out, bias=bias, activation="silu", aux_out=aux_t)
    assert rel_error(out, functional.silu(z[0])) < tol_forward(96, F16)
    assert rel_error(aux_t, z[0]) < tol_forward(96, BF16)


def test_k_zero_gives_the_activation_of_the_bias(gpu):
    a, b, bias = rand(5, 0), rand(0, 7), rand(7)
    y = hgemm.matmul(a, b, bias=bias, activation="gelu")
    assert rel_error(y, functional.gelu(bias.float()).expand(5, 7)) < tol_forward(1, F16)


def test_dlpack_path_takes_the_epilogue(gpu):
    """The DLPack entry (any framework; torch tensors here, through __dlpack__) with bias and aux_out."""
    torch.manual_seed(7)
    a, b, bias = rand(33, 48), rand(48, 20), rand(20, dtype=F32)
    out, aux = torch.empty(33, 20, device="cuda", dtype=F16), torch.empty(33, 20, device="cuda", dtype=F32)
    torch.cuda.synchronize()
    hgemm._hgemm.gemm(a, b, out, 1.0, 0.0, "f32", "auto", False, False, 0, bias=bias, activation="relu",
                      aux_out=aux)
    torch.cuda.synchronize()
    z = a.float() @ b.float() + bias
    assert rel_error(out, torch.relu(z)) < tol_forward(48, F16)
    assert rel_error(aux, z) < tol_f32_aux(48, F16)


def test_cupy_epilogue_if_available(gpu):
    cupy = pytest.importorskip("cupy")
    a = cupy.random.uniform(-1, 1, (65, 33)).astype(cupy.float16)
    b = cupy.random.uniform(-1, 1, (33, 17)).astype(cupy.float16)
    bias = cupy.random.uniform(-1, 1, 17).astype(cupy.float32)
    out = cupy.empty((65, 17), dtype=cupy.float16)
    hgemm.matmul(a, b, out=out, bias=bias, activation="relu")
    want = cupy.maximum(a.astype(cupy.float64) @ b.astype(cupy.float64) + bias, 0)
    err = float(cupy.linalg.norm(out.astype(cupy.float64) - want) / cupy.linalg.norm(want))
    assert err < tol_forward(33, F16)


def test_bad_epilogue_arguments_on_the_gpu(gpu):
    a, b = rand(6, 4), rand(4, 5)
    with pytest.raises(ValueError, match=r"argument 'bias': expected a 1-D array of 5 values \(one per column of "
                                         r"the product\), got shape \(6,\)"):
        hgemm.matmul(a, b, bias=rand(6))
    strided = rand(10)[::2]  # a strided bias is copied, with and without grad alike
    want = hgemm.matmul(a, b, bias=strided.contiguous())
    torch.testing.assert_close(hgemm.matmul(a, b, bias=strided), want)
    torch.testing.assert_close(hgemm.matmul(a, b, bias=strided.detach().requires_grad_()).detach(), want)
    with pytest.raises(TypeError, match="argument 'bias': expected an array in CUDA memory"):
        hgemm.matmul(a, b, bias=torch.zeros(5, dtype=F16))
    with pytest.raises(ValueError, match="argument 'aux_out': must have out's shape"):
        hgemm.matmul(a, b, activation="gelu", aux_out=rand(5, 6))
    with pytest.raises(ValueError, match="laid out like out"):
        hgemm.matmul(a, b, activation="gelu", aux_out=rand(5, 6).t())
    with pytest.raises(ValueError, match="argument 'bias': expected a 1-D array of 5 values"):
        addmm(rand(6), a, b)
    with pytest.raises(ValueError, match="argument 'bias': expected a tensor on a's device"):
        addmm(torch.zeros(5, dtype=F16), a, b)
    with pytest.raises(ValueError, match="cannot apply a fused epilogue"):  # a ladder rung refuses it
        hgemm.matmul(a, b, activation="relu", kernel_id="cuda.naive")


@pytest.mark.parametrize("activation", ["none", "gelu"])
def test_opcheck_cuda(gpu, activation):
    """The CUDA and fake kernels agree, and the gradients check, with and without Z saved."""
    a, b, bias = rand(33, 16, requires_grad=True), rand(16, 24, requires_grad=True), rand(24, requires_grad=True)
    torch.library.opcheck(addmm, (bias, a, b), {"activation": activation})
    torch.library.opcheck(addmm_aux, (bias, a, b), {"activation": activation})
    torch.library.opcheck(addmm, (None, a, b), {"activation": "silu", "out_dtype": F32})
