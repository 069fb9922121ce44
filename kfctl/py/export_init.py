"""A kernel found by KernelFoundry, as a torch.nn.Module.

Written by `kfctl export --torch` (kfctl/py/export_init.py in KernelFoundry);
README.md beside this package says how to use it. `Model` is the problem's
own Model class with forward replaced: construct it with the same
arguments, load the same state_dict, call it with the same arguments. Its
parameters and buffers are the original module's; forward hands them,
with the tensor arguments, to the kernel through the kernel contract
(kf_kernel.h), and returns the kernel's outputs as tensors on the device
of the run's target.

The kernel is a shared object built on first use from kernel.c (or
kernel.cu) with the compiler and flags the run's compile worker used, into
build/ here (or ~/.cache/kernelfoundry/export/ when this folder is read
only). The kernel was judged on the shapes and dtypes recorded in
export.json only: forward refuses others rather than guess. It computes
the forward pass only (no autograd).
"""
import ctypes
import hashlib
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(HERE, "export.json"), encoding="utf-8") as _f:
    EXPORT = json.load(_f)

_DTYPES = {"f32": torch.float32, "f64": torch.float64, "f16": torch.float16,
           "bf16": torch.bfloat16, "i32": torch.int32, "i64": torch.int64}
_KF_DTYPE = {"f32": 0, "f64": 1, "f16": 2, "bf16": 3, "i32": 4, "i64": 5}
_TORCH_KF = {v: _KF_DTYPE[k] for k, v in _DTYPES.items()}
_MAX_RANK = 8


class _Tensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("dtype", ctypes.c_int32),
                ("rank", ctypes.c_int32), ("shape", ctypes.c_int64 * _MAX_RANK),
                ("strides", ctypes.c_int64 * _MAX_RANK)]


_SCRATCH_FN = ctypes.CFUNCTYPE(ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t)


class _Ctx(ctypes.Structure):
    _fields_ = [("backend", ctypes.c_int32), ("stream", ctypes.c_void_p),
                ("n_scalars", ctypes.c_int32),
                ("scalar_names", ctypes.POINTER(ctypes.c_char_p)),
                ("scalars", ctypes.POINTER(ctypes.c_double)),
                ("scratch_alloc", _SCRATCH_FN), ("scratch_state", ctypes.c_void_p)]


def _load_problem():
    """The problem file the run searched against, as a module."""
    name = "_kf_problem_" + hashlib.sha256(HERE.encode()).hexdigest()[:12]
    spec = importlib.util.spec_from_file_location(name, os.path.join(HERE, "problem.py"))
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


problem = _load_problem()
DEVICE = "cuda" if EXPORT["backend"] == "cuda" else "cpu"
_lock = threading.Lock()
_lib = None


def _compiler():
    build = EXPORT["build"]
    override = os.environ.get(build["override"])
    if override:
        return override
    found = shutil.which(build["compiler"])
    for folder in build.get("search", []):
        if not found and os.access(os.path.join(folder, build["compiler"]), os.X_OK):
            found = os.path.join(folder, build["compiler"])
    if not found:
        raise RuntimeError("cannot build the kernel: no '%s' on PATH (set %s to a compiler)"
                           % (build["compiler"], build["override"]))
    return found


def build_command(output):
    """The command line that builds the kernel into OUTPUT (a list)."""
    build = EXPORT["build"]
    return ([_compiler()] + build["flags"] + ["-I" + HERE, "-o", output,
                                              os.path.join(HERE, build["source"])]
            + build["libs"])


def _library_path():
    source = os.path.join(HERE, EXPORT["build"]["source"])
    with open(source, "rb") as f:
        digest = hashlib.sha256(f.read()).hexdigest()[:16]
    folder = os.path.join(HERE, "build")
    try:
        os.makedirs(folder, exist_ok=True)
        probe = tempfile.NamedTemporaryFile(dir=folder)
        probe.close()
    except OSError:
        cache = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
        folder = os.path.join(cache, "kernelfoundry", "export")
        os.makedirs(folder, exist_ok=True)
    return os.path.join(folder, "libkernel-%s.so" % digest)


def build():
    """Builds the kernel when its shared object is missing; returns its path."""
    path = _library_path()
    if os.path.exists(path):
        return path
    fd, tmp = tempfile.mkstemp(prefix=".libkernel-", suffix=".so", dir=os.path.dirname(path))
    os.close(fd)
    try:
        done = subprocess.run(build_command(tmp), stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, timeout=600)
        if done.returncode != 0:
            raise RuntimeError("building the kernel failed (exit %d):\n%s"
                               % (done.returncode, done.stdout.decode("utf-8", "replace")))
        os.replace(tmp, path)   # another process building it too: same bytes
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return path


def library():
    """The loaded kernel (ctypes.CDLL), built on first use."""
    global _lib
    with _lock:
        if _lib is None:
            lib = ctypes.CDLL(build())
            lib.kf_forward.restype = ctypes.c_int
            lib.kf_forward.argtypes = [ctypes.POINTER(_Tensor), ctypes.c_int,
                                       ctypes.POINTER(_Tensor), ctypes.c_int,
                                       ctypes.POINTER(_Ctx)]
            _lib = lib
    return _lib


def _check(what, t, entry):
    if not isinstance(t, torch.Tensor):
        raise TypeError("%s: expected a tensor, got %s" % (what, type(t).__name__))
    want_dtype = _DTYPES[entry["dtype"]]
    if t.dtype != want_dtype:
        raise TypeError("%s: dtype %s, but the kernel was judged on %s"
                        % (what, t.dtype, want_dtype))
    if list(t.shape) != list(entry["shape"]):
        raise ValueError("%s: shape %s, but the kernel was judged on %s only"
                         % (what, list(t.shape), entry["shape"]))
    if t.device.type != DEVICE:
        raise ValueError("%s is on %s; this kernel runs on %s tensors (move it with .to('%s'))"
                         % (what, t.device, DEVICE, DEVICE))
    return t.contiguous()


def _attr(module, path):
    for part in path.split("."):
        module = getattr(module, part)
    return module


class Model(problem.Model):
    """The problem's Model, its forward computed by the exported kernel.

    Model() with no arguments is built from the problem's get_init_inputs().
    """

    def __init__(self, *args, **kwargs):
        if not args and not kwargs:
            init = problem.get_init_inputs()
            if isinstance(init, dict):
                kwargs = dict(init)
            else:
                args = tuple(init)
        super().__init__(*args, **kwargs)
        self._kf_init = list(args) + list(kwargs.values())

    def forward(self, *args):
        if len(args) != EXPORT["n_args"]:
            raise TypeError("forward takes %d arguments (%d given)"
                            % (EXPORT["n_args"], len(args)))
        inputs = []
        for entry in EXPORT["inputs"]:
            if entry["source"] == "arg":
                value = args[entry["index"]]
                what = "argument %d" % entry["index"]
            else:
                value = _attr(self, entry["path"]).detach()
                what = "%s %s" % (entry["source"], entry["path"])
            inputs.append(_check(what, value, entry))
        outputs = [torch.empty(o["shape"], dtype=_DTYPES[o["dtype"]], device=DEVICE)
                   for o in EXPORT["outputs"]]
        call = _call_state()
        for k, s in enumerate(EXPORT["scalars"]):
            if s["source"] == "arg":
                value = args[s["index"]]
            elif s["source"] == "init":
                value = self._kf_init[s["index"]] if s["index"] < len(self._kf_init) else s["value"]
            else:
                value = s["value"]
            call.values[k] = float(value)
        # Shapes, dtypes and strides are the recorded ones (_check made
        # every tensor contiguous in them): only the addresses change.
        for k, t in enumerate(inputs):
            call.inputs[k].data = t.data_ptr()
        for k, t in enumerate(outputs):
            call.outputs[k].data = t.data_ptr()
        if DEVICE == "cuda":
            call.ctx.stream = torch.cuda.current_stream(inputs[0].device if inputs else None).cuda_stream
        # The scratch tensors are freed after the call while the kernel may
        # still run; torch's allocator reuses them in the order of the
        # stream, after the kernel, as for any tensor freed there.
        call.keep = []
        with torch.no_grad():
            rc = library().kf_forward(call.inputs, len(inputs), call.outputs, len(outputs),
                                      ctypes.byref(call.ctx))
        call.keep = None
        if rc != 0:
            raise RuntimeError("the kernel returned %d (it refused these inputs)" % rc)
        return outputs[0] if len(outputs) == 1 else tuple(outputs)


def _template(entries):
    """Tensor descriptors of ENTRIES' dtypes and shapes, contiguous, no address."""
    array = (_Tensor * max(len(entries), 1))()
    for c, entry in zip(array, entries):
        shape = entry["shape"]
        c.dtype = _KF_DTYPE[entry["dtype"]]
        c.rank = len(shape)
        stride = 1
        for i in reversed(range(len(shape))):
            c.shape[i] = shape[i]
            c.strides[i] = stride
            stride *= shape[i]
    return array


_state = threading.local()


def _scratch(state, size):
    t = torch.empty(max(int(size), 1), dtype=torch.uint8, device=DEVICE)
    _state.call.keep.append(t)
    return t.data_ptr()


_SCRATCH = _SCRATCH_FN(_scratch)


class _CallState:
    """What a call hands the kernel, built once a thread, so that a call
    costs the kernel's time and the setting of a few addresses rather than
    the building of ctypes structures and a callback."""

    def __init__(self):
        self.inputs = _template(EXPORT["inputs"])
        self.outputs = _template(EXPORT["outputs"])
        scalars = EXPORT["scalars"]
        self.names = (ctypes.c_char_p * max(len(scalars), 1))(*[s["name"].encode() for s in scalars])
        self.values = (ctypes.c_double * max(len(scalars), 1))()
        self.ctx = _Ctx()
        self.ctx.backend = 1 if DEVICE == "cuda" else 0
        self.ctx.n_scalars = len(scalars)
        self.ctx.scalar_names = ctypes.cast(self.names, ctypes.POINTER(ctypes.c_char_p))
        self.ctx.scalars = ctypes.cast(self.values, ctypes.POINTER(ctypes.c_double))
        self.ctx.scratch_alloc = _SCRATCH
        self.keep = None


def _call_state():
    call = getattr(_state, "call", None)
    if call is None:
        call = _state.call = _CallState()
    return call


__all__ = ["Model", "EXPORT", "build", "build_command", "library", "problem"]
