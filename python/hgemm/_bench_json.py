# SPDX-License-Identifier: Apache-2.0
"""The header and the file that the torch benchmarks (bench_overhead, bench_mlp, bench_grouped,
bench_moe) write, in the layout of hgemm-bench's JSON: {"header": {...}, "rows": [...],
"summary": {...}}, and the --dtype list they share."""
import datetime
import json
import os
import platform
import sys


def header(torch, **extra):
    props = torch.cuda.get_device_properties(torch.cuda.current_device())
    h = {
        "gpu": props.name,
        "compute_capability": props.major * 10 + props.minor,
        "sm_count": props.multi_processor_count,
        "torch": torch.__version__,
        "cuda_runtime": torch.version.cuda,
        "python": platform.python_version(),
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "command": " ".join([os.path.basename(sys.executable), "-m", _module_name()] + sys.argv[1:]),
    }
    h.update(extra)
    return h


def half_dtypes(parser, text, torch):
    """--dtype's comma list of bf16 and f16 as [(name, torch dtype)]; any other word is a usage error."""
    names = {"bf16": torch.bfloat16, "f16": torch.float16}
    dtypes = [d.strip() for d in text.split(",")]
    for d in dtypes:
        if d not in names:
            parser.error(f"bad --dtype {d!r}: bf16 or f16")
    return [(d, names[d]) for d in dtypes]


def _module_name():
    main = sys.modules.get("__main__")
    spec = getattr(main, "__spec__", None)
    return spec.name if spec is not None else sys.argv[0]


def write(path, head, rows, summary):
    if not path:
        return
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(path, "w") as f:
        json.dump({"header": head, "rows": rows, "summary": summary}, f, indent=1)
        f.write("\n")
    print(f"wrote {path}")
