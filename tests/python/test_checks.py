# SPDX-License-Identifier: Apache-2.0
"""One validation layer: the same mistake through hgemm.matmul (with and without grad),
torch.ops.hgemm.* and hgemm.nn gives one message naming the argument, of one exception type.
The arguments are checked before the device, so CPU tensors reach every check; no GPU needed."""
import numpy as np
import pytest

import hgemm
from hgemm import _checks

try:
    import torch
except ImportError:  # the checks of the format below run without torch
    torch = None

needs_torch = pytest.mark.skipif(torch is None, reason="torch is not installed")


def raised(fn):
    """(type, entry point, message after the entry point) of what fn raises."""
    with pytest.raises(Exception) as info:
        fn()
    where, _, rest = str(info.value).partition(": ")
    return info.type, where, rest


def same_everywhere(calls, name):
    """Every call raises the same type and message after its entry point, naming `name`."""
    seen = [(want, raised(fn)) for want, fn in calls]
    kinds = {(t, rest) for _, (t, _, rest) in seen}
    assert len(kinds) == 1, seen
    for want, (_, where, rest) in seen:
        assert where == want, (where, want)
        assert rest.startswith(f"argument '{name}': expected "), rest
    return next(iter(kinds))


def test_message_format():
    with pytest.raises(ValueError) as info:
        _checks.accum("hgemm.matmul", "f64")
    assert str(info.value) == ("hgemm.matmul: argument 'accum': expected 'f32' or 'f16' (or torch.float32 / "
                               "torch.float16), got 'f64'")
    with pytest.raises(TypeError, match=r"^hgemm.matmul: argument 'b': expected dtype float16 or bfloat16, got int32$"):
        hgemm.matmul(np.ones((4, 3), np.float16), np.ones((3, 5), np.int32), out=np.ones((4, 5), np.float16))


def test_native_errors_name_the_argument():
    """The native layer's errors reach the caller in the same form (host memory is refused there)."""
    with pytest.raises(TypeError, match=r"^hgemm.matmul: argument 'a': expected an array in CUDA memory, got one "
                                        r"on the CPU"):
        hgemm.matmul(np.ones((4, 3), np.float16), np.ones((3, 5), np.float16), out=np.ones((4, 5), np.float16))
    e = _checks.native("hgemm.matmul", ValueError("Invalid argument: C and D overlap"))
    assert type(e) is ValueError and str(e) == "hgemm.matmul: Invalid argument: C and D overlap"


def f16(*shape, requires_grad=False):
    return torch.ones(*shape, dtype=torch.float16, requires_grad=requires_grad)


def matmul_entries(make_a, b):
    """a·b through hgemm.matmul without grad and with grad (which takes the operator) and the three
    operators, a from make_a(requires_grad)."""
    return [
        ("hgemm.matmul", lambda: hgemm.matmul(make_a(False), b)),
        ("hgemm::mm", lambda: hgemm.matmul(make_a(True), b)),
        ("hgemm::mm", lambda: torch.ops.hgemm.mm(make_a(False), b)),
        ("hgemm::matmul", lambda: torch.ops.hgemm.matmul(make_a(False), b)),
        ("hgemm::addmm", lambda: torch.ops.hgemm.addmm(None, make_a(False), b)),
    ]


@needs_torch
def test_a_wrong_dtype_reads_alike_everywhere():
    b = f16(3, 5)
    kind, rest = same_everywhere(matmul_entries(lambda grad: f16(4, 3).float().requires_grad_(grad), b), "a")
    assert kind is TypeError and rest == "argument 'a': expected dtype float16 or bfloat16, got float32"
    with pytest.raises(TypeError, match=r"^hgemm.nn.linear: argument 'input': expected dtype float16 or bfloat16, "
                                        r"got float32"):
        hgemm.nn.linear(f16(4, 3).float(), f16(5, 3))


@needs_torch
def test_mixed_dtypes_read_alike_everywhere():
    a = f16(4, 3)
    kind, rest = same_everywhere([
        ("hgemm.matmul", lambda: hgemm.matmul(a, f16(3, 5).bfloat16())),
        ("hgemm::mm", lambda: hgemm.matmul(f16(4, 3, requires_grad=True), f16(3, 5).bfloat16())),
        ("hgemm::mm", lambda: torch.ops.hgemm.mm(a, f16(3, 5).bfloat16())),
        ("hgemm::addmm", lambda: torch.ops.hgemm.addmm(f16(5), a, f16(3, 5).bfloat16())),
    ], "b")
    assert kind is TypeError and "expected a's dtype float16, got bfloat16" in rest
    with pytest.raises(TypeError, match=r"^hgemm.nn.linear: argument 'weight': expected the input's dtype float16, "
                                        r"got bfloat16"):
        hgemm.nn.linear(a, f16(5, 3).bfloat16())


@needs_torch
def test_shapes_that_do_not_match_read_alike_everywhere():
    a, b = f16(4, 3), f16(4, 5)
    kind, rest = same_everywhere(matmul_entries(lambda grad: f16(4, 3, requires_grad=grad), b), "b")
    assert kind is ValueError and "shapes do not match" in rest


@needs_torch
def test_a_bias_of_the_wrong_length_reads_alike_everywhere():
    a, b, bias = f16(4, 3), f16(3, 5), f16(4)
    kind, rest = same_everywhere([
        ("hgemm.matmul", lambda: hgemm.matmul(a, b, bias=bias)),
        ("hgemm::addmm", lambda: hgemm.matmul(a, b, bias=f16(4, requires_grad=True))),  # with grad
        ("hgemm::addmm", lambda: torch.ops.hgemm.addmm(bias, a, b)),
        ("hgemm::addmm", lambda: hgemm.nn.linear(a, f16(5, 3), bias)),
    ], "bias")
    assert kind is ValueError
    assert rest == "argument 'bias': expected a 1-D array of 5 values (one per column of the product), got shape (4,)"
    kind, rest = same_everywhere([
        ("hgemm.matmul", lambda: hgemm.matmul(a, b, bias=[0.0] * 5)),
        ("hgemm.matmul", lambda: hgemm.matmul(f16(4, 3, requires_grad=True), b, bias=[0.0] * 5)),
    ], "bias")
    assert kind is TypeError and rest == "argument 'bias': expected a 1-D tensor, got list"


@needs_torch
def test_an_unknown_activation_reads_alike_everywhere():
    a, b = f16(4, 3), f16(3, 5)
    kind, rest = same_everywhere([
        ("hgemm.matmul", lambda: hgemm.matmul(a, b, activation="tanh")),
        ("hgemm.matmul", lambda: hgemm.matmul(f16(4, 3, requires_grad=True), b, activation="tanh")),
        ("hgemm::addmm", lambda: torch.ops.hgemm.addmm(None, a, b, activation="tanh")),
        ("hgemm.nn.linear", lambda: hgemm.nn.linear(a, f16(5, 3), activation="tanh")),
        ("hgemm.nn.Linear", lambda: hgemm.nn.Linear(3, 5, activation="tanh")),
    ], "activation")
    assert kind is ValueError and rest.endswith("got 'tanh'")


@needs_torch
def test_kernel_id_and_accum_read_alike_everywhere():
    a, b = f16(4, 3), f16(3, 5)
    kind, rest = same_everywhere([
        ("hgemm.matmul", lambda: hgemm.matmul(a, b, kernel_id="cuda.warp_drive")),
        ("hgemm.matmul", lambda: hgemm.matmul(f16(4, 3, requires_grad=True), b, kernel_id="cuda.warp_drive")),
        ("hgemm::mm", lambda: torch.ops.hgemm.mm(a, b, kernel_id="cuda.warp_drive")),
        ("hgemm::addmm", lambda: torch.ops.hgemm.addmm(None, a, b, kernel_id="cuda.warp_drive")),
    ], "kernel_id")
    assert kind is ValueError and rest.endswith("got 'cuda.warp_drive'")
    kind, rest = same_everywhere([
        ("hgemm.matmul", lambda: hgemm.matmul(a, b, accum="f64")),
        ("hgemm::mm", lambda: torch.ops.hgemm.mm(a, b, accum="f64")),
        ("hgemm::matmul", lambda: torch.ops.hgemm.matmul(a, b, accum="f64")),
    ], "accum")
    assert kind is ValueError
    kind, rest = same_everywhere([
        ("hgemm.matmul", lambda: hgemm.matmul(a.bfloat16(), b.bfloat16(), accum="f16")),
        ("hgemm::mm", lambda: hgemm.matmul(a.bfloat16().requires_grad_(), b.bfloat16(), accum="f16")),
        ("hgemm::mm", lambda: torch.ops.hgemm.mm(a.bfloat16(), b.bfloat16(), accum="f16")),
    ], "accum")
    assert kind is TypeError and "'f16' needs float16 a, b and output" in rest


@needs_torch
def test_cpu_tensors_read_alike_everywhere():
    """Valid arguments on the CPU: the device is refused last, naming the tensor, with TypeError."""
    a, b = f16(4, 3), f16(3, 5)
    kind, rest = same_everywhere(matmul_entries(lambda grad: f16(4, 3, requires_grad=grad), b) + [
        ("hgemm::addmm", lambda: hgemm.nn.linear(a, f16(5, 3), f16(5))),
    ], "a")
    assert kind is TypeError and rest.startswith("argument 'a': expected an array in CUDA memory, got one on the CPU")


@needs_torch
def test_with_and_without_grad_a_batched_b_with_a_bias_is_taken():
    """The direct path takes a batch of b with a bias; with grad it is taken too (the operators'
    product, then the bias and activation by torch), with the same shape and dtype."""
    meta = dict(dtype=torch.float16, device="meta")
    a, b, bias = torch.empty(3, 6, 4, **meta), torch.empty(3, 4, 5, **meta), torch.empty(5, **meta)
    y = hgemm.matmul(a.requires_grad_(), b, bias=bias.requires_grad_(), activation="gelu")
    assert y.shape == (3, 6, 5) and y.dtype == torch.float16 and y.requires_grad
    with pytest.raises(ValueError, match=r"^hgemm.matmul: argument 'bias': expected a 1-D array of 5 values"):
        hgemm.matmul(a, b, bias=torch.empty(4, **meta))


def bf16(*shape, requires_grad=False):
    return torch.ones(*shape, dtype=torch.bfloat16, requires_grad=requires_grad)


def offsets(n, dtype=None):
    return torch.full((n,), 8, dtype=dtype or torch.int32)


GROUPED_MISTAKES = {  # name: (the operands for requires_grad, the argument named)
    "groups": (lambda grad: (bf16(4, 8, 32, requires_grad=grad), bf16(3, 32, 16)), "b"),
    "contraction": (lambda grad: (bf16(64, 32, requires_grad=grad), bf16(4, 31, 16), offsets(4)), "b"),
    "offs dtype": (lambda grad: (bf16(64, 32, requires_grad=grad), bf16(4, 32, 16), offsets(4, torch.int64)), "offs"),
    "offs length": (lambda grad: (bf16(64, 32, requires_grad=grad), bf16(4, 32, 16), offsets(3)), "offs"),
    "no offs": (lambda grad: (bf16(64, 32, requires_grad=grad), bf16(4, 32, 16)), "offs"),
    "offs with 3-D a": (lambda grad: (bf16(4, 8, 32, requires_grad=grad), bf16(4, 32, 16), offsets(4)), "offs"),
    "mixed dtypes": (lambda grad: (bf16(64, 32, requires_grad=grad), bf16(4, 32, 16).half(), offsets(4)), "b"),
    "4-D a": (lambda grad: (bf16(2, 4, 8, 32, requires_grad=grad), bf16(4, 32, 16)), "a"),
}


@needs_torch
@pytest.mark.parametrize("mistake", GROUPED_MISTAKES)
def test_grouped_mistakes_read_alike_everywhere(mistake):
    """hgemm.grouped_mm without grad and with grad (both checked in Python first) and the
    operator itself, on CPU tensors: the arguments are checked before the device."""
    make, name = GROUPED_MISTAKES[mistake]
    same_everywhere([
        ("hgemm.grouped_mm", lambda: hgemm.grouped_mm(*make(False))),
        ("hgemm.grouped_mm", lambda: hgemm.grouped_mm(*make(True))),  # checked before it takes the operator
        ("hgemm::grouped_mm", lambda: torch.ops.hgemm.grouped_mm(*make(False))),
    ], name)


def test_grouped_mistakes_on_numpy_arrays():
    """Without torch the same checks run first (numpy arrays are then refused as host memory)."""
    a, b = np.ones((64, 32), np.float16), np.ones((4, 31, 16), np.float16)
    with pytest.raises(ValueError, match=r"^hgemm.grouped_mm: argument 'b': expected 32 rows in each group"):
        hgemm.grouped_mm(a, b, np.full(4, 8, np.int32))
    with pytest.raises(TypeError, match=r"^hgemm.grouped_mm: argument 'offs': expected dtype int32, got int64$"):
        hgemm.grouped_mm(a, np.ones((4, 32, 16), np.float16), np.full(4, 8, np.int64))
    with pytest.raises(TypeError, match=r"^hgemm.grouped_mm: argument 'a': expected an array in CUDA memory"):
        hgemm.grouped_mm(a, np.ones((4, 32, 16), np.float16), np.full(4, 8, np.int32))
