"""Profiles a whole model and writes its hottest operators as problems.

Run for `kfctl profile-model` (common/kf_profile_model.py in KernelFoundry,
embedded in the binaries and written to a job's folder for each run): by
the exec worker for a `model_profile` job (exec-worker/kf_model_profile.c),
or by kfctl itself with --local:

    PYTHON -B -s kf_profile_model.py MODEL.py RESULT.json TOP [NAME]

MODEL.py is a KernelBench level-3 file: Model, get_inputs(),
get_init_inputs(). The model runs once to warm up, then under
torch.profiler (record_shapes) for a few calls; every aten operator's
self time, grouped by name and input shapes, is its share of the whole.
A second pass under a TorchDispatchMode records the real arguments of one
call of each (operator, shapes): tensors as shape and dtype, the rest as
values. Each of the TOP costliest operators that such a call was found
for becomes the text of a KernelBench-format problem calling that aten
overload on fresh tensors of those shapes and dtypes. RESULT.json gets
{device, torch_version, total_us, calls, operators: [...]} or {error}.
Views, allocations and composite operators (whose work is their parts',
ranked on their own) are counted in the total and not written.
"""
import importlib.util
import json
import math
import sys
import time
import traceback

SKIP = {
    "aten::empty", "aten::empty_like", "aten::empty_strided", "aten::zeros", "aten::ones",
    "aten::as_strided", "aten::view", "aten::_unsafe_view", "aten::t", "aten::transpose",
    "aten::reshape", "aten::expand", "aten::detach", "aten::resolve_conj", "aten::resolve_neg",
    "aten::unsqueeze", "aten::squeeze", "aten::permute", "aten::alias", "aten::lift",
    "aten::lift_fresh", "aten::slice", "aten::select", "aten::numpy_T", "aten::item",
    "aten::_local_scalar_dense", "aten::to", "aten::_to_copy", "aten::result_type",
}
PROFILED_CALLS = 5


def fail(path, stage, exc):
    tb = traceback.format_exc()
    with open(path, "w") as f:
        json.dump({"error": "%s: %s: %s" % (stage, type(exc).__name__, exc),
                   "traceback": tb[-3000:]}, f)
    sys.exit(1)


def literal(value):
    """VALUE as Python source, or raise ValueError."""
    import torch
    if value is None or isinstance(value, (bool, int, str)):
        return repr(value)
    if isinstance(value, float):
        if math.isnan(value):
            return "float('nan')"
        if math.isinf(value):
            return "float('%sinf')" % ("-" if value < 0 else "")
        return repr(value)
    if isinstance(value, (list, tuple)):
        inner = ", ".join(literal(v) for v in value)
        return ("[%s]" % inner) if isinstance(value, list) else ("(%s%s)" % (inner, "," if len(value) == 1 else ""))
    if isinstance(value, torch.dtype):
        return str(value)
    if isinstance(value, torch.device):
        return "torch.device(%r)" % str(value)
    if isinstance(value, torch.memory_format):
        return str(value)
    if isinstance(value, torch.layout):
        return str(value)
    raise ValueError("an argument of type %s" % type(value).__name__)


def draw(t):
    """Source that draws a fresh tensor like T (shape, dtype)."""
    import torch
    shape = list(t.shape)
    if t.dtype.is_floating_point:
        return "torch.randn(%r, dtype=%s)" % (shape, t.dtype)
    if t.dtype == torch.bool:
        return "torch.randint(0, 2, %r).bool()" % (shape,)
    lo = int(t.min().item()) if t.numel() else 0
    hi = int(t.max().item()) if t.numel() else 0
    return "torch.randint(%d, %d, %r, dtype=%s)" % (lo, hi + 1, shape, t.dtype)


def shapes_key(name, shapes):
    """NAME with the shapes of its tensors of rank 1 or more. The profiler
    lists [] for every argument that is not such a tensor, defaults
    included (addmm's beta and alpha), so only the others can be
    matched with what a dispatch mode sees."""
    return name, json.dumps([list(s) for s in shapes if s])


def shapes_of(args):
    import torch
    return [list(a.shape) if isinstance(a, torch.Tensor) else [] for a in args]


def main():
    model_path, result_path, top = sys.argv[1], sys.argv[2], int(sys.argv[3])
    # The name the problems' docstrings give the model: letters, digits,
    # '.', '_' and '-' only, since it is written into Python source.
    shown = sys.argv[4] if len(sys.argv) > 4 else model_path.rsplit("/", 1)[-1]
    shown = "".join(c for c in shown if c.isalnum() or c in "._-")[:100] or "the model"
    try:
        import torch
        from torch.profiler import ProfilerActivity, profile
        from torch.utils._python_dispatch import TorchDispatchMode
    except Exception as e:
        fail(result_path, "import torch", e)
    stage = "import the model"
    try:
        spec = importlib.util.spec_from_file_location("kf_profiled_model", model_path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        device = "cuda" if torch.cuda.is_available() else "cpu"
        torch.manual_seed(0)
        stage = "get_init_inputs / Model(...)"
        init = module.get_init_inputs()
        model = module.Model(**init) if isinstance(init, dict) else module.Model(*init)
        model = model.to(device)
        stage = "get_inputs"
        inputs = [x.to(device) if isinstance(x, torch.Tensor) else x for x in module.get_inputs()]
        stage = "forward (warm-up)"
        with torch.no_grad():
            model(*inputs)
        stage = "forward (timed)"
        # The wall time of a forward, outside the profiler: the profiler's
        # start-up (about a second with CUPTI) is no part of the model's.
        with torch.no_grad():
            if device == "cuda":
                torch.cuda.synchronize()
            start = time.perf_counter()
            for _ in range(PROFILED_CALLS):
                model(*inputs)
            if device == "cuda":
                torch.cuda.synchronize()
        wall_us = (time.perf_counter() - start) * 1e6 / PROFILED_CALLS
        stage = "forward (profiled)"
        activities = [ProfilerActivity.CPU]
        if device == "cuda":
            activities.append(ProfilerActivity.CUDA)
        with torch.no_grad(), profile(activities=activities, record_shapes=True) as prof:
            for _ in range(PROFILED_CALLS):
                model(*inputs)
            if device == "cuda":
                torch.cuda.synchronize()

        calls = {}

        class Recorder(TorchDispatchMode):
            def __torch_dispatch__(self, func, types, args=(), kwargs=None):
                kwargs = kwargs or {}
                name = "aten::" + func.__name__.split(".")[0] if hasattr(func, "__name__") else str(func)
                key = shapes_key(name, shapes_of(args))
                if key not in calls:
                    calls[key] = (func, args, kwargs)
                return func(*args, **kwargs)

        stage = "forward (recording the operators' arguments)"
        with torch.no_grad(), Recorder():
            model(*inputs)
    except Exception as e:
        fail(result_path, stage, e)

    use_cuda = device == "cuda"
    events = []
    device_total = 0.0
    for e in prof.key_averages(group_by_input_shape=True):
        if use_cuda:   # torch 2.x names it device time; 1.x cuda time
            device_us = getattr(e, "self_device_time_total", None)
            self_us = device_us if device_us is not None else e.self_cuda_time_total
        else:
            self_us = e.self_cpu_time_total
        self_us /= PROFILED_CALLS
        # With CUDA each kernel is listed twice: as a row of its own (a
        # device row: kernels, copies, memsets) and in the self device time
        # of the operator that launched it. The device rows are the GPU's
        # whole work, each counted once: they make the total; the
        # operators are ranked. (Counting both halved every share; CUPTI's
        # own "Activity Buffer Request" row is neither.)
        if use_cuda and str(getattr(e, "device_type", "CPU")).rsplit(".", 1)[-1] != "CPU":
            device_total += self_us
            continue
        events.append((e.key, [list(s) if isinstance(s, (list, tuple)) else [] for s in e.input_shapes],
                       self_us, e.count // PROFILED_CALLS))
    total = device_total or sum(e[2] for e in events)
    events.sort(key=lambda e: -e[2])
    ops = []
    for name, shapes, self_us, count in events:
        if len(ops) >= top:
            break
        if name in SKIP or self_us <= 0 or not name.startswith("aten::"):
            continue
        hit = calls.get(shapes_key(name, shapes))
        if hit is None:
            continue
        func, args, kwargs = hit
        try:
            params, draws, call = [], [], []
            for a in args:
                if isinstance(a, torch.Tensor):
                    params.append("in%d" % len(params))
                    draws.append(draw(a))
                    call.append(params[-1])
                else:
                    call.append(literal(a))
            for k, v in kwargs.items():
                if isinstance(v, torch.Tensor):
                    raise ValueError("a tensor keyword argument")
                call.append("%s=%s" % (k, literal(v)))
            if not params:
                raise ValueError("no tensor argument")
        except ValueError as why:
            ops.append({"name": name, "self_us": self_us, "share": self_us / total if total else 0,
                        "calls": count, "shapes": shapes, "skipped": str(why)})
            continue
        overload = str(func)   # aten.addmm.default
        tensors = [a for a in args if isinstance(a, torch.Tensor)]
        share = self_us / total if total else 0.0
        source = PROBLEM % {
            "name": name, "overload": overload, "calls": count, "share": 100 * share,
            "self_us": self_us, "model": shown,
            "shapes": ", ".join("%s %s" % (list(t.shape), str(t.dtype).replace("torch.", ""))
                                for t in tensors),
            "params": ", ".join(params), "call": ", ".join(call),
            "draws": ",\n        ".join(draws),
        }
        ops.append({"name": name, "overload": overload, "self_us": self_us, "share": share,
                    "calls": count, "shapes": [list(t.shape) for t in tensors],
                    "dtypes": [str(t.dtype).replace("torch.", "") for t in tensors],
                    "source": source})
    with open(result_path, "w") as f:
        json.dump({"device": device, "torch_version": torch.__version__, "total_us": total,
                   "wall_us": wall_us, "profiled_calls": PROFILED_CALLS, "operators": ops}, f)


PROBLEM = '''"""%(name)s from %(model)s, as kfctl profile-model found it.

%(calls)d call(s) per forward took %(self_us).1f us of self time, %(share).1f%% of
the model's: the most replacing it could save. Inputs: %(shapes)s.
The call is the aten overload the model made (%(overload)s), on fresh
tensors of the shapes and dtypes it was given.
"""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, %(params)s):
        return torch.ops.%(overload)s(%(call)s)


def get_inputs():
    return [
        %(draws)s,
    ]


def get_init_inputs():
    return []
'''

if __name__ == "__main__":
    main()
