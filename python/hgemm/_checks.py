# SPDX-License-Identifier: Apache-2.0
"""The package's argument checks, in one place: hgemm.matmul, hgemm.grouped_mm, the torch operators
(torch.ops.hgemm.*) and hgemm.nn raise through these functions, so that one mistake gives one
message whichever entry point it came through. Every message has the form

    <entry point>: argument '<name>': expected <what is taken>, got <what was given>

with TypeError for a wrong type, dtype or device (as torch does) and ValueError for a wrong value,
shape or layout. The native layer (hgemm._hgemm) checks again what the library needs; its errors
reach the caller through `native`, which gives them the same form.

Nothing here imports a framework: dtypes are compared by name ("float16", "bfloat16", ...), so
the checks serve torch tensors, cupy and numpy arrays alike.
"""

import re

OPERAND_DTYPES = ("float16", "bfloat16")
OUTPUT_DTYPES = ("float16", "bfloat16", "float32")
ACTIVATIONS = ("none", "relu", "gelu", "gelu_tanh", "silu")

# out_dtype's spellings
_DTYPE_NAMES = {"f16": "float16", "float16": "float16", "bf16": "bfloat16", "bfloat16": "bfloat16",
                "f32": "float32", "float32": "float32"}


def message(where, name, detail):
    return f"{where}: argument '{name}': {detail}"


def fail(exc, where, name, detail):
    raise exc(message(where, name, detail))


def dtype_text(dtype):
    """A dtype's name without its framework: torch.float16, numpy's and cupy's float16 -> "float16"."""
    text = getattr(dtype, "__name__", None) if isinstance(dtype, type) else None
    text = text or str(dtype)
    return text[6:] if text.startswith("torch.") else text


def _either(names):
    return ", ".join(names[:-1]) + " or " + names[-1] if len(names) > 1 else names[0]


def dtype(where, name, given, allowed=OPERAND_DTYPES):
    """TypeError unless `given` (a dtype of any framework) is one of the names in `allowed`."""
    text = dtype_text(given)
    if text not in allowed:
        fail(TypeError, where, name, f"expected dtype {_either(allowed)}, got {text}")
    return text


def operands(where, a_dtype, b_dtype, names=("a", "b")):
    """a and b: both float16 or both bfloat16."""
    ta = dtype(where, names[0], a_dtype)
    tb = dtype(where, names[1], b_dtype)
    if ta != tb:
        fail(TypeError, where, names[1], f"expected {names[0]}'s dtype {ta}, got {tb} (both must have one dtype)")
    return ta


def out_dtype(where, given):
    """"float16", "bfloat16" or "float32" for out_dtype given as a dtype of any framework or as one of
    "f16", "bf16", "f32", "float16", "bfloat16", "float32"; else TypeError."""
    key = given if isinstance(given, str) else dtype_text(given)
    name = _DTYPE_NAMES.get(key[6:] if key.startswith("torch.") else key)
    if name is None:
        fail(TypeError, where, "out_dtype", "expected float16, bfloat16 or float32 (as a dtype, or one of 'f16', "
                                            f"'bf16', 'f32', 'float16', 'bfloat16', 'float32'), got {given!r}")
    return name


def out_matches(where, out_text, want):
    """TypeError unless out (of dtype name out_text) has the dtype out_dtype names."""
    if out_text != want:
        fail(TypeError, where, "out", f"expected dtype {want} (out_dtype), got {out_text}: give one, or both alike")


def accum(where, given):
    """"f32" or "f16" for accum given so, or as a float32 / float16 dtype of any framework."""
    if given == "f32" or given == "f16":
        return given
    text = None if isinstance(given, str) else dtype_text(given)
    if text == "float32":
        return "f32"
    if text == "float16":
        return "f16"
    fail(ValueError, where, "accum", f"expected 'f32' or 'f16' (or torch.float32 / torch.float16), got {given!r}")


def accum_f16(where, ab_text, out_text):
    """accum='f16' needs float16 a, b and output."""
    if ab_text != "float16" or out_text != "float16":
        fail(TypeError, where, "accum", f"expected 'f32' for {ab_text} a and b and a {out_text} output ('f16' needs "
                                        "float16 a, b and output), got 'f16'")


_IDS = []


def kernel_id(where, given, ids):
    """ValueError unless `given` is "auto" or an id of ids() (hgemm.kernels()'s, read once)."""
    if given == "auto":
        return given
    if not _IDS:
        _IDS.append({k["id"] for k in ids()})
    if not isinstance(given, str) or given not in _IDS[0]:
        fail(ValueError, where, "kernel_id", f"expected 'auto' or an id from hgemm.kernels(), got {given!r}")
    return given


def activation(where, given, none_names=(None, "none")):
    """The library's name of an activation: None or "none" (none), or one of ACTIVATIONS; else ValueError."""
    if given is None or given == "none":
        return "none"
    if isinstance(given, str) and given in ACTIVATIONS:
        return given
    fail(ValueError, where, "activation", f"expected None, 'relu', 'gelu' (erf), 'gelu_tanh' or 'silu', got {given!r}")


def stream(where, given):
    """A cudaStream_t as an int, from an int or an object with cuda_stream (torch.cuda.Stream) or ptr
    (cupy's Stream)."""
    for attr in ("cuda_stream", "ptr"):
        handle = getattr(given, attr, None)
        if handle is not None:
            return int(handle)
    if isinstance(given, int):
        return given
    fail(TypeError, where, "stream", "expected an int (a cudaStream_t), a torch.cuda.Stream or a cupy Stream, got "
                                     f"{type(given).__name__}")


def array_shape(where, name, x, dims=(2, 3), what="2-D or 3-D (a batch of matrices)"):
    """x's shape as a tuple of ints: TypeError when x is not an array, ValueError for another number of
    dimensions."""
    shape = getattr(x, "shape", None)
    if shape is None:
        fail(TypeError, where, name, f"expected an array (torch, cupy, ...), got {type(x).__name__}")
    if len(shape) not in dims:
        fail(ValueError, where, name, f"expected {what}, got {len(shape)}-D")
    return tuple(int(s) for s in shape)


def ndim(where, name, n, dims, what):
    if n not in dims:
        fail(ValueError, where, name, f"expected {what}, got {n}-D")


def contraction(where, sa, sb, trans_a=False, trans_b=False):
    """(M, K, N) of op(a)·op(b); ValueError on b when the inner dimensions differ."""
    m, k = (sa[-1], sa[-2]) if trans_a else (sa[-2], sa[-1])
    kb, n = (sb[-1], sb[-2]) if trans_b else (sb[-2], sb[-1])
    if k != kb:
        fail(ValueError, where, "b", f"expected op(b) with {k} rows (op(a) is {m}x{k}), got op(b) {kb}x{n} "
                                     "(shapes do not match)")
    return m, k, n


def batches(where, ba, bb):
    if ba != bb and ba != 1 and bb != 1:
        fail(ValueError, where, "b", f"expected a batch that broadcasts with a's {ba} matrices, got {bb} "
                                     "(batch sizes do not broadcast)")
    return max(ba, bb)


def bias(where, given, columns, is_tensor=None):
    """bias: a 1-D array of float16, bfloat16 or float32 with one value per column of the product."""
    shape = getattr(given, "shape", None)
    if shape is None or (is_tensor is not None and not is_tensor(given)):
        fail(TypeError, where, "bias", f"expected a 1-D tensor, got {type(given).__name__}")
    dtype(where, "bias", given.dtype, OUTPUT_DTYPES)
    if len(shape) != 1 or (columns is not None and int(shape[0]) != columns):
        want = "a 1-D array" if columns is None else f"a 1-D array of {columns} values (one per column of the product)"
        fail(ValueError, where, "bias", f"expected {want}, got shape {tuple(int(s) for s in shape)}")


def _dims(shape):
    return "x".join(map(str, shape))


def grouped_shape(where, sa, sb, has_offs, has_m_valid):
    """The output shape of a grouped product of operands of shapes sa and sb (2-D or 3-D), with the
    errors of torch._grouped_mm. The four forms are told apart by the operands' dimensions: 2-D a
    and 3-D b (offs along M), 3-D a and 2-D b (offs along N), 3-D a and b (no offs; m_valid for the
    masked layout) and 2-D a and b (offs along K), whose shape is (None, M, N): its groups are
    offs's length."""
    ndim(where, "a", len(sa), (2, 3), "2-D or 3-D")
    ndim(where, "b", len(sb), (2, 3), "2-D or 3-D")
    if sa[-1] != sb[-2]:
        per = " in each group" if len(sb) == 3 else ""
        fail(ValueError, where, "b", f"expected {sa[-1]} rows{per} (a is {_dims(sa)}), got {_dims(sb)} "
                                     "(contraction dimensions do not match)")
    if len(sa) == 2 or len(sb) == 2:
        along = {(2, 3): "end rows (a 2-D a needs offs)", (3, 2): "ends along b's columns (a 2-D b with a 3-D a "
                 "needs offs)", (2, 2): "ends along K (a 2-D a and b are the K-grouped product)"}[(len(sa), len(sb))]
        if not has_offs:
            fail(ValueError, where, "offs", f"expected the groups' cumulative {along}, got None")
        if has_m_valid:
            fail(ValueError, where, "m_valid", "expected None (m_valid is for 3-D a and b, the masked layout; "
                                               "this form takes offs), got a tensor")
        if len(sa) == 2 and len(sb) == 2:
            return (None, sa[0], sb[1])
        return (sa[0], sb[2]) if len(sa) == 2 else (sa[1], sb[1])
    if has_offs:
        fail(ValueError, where, "offs", "expected None (offs is not taken with a 3-D a and b: each group is a whole "
                                        "matrix, and m_valid gives its rows), got a tensor")
    if sa[0] != sb[0]:
        fail(ValueError, where, "b", f"expected {sa[0]} groups (as a), got {sb[0]}")
    return (sa[0], sa[1], sb[2])


def group_sizes(where, name, sizes, groups):
    """offs or m_valid: a 1-D int32 array with one entry per group (groups < 0: any length)."""
    shape = getattr(sizes, "shape", None)
    if shape is None:
        fail(TypeError, where, name, f"expected a 1-D int32 array on the GPU, got {type(sizes).__name__}")
    dtype(where, name, sizes.dtype, ("int32",))
    if len(shape) != 1 or (groups >= 0 and int(shape[0]) != groups):
        want = "1-D" if groups < 0 else f"1-D with one entry per group ({groups})"
        fail(ValueError, where, name, f"expected {want}, got shape {tuple(int(s) for s in shape)}")


def out_shape(where, given, want):
    if tuple(int(s) for s in given) != tuple(want):
        fail(ValueError, where, "out", f"expected shape {_dims(want)}, got {_dims(given)}")


def same_device(where, name, device, like_device, like="a"):
    if device != like_device:
        fail(ValueError, where, name, f"expected a tensor on {like}'s device {like_device}, got one on {device}")


def cuda(where, name, device):
    """TypeError for an array not in CUDA memory: `device` is torch's device ("cpu", "meta", ...) or
    the native layer's description of where it lies ("the CPU")."""
    on = "the CPU" if str(device) in ("cpu", "DLPack device type 1") else str(device)  # kDLCPU = 1
    fail(TypeError, where, name, f"expected an array in CUDA memory, got one on {on} (hgemm needs GPU arrays: "
                                 "torch CUDA tensors, cupy arrays, ...)")


# ---- the native layer's errors ----

_NAMED = re.compile(r"^(a|b|out|bias|aux_out|row_scale|col_scale|offs|m_valid) (.*)$", re.S)
_NOT_CUDA = re.compile(r"^is not in CUDA memory \((.*?)\)")


def native(where, error):
    """The exception to raise for an error of the native layer: of the same type, its message in the
    form above when it starts with an argument's name ("b has strides ...": argument 'b': has
    strides ...), else prefixed with the entry point (the library's Status messages)."""
    text = str(error)
    if text.startswith(where + ": "):
        return error
    match = _NAMED.match(text)
    if match:
        where_is = _NOT_CUDA.match(match.group(2))
        if where_is:
            try:
                cuda(where, match.group(1), where_is.group(1))
            except TypeError as e:
                return e
    new = message(where, match.group(1), match.group(2)) if match else f"{where}: {text}"
    return type(error)(new)
