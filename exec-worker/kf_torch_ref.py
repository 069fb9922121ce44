"""kf_torch_ref.py - runs one PyTorch reference problem for the exec worker.

The worker carries this file inside its binary (exec-worker/kf_torch_ref.c),
writes it into the job's private directory next to the problem and runs

    PYTHON -B -s kf_torch_ref.py DIR

as the sandboxed, unprivileged child. DIR holds:

    job.json     the job: seed, sets, device, timing, compile, atol, export,
                 max_bytes (the cap on the data), data_file, data_only
    problem.py   the problem in the KernelBench format: class Model(nn.Module),
                 get_inputs(), get_init_inputs()

and receives, on success, data.bin (every tensor, raw little-endian, in
manifest order; each manifest entry has its offset and bytes) and
manifest.json, written last; on failure error.json {stage, error,
traceback, limit} and exit code 1. The format and the order of the
tensors are described in docs/pytorch-references.md; keep the two in step.
"""

import json
import math
import os
import sys
import time
import traceback

# What the runner is doing, so an exception can say where it happened.
STAGE = "start"

# torch dtype name -> the kf dtype names of kf_kernel.h; filled once torch
# is imported.
KF_DTYPES = {}


class LimitError(Exception):
    """A limit of the worker's was reached: not the problem's fault."""


def set_stage(name):
    global STAGE
    STAGE = name


def write_json(work, name, obj):
    """Writes OBJ as DIR/NAME whole or not at all (write, then rename)."""
    tmp = os.path.join(work, "." + name + ".tmp")
    with open(tmp, "w") as f:
        json.dump(obj, f, allow_nan=False)
    os.rename(tmp, os.path.join(work, name))


def json_value(v):
    """A JSON-safe form of a non-tensor argument or result."""
    if v is None or isinstance(v, (bool, int, str)):
        return v
    if isinstance(v, float):
        # JSON has no NaN or infinity; jansson on the other side rejects them.
        return v if math.isfinite(v) else repr(v)
    if isinstance(v, (list, tuple)):
        return [json_value(x) for x in v]
    return repr(v)


def sandbox_environment(work):
    """Keeps every cache torch, inductor or triton may write inside DIR.

    The child runs as an unprivileged user whose HOME (inherited from the
    worker) it may not write; and nothing a job leaves behind should reach
    the next job. Must run before torch is imported.
    """
    cache = os.path.join(work, ".cache")
    os.environ["HOME"] = work
    os.environ["XDG_CACHE_HOME"] = cache
    os.environ["TORCHINDUCTOR_CACHE_DIR"] = os.path.join(cache, "inductor")
    os.environ["TRITON_CACHE_DIR"] = os.path.join(cache, "triton")
    # Inductor compiles in a pool of worker processes by default; they
    # count against the sandbox's process limit and gain nothing here.
    os.environ.setdefault("TORCHINDUCTOR_COMPILE_THREADS", "1")


def seed_everything(torch, seed):
    """Seeds every generator a problem is likely to draw from."""
    import random
    random.seed(seed)
    torch.manual_seed(seed)          # also seeds every CUDA device
    if "numpy" in sys.modules:
        sys.modules["numpy"].random.seed(seed % (2 ** 32))


def load_problem(work):
    """Imports DIR/problem.py as the module kf_problem."""
    import importlib.util
    path = os.path.join(work, "problem.py")
    spec = importlib.util.spec_from_file_location("kf_problem", path)
    module = importlib.util.module_from_spec(spec)
    # Registered, so torch.compile and pickling can find the module by name.
    sys.modules["kf_problem"] = module
    spec.loader.exec_module(module)
    for name in ("Model", "get_inputs", "get_init_inputs"):
        if not hasattr(module, name):
            raise AttributeError("problem.py defines no '%s' (the KernelBench "
                                 "format needs Model, get_inputs and "
                                 "get_init_inputs)" % name)
    return module


def build_model(torch, problem, seed, device):
    set_stage("get_init_inputs")
    seed_everything(torch, seed)
    init = problem.get_init_inputs()
    set_stage("Model(*get_init_inputs())")
    if isinstance(init, dict):
        model = problem.Model(**init)
        init_values = list(init.values())
    else:
        init_values = list(init) if init is not None else []
        model = problem.Model(*init_values)
    # The module is used as constructed, in its default (training) mode,
    # as the KernelBench harness does; docs/pytorch-references.md says so.
    return model.to(device), init_values


def flatten(value, out):
    """Appends the leaves of a (nested) tuple, list or dict result to OUT."""
    if isinstance(value, (tuple, list)):
        for v in value:
            flatten(v, out)
    elif isinstance(value, dict):
        for v in value.values():
            flatten(v, out)
    else:
        out.append(value)
    return out


# Elements per piece when a tensor is written, hashed or summarised: a
# tensor of any size (KernelBench's are 6.4 GB) passes through in pieces
# of at most this many elements, never as one bytes object (Python's
# bytes and ctypes.string_at stop at 2 GiB) nor as one float64 copy.
CHUNK_ELEMENTS = 1 << 22


def chunks(torch, t):
    """T (any device) as CPU, contiguous, flat pieces in element order."""
    flat = t.detach().contiguous().view(-1)
    n = flat.numel()
    for start in range(0, n, CHUNK_ELEMENTS):
        yield flat[start:start + CHUNK_ELEMENTS].to("cpu").contiguous()


def raw(c):
    """The bytes of the CPU tensor C as a buffer (no copy); keep C alive."""
    import ctypes
    n = c.numel() * c.element_size()
    return memoryview((ctypes.c_char * n).from_address(c.data_ptr())) if n else b""


class Summary:
    """What the degenerate-output check needs of one tensor of one set,
    and what the prompt says of its values (min, max, mean, std, share of
    zeros over the finite elements), gathered piece by piece: no copy of
    the data is kept."""

    def __init__(self):
        self.numel = 0
        self.first = None         # the first element, as a float
        self.constant = True      # every element equals the first
        self.n_finite = 0
        self.lo = self.hi = None  # finite minimum and maximum
        self.total = self.total_sq = 0.0
        self.zeros = 0
        # A digest of the raw bytes, to tell whether two sets are bitwise
        # equal. SHA-1 because OpenSSL runs it fastest of hashlib's; it
        # only compares a problem's outputs with each other.
        import hashlib
        self.digest = hashlib.sha1()

    def add(self, torch, c, data):
        self.digest.update(data)
        if c.numel() == 0:
            return
        v = c.double()
        if self.first is None:
            self.first = float(v[0])
        self.numel += v.numel()
        if self.constant and not bool((v == self.first).all()):
            self.constant = False
        finite = torch.isfinite(v)
        if bool(finite.any()):
            f = v[finite]
            self.n_finite += f.numel()
            lo, hi = float(f.min()), float(f.max())
            self.lo = lo if self.lo is None else min(self.lo, lo)
            self.hi = hi if self.hi is None else max(self.hi, hi)
            self.total += float(f.sum())
            self.total_sq += float((f * f).sum())
            self.zeros += int((f == 0).sum())

    @property
    def finite(self):
        """Some element is finite."""
        return self.n_finite > 0

    @property
    def max_abs(self):
        """The largest finite magnitude (0 when none is finite)."""
        return max(abs(self.lo), abs(self.hi)) if self.n_finite else 0.0

    def stats(self):
        """{min, max, mean, std, zero_fraction} of the finite elements, or
        None when there is none."""
        if not self.n_finite:
            return None
        mean = self.total / self.n_finite
        var = max(self.total_sq / self.n_finite - mean * mean, 0.0)
        return {"min": self.lo, "max": self.hi, "mean": mean, "std": var ** 0.5,
                "zero_fraction": self.zeros / self.n_finite}


class Exporter:
    """Collects the manifest entries and writes every tensor, in manifest
    order, into one file (DIR/data.bin), each entry with its offset.

    With export off nothing is written and no entry is made, but each
    tensor is still summarised for the degenerate-output check. Sizes and
    offsets are Python integers: 64-bit and more.
    """

    def __init__(self, torch, work, job, export, summarise):
        self.torch = torch
        self.work = work
        self.max_bytes = int(job.get("max_bytes", 0))
        self.export = export
        self.summarise = summarise
        self.total = 0
        self.tensors = []
        self.scalars = []
        self.summaries = {}   # (role, set, index) -> (kf dtype, Summary)
        self.file = None
        if export:
            self.path = os.path.join(work, job.get("data_file", "data.bin"))
            self.file = open(self.path, "wb")

    def close(self):
        if self.file is not None:
            self.file.close()
            self.file = None

    def limit(self, role, set_index, name, n):
        where = "%s '%s'%s" % (role, name, "" if set_index is None else
                               " of set %d" % set_index)
        raise LimitError("the reference data needs more than %d bytes (%d written, "
                         "then %s of %d bytes), over the exec worker's reference "
                         "cache cap of %d bytes (reference_cache_max_mb; use fewer "
                         "sets or smaller shapes)"
                         % (self.total + n, self.total, where, n, self.max_bytes))

    def tensor(self, role, set_index, index, name, t):
        kf = KF_DTYPES.get(t.dtype)
        if kf is None:
            raise TypeError("%s '%s': dtype %s has no kf dtype (f32 f64 f16 bf16 "
                            "i32 i64)" % (role, name, str(t.dtype)))
        n = t.numel() * t.element_size()
        if self.export and self.max_bytes and self.total + n > self.max_bytes:
            self.limit(role, set_index, name, n)
        summary = Summary() if self.summarise else None
        if summary is not None:
            self.summaries[(role, set_index, index)] = (kf, summary)
        if not self.export and summary is None:
            return
        offset = self.total
        for c in chunks(self.torch, t):
            data = raw(c)
            if self.export:
                try:
                    self.file.write(data)
                except OSError as e:
                    # A full disk or the file-size limit: the same on
                    # another try of this worker, so said as a limit.
                    st = os.statvfs(self.work)
                    raise LimitError("cannot write the reference data: %s after %d "
                                     "bytes, writing %d more (%s '%s'); %d bytes free "
                                     "where it is written" % (
                                         e.strerror or e, self.total, n, role, name,
                                         st.f_bavail * st.f_frsize))
            if summary is not None:
                summary.add(self.torch, c, data)
        if not self.export:
            return
        self.total += n
        entry = {"role": role, "set": set_index, "index": index, "name": name,
                 "dtype": kf, "shape": list(t.shape), "bytes": n, "offset": offset}
        stats = summary.stats() if summary is not None else None
        if stats is not None:
            entry["stats"] = stats
        self.tensors.append(entry)

    def scalar(self, role, set_index, index, name, value):
        self.scalars.append({"role": role, "set": set_index, "index": index,
                             "name": name, "value": json_value(value)})


def percentile(sorted_values, q):
    """Linear interpolation between ranks, as kf_eval_stats.c computes it."""
    n = len(sorted_values)
    if n == 0:
        return 0.0
    pos = q * (n - 1)
    lo = int(pos)
    hi = lo + 1 if lo + 1 < n else lo
    return sorted_values[lo] + (sorted_values[hi] - sorted_values[lo]) * (pos - lo)


def last_level_cache_bytes():
    try:
        with open("/sys/devices/system/cpu/cpu0/cache/index3/size") as f:
            text = f.read().strip()
        scale = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}.get(text[-1:], 1)
        return int(text.rstrip("KMG")) * scale
    except (OSError, ValueError):
        return 32 << 20


class Timer:
    """The evaluator's timing protocol (docs/evaluation.md, "Timing").

    Warm-up until warmup_s and warmup_calls; an inner loop of about a
    millisecond per sample; the cache flushed before each sample; samples
    until min_samples and min_time_s; median, p10 and p90 per call. On
    CUDA a sample is two events around a device-wide synchronisation, so
    work on any stream is inside it, less the fixed cost of that
    synchronisation measured on empty samples.
    """

    def __init__(self, torch, device, timing):
        self.torch = torch
        self.cuda = device.type == "cuda"
        self.min_time_s = float(timing.get("min_time_s", 1.0))
        self.warmup_s = float(timing.get("warmup_s", 1.0))
        self.min_samples = max(3, int(timing.get("min_samples", 10)))
        self.warmup_calls = max(1, int(timing.get("warmup_calls", 10)))
        if self.cuda:
            props = torch.cuda.get_device_properties(device)
            l2 = getattr(props, "L2_cache_size", 0) or (64 << 20)
            self.flush_buf = torch.empty(2 * l2, dtype=torch.uint8, device=device)
        else:
            self.flush_buf = torch.empty(2 * last_level_cache_bytes(), dtype=torch.uint8)
        self.salt = 0
        self.overhead_ns = 0.0
        if self.cuda:
            empty = [self.cuda_sample(lambda: None, 1) for _ in range(16)]
            self.overhead_ns = sorted(empty)[len(empty) // 2]

    def sync(self):
        if self.cuda:
            self.torch.cuda.synchronize()

    def flush(self):
        # Writing a buffer twice the size of the last-level cache (L2 on
        # the GPU) leaves neither the model nor its inputs warm in it.
        self.salt = (self.salt + 1) & 0xff
        self.flush_buf.fill_(self.salt)
        self.sync()

    def cuda_sample(self, call, calls):
        torch = self.torch
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        torch.cuda.synchronize()
        start.record()
        for _ in range(calls):
            call()
        torch.cuda.synchronize()
        end.record()
        end.synchronize()
        return start.elapsed_time(end) * 1e6

    def sample(self, call, calls):
        if self.cuda:
            return max(0.0, self.cuda_sample(call, calls) - self.overhead_ns)
        t0 = time.perf_counter_ns()
        for _ in range(calls):
            call()
        return float(time.perf_counter_ns() - t0)

    def run(self, call):
        calls = 0
        spent = 0.0
        start = time.perf_counter()
        while calls < self.warmup_calls or time.perf_counter() - start < self.warmup_s:
            self.sync()
            t0 = time.perf_counter()
            call()
            self.sync()
            spent += time.perf_counter() - t0
            calls += 1
        per_call = spent / calls
        inner = int(math.ceil(1e-3 / per_call)) if per_call > 0 else 1000
        inner = min(max(inner, 1), 100000)
        samples = []
        measured = 0.0
        while (len(samples) < self.min_samples or measured < self.min_time_s) \
                and len(samples) < 100000:
            self.flush()
            ns = self.sample(call, inner)
            samples.append(ns / inner)
            measured += ns * 1e-9
        ordered = sorted(samples)
        stats = {"median_ns": percentile(ordered, 0.5),
                 "p10_ns": percentile(ordered, 0.1),
                 "p90_ns": percentile(ordered, 0.9),
                 "samples": len(samples), "calls_per_sample": inner}
        if self.cuda:
            stats["sync_overhead_ns"] = self.overhead_ns
        return stats


def degenerate_reasons(torch, exporter, n_outputs, n_sets, n_inputs, atol, rtol):
    """Why the reference's outputs cannot tell a right kernel from a wrong one.

    An output that is constant or the same for every input set is matched
    by a kernel that ignores its inputs; such a task proves nothing about
    a candidate. An output smaller than the absolute tolerance everywhere
    (KernelBench's 23_Softmax: 393216 columns, every value near 2.5e-6)
    would be matched by zeros, or by twice the right values; it is not
    refused but judged with a smaller absolute tolerance: RTOL times its
    largest magnitude (the smallest such figure over outputs and sets),
    returned as the second value (None when no output needs it).
    """
    reasons = []
    scaled = None
    for j in range(n_outputs):
        kept = [exporter.summaries.get(("output", s, j)) for s in range(n_sets)]
        if any(k is None for k in kept):
            continue          # not a tensor in every set
        label = "output %d ('%s')" % (j, "out%d" % j)
        sums = [k[1] for k in kept]
        if all(v.numel > 0 and not v.finite for v in sums):
            reasons.append("%s: no finite element in any set" % label)
            continue
        if all(v.numel > 1 and v.constant for v in sums):
            reasons.append("%s: constant (every element is %g)" % (label, sums[0].first))
        digests = [v.digest.digest() for v in sums]
        if n_sets > 1 and all(d == digests[0] for d in digests[1:]):
            reasons.append("%s: the same in every input set" % label)
        if all(v.max_abs <= atol for v in sums):
            smallest = min(v.max_abs for v in sums)
            if smallest > 0:
                bound = rtol * smallest
                scaled = bound if scaled is None else min(scaled, bound)
            elif not all(v.numel > 1 and v.constant for v in sums):
                reasons.append("%s: every element is within the absolute bound %g of 0"
                               % (label, atol))
    if n_sets > 1 and n_inputs > 0:
        same = True
        for i in range(n_inputs):
            kept = [exporter.summaries.get(("input", s, i)) for s in range(n_sets)]
            if any(k is None for k in kept) or any(
                    k[1].digest.digest() != kept[0][1].digest.digest() for k in kept[1:]):
                same = False
                break
        if same:
            reasons.append("inputs: identical in every set (get_inputs ignores the seed)")
    return reasons, scaled


def time_compiled(torch, model, args, timer, reference_outputs, atol):
    """torch.compile's time on ARGS, or {error} when it cannot compile."""
    if not hasattr(torch, "compile"):
        return {"error": "torch.compile is not available in torch %s" % torch.__version__}
    try:
        compiled = torch.compile(model)
        t0 = time.perf_counter()
        with torch.no_grad():
            first = flatten(compiled(*args), [])
            timer.sync()
        compile_s = time.perf_counter() - t0
        # The compiled module should compute what eager computed; say so
        # rather than time a different function silently.
        matches = len(first) == len(reference_outputs)
        for a, b in zip(first, reference_outputs):
            if torch.is_tensor(a) and torch.is_tensor(b):
                matches = matches and a.shape == b.shape and bool(torch.allclose(
                    a.detach().double().cpu(), b.detach().double().cpu(),
                    rtol=1e-2, atol=max(atol, 1e-5), equal_nan=True))
        with torch.no_grad():
            stats = timer.run(lambda: compiled(*args))
        stats["compile_s"] = compile_s
        stats["matches_eager"] = bool(matches)
        return stats
    except Exception as e:   # a compiler failure is a result, not a failed job
        text = "%s: %s" % (type(e).__name__, e)
        return {"error": text[:2000]}


def run(work, job):
    set_stage("import torch")
    import torch
    if sys.byteorder != "little":
        raise RuntimeError("this runner writes native byte order and needs a "
                           "little-endian host")
    KF_DTYPES.update({torch.float32: "f32", torch.float64: "f64",
                      torch.float16: "f16", torch.bfloat16: "bf16",
                      torch.int32: "i32", torch.int64: "i64"})

    seed = int(job.get("seed", 0))
    sets = int(job.get("sets", 5))
    device = torch.device(job.get("device", "cpu"))
    atol = float(job.get("atol", 1e-5))
    rtol = float(job.get("rtol", 1e-2))
    export = bool(job.get("export", True))
    # data_only: the data again on another host (an exec worker that lacks
    # a run's cache entry), nothing measured and nothing checked.
    data_only = bool(job.get("data_only", False))
    exporter = Exporter(torch, work, job, export, not data_only)

    set_stage("device")
    if device.type == "cuda":
        torch.cuda.set_device(device)

    set_stage("import problem.py")
    problem = load_problem(work)
    model, init_values = build_model(torch, problem, seed, device)
    for i, v in enumerate(init_values):
        exporter.scalar("init", None, i, "init%d" % i, v if not torch.is_tensor(v) else repr(v))

    # Parameters and buffers as constructed, before any forward call (a
    # module in training mode may update its buffers when called).
    set_stage("export parameters")
    for i, (name, p) in enumerate(model.named_parameters()):
        exporter.tensor("param", None, i, name, p)
    for i, (name, b) in enumerate(model.named_buffers()):
        exporter.tensor("buffer", None, i, name, b)

    before_sets = exporter.total
    n_inputs = 0
    n_outputs = 0
    last_args = None
    last_outputs = None
    # A problem at its published size may fill the cache with one set
    # (KernelBench's 23_Softmax: 6.4 GB an input, as much an output): the
    # number of sets is cut to what fits beside the first, and said so in
    # the manifest. Only a first set that does not fit fails (LimitError).
    requested = sets
    s = 0
    while s < sets:
        if s == 1 and export and not data_only and exporter.max_bytes:
            per_set = max(exporter.total - before_sets, 1)
            fits = 1 + max(exporter.max_bytes - exporter.total, 0) // per_set
            sets = min(sets, fits)
            if sets < 2:
                break
        set_stage("get_inputs (set %d)" % s)
        seed_everything(torch, seed + s)
        inputs = problem.get_inputs()
        inputs = list(inputs) if isinstance(inputs, (list, tuple)) else [inputs]
        n_inputs = len(inputs)
        set_stage("export inputs (set %d)" % s)
        args = []
        for i, v in enumerate(inputs):
            if torch.is_tensor(v):
                # Exported before forward, so an in-place model cannot
                # change what the candidate will be given.
                exporter.tensor("input", s, i, "in%d" % i, v)
                args.append(v.to(device))
            else:
                exporter.scalar("input", s, i, "in%d" % i, v)
                args.append(v)
        set_stage("forward (set %d)" % s)
        with torch.no_grad():
            result = model(*args)
        outputs = flatten(result, [])
        n_outputs = len(outputs)
        set_stage("export outputs (set %d)" % s)
        for j, v in enumerate(outputs):
            if torch.is_tensor(v):
                exporter.tensor("output", s, j, "out%d" % j, v)
            else:
                exporter.scalar("output", s, j, "out%d" % j, v)
        last_args = args
        last_outputs = outputs
        s += 1

    set_stage("export (closing the data file)")
    exporter.close()
    if data_only:
        write_json(work, "manifest.json", {
            "tensors": exporter.tensors, "scalars": exporter.scalars,
            "data_bytes": exporter.total, "torch_version": torch.__version__,
            "python": sys.executable, "device": str(device), "seed": seed,
            "sets": sets})
        return

    set_stage("degenerate-output check")
    degenerate, atol_scaled = degenerate_reasons(torch, exporter, n_outputs, sets, n_inputs,
                                                 atol, rtol)

    # Timed on the last set's inputs, as the evaluator times a candidate.
    set_stage("timing (eager)")
    timer = Timer(torch, device, job.get("timing") or {})
    with torch.no_grad():
        eager = timer.run(lambda: model(*last_args))
    timing = {"eager": eager}
    if job.get("compile", True):
        set_stage("timing (torch.compile)")
        timing["compiled"] = time_compiled(torch, model, last_args, timer,
                                           last_outputs, atol)

    set_stage("manifest")
    manifest = {
        "tensors": exporter.tensors,
        "scalars": exporter.scalars,
        "data_bytes": exporter.total,
        "timing": timing,
        "degenerate": degenerate,
        "torch_version": torch.__version__,
        "python": sys.executable,
        "device": str(device),
        "seed": seed,
        "sets": sets,
        "sets_requested": requested,
    }
    if atol_scaled is not None:
        manifest["atol_scaled"] = atol_scaled
    if device.type == "cuda":
        manifest["device_name"] = torch.cuda.get_device_name(device)
    write_json(work, "manifest.json", manifest)


def problem_traceback(e):
    """The traceback of E without the runner's own frames at its top.

    What the author of problem.py needs starts at the first frame outside
    this file: their own code, or torch's and importlib's on its behalf.
    """
    tb = e.__traceback__
    here = os.path.abspath(__file__)
    while tb is not None and os.path.abspath(tb.tb_frame.f_code.co_filename) == here:
        tb = tb.tb_next
    if tb is None:
        return traceback.format_exc()
    return "".join(traceback.format_exception(type(e), e, tb))


def main():
    if len(sys.argv) != 2:
        sys.stderr.write("usage: kf_torch_ref.py DIR\n")
        return 2
    work = os.path.abspath(sys.argv[1])
    sandbox_environment(work)
    try:
        with open(os.path.join(work, "job.json")) as f:
            job = json.load(f)
        run(work, job)
        return 0
    except BaseException as e:
        # The worker turns this into ok: false with the traceback; paths
        # are made relative to DIR so the message names problem.py.
        text = problem_traceback(e).replace(work + os.sep, "")
        error = "%s: %s" % (type(e).__name__, e)
        try:
            write_json(work, "error.json", {"stage": STAGE, "error": error[:2000],
                                            "traceback": text[-8000:],
                                            "limit": isinstance(e, LimitError)})
        except Exception:
            sys.stderr.write(text)
        return 1


if __name__ == "__main__":
    sys.exit(main())
