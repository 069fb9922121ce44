"""Checks the exported kernel against the problem's own Model.

Written by `kfctl export --torch` (kfctl/py/export_test.py in KernelFoundry).
Run it from the folder that holds the package:

    python3 -m PACKAGE.test_kernel [--sets N] [--seed S]

It builds the problem's Model and the exported one from the same
get_init_inputs() and the same state_dict, draws N fresh input sets from
get_inputs() with seeds the search never used (default from 1000003),
runs both, and judges every output with the run's rule: an element is
right when its relative error is under rtol or its absolute error at most
atol; at least min_match of them must be, and the cosine similarity of
the flattened outputs at least min_cosine. Exits 0 when every set
passes, 1 when one does not (naming it), and prints one line per set.
"""
import argparse
import importlib
import os
import sys

import torch

if __package__:
    _pkg = importlib.import_module(__package__)
else:   # run as a file: the package is the folder this file is in
    _here = os.path.dirname(os.path.abspath(__file__))
    sys.path.insert(0, os.path.dirname(_here))
    _pkg = importlib.import_module(os.path.basename(_here))

_ATOL_DEFAULT = {"f32": 1e-5, "f64": 1e-8, "f16": 1e-3, "bf16": 1e-2, "i32": 0.0, "i64": 0.0}


def _flatten(value):
    if isinstance(value, torch.Tensor):
        return [value]
    if isinstance(value, (list, tuple)):
        return [t for v in value for t in _flatten(v)]
    if isinstance(value, dict):
        return [t for v in value.values() for t in _flatten(v)]
    return []


def _tolerance(dtype):
    tol = _pkg.EXPORT.get("tolerance") or {}
    atol = tol.get("atol", _ATOL_DEFAULT)
    if isinstance(atol, dict):
        atol = atol.get(dtype, _ATOL_DEFAULT.get(dtype, 1e-5))
    return (float(tol.get("rtol", 1e-2)), float(atol), float(tol.get("min_match", 0.99)),
            float(tol.get("min_cosine", 0.99985)))


def judge(got, want, dtype):
    """None when GOT is right against WANT, else why not."""
    if got.shape != want.shape:
        return "shape %s, want %s" % (list(got.shape), list(want.shape))
    rtol, atol, min_match, min_cosine = _tolerance(dtype)
    g = got.detach().double().cpu().flatten()
    w = want.detach().double().cpu().flatten()
    if g.numel() == 0:
        return None
    err = (g - w).abs()
    ok = (err <= atol) | (err < rtol * w.abs())
    ok &= torch.isfinite(g) | (g == w)
    match = ok.double().mean().item()
    norm = g.norm().item() * w.norm().item()
    cosine = (g @ w).item() / norm if norm > 0 else (1.0 if g.norm().item() == w.norm().item() else 0.0)
    if match < min_match or cosine < min_cosine:
        return ("%.4f of the elements right (need %.4f), cosine %.6f (need %.6f), largest error %.3g"
                % (match, min_match, cosine, min_cosine, err.max().item()))
    return None


def main(argv=None):
    parser = argparse.ArgumentParser(description="compare the exported kernel with the problem")
    parser.add_argument("--sets", type=int, default=5)
    parser.add_argument("--seed", type=int, default=1000003)
    opts = parser.parse_args(argv)
    problem = _pkg.problem
    device = _pkg.DEVICE
    torch.manual_seed(opts.seed)
    init = problem.get_init_inputs()
    if isinstance(init, dict):
        reference = problem.Model(**init)
        kernel = _pkg.Model(**init)
    else:
        reference = problem.Model(*init)
        kernel = _pkg.Model(*init)
    kernel.load_state_dict(reference.state_dict())
    reference.to(device)
    kernel.to(device)
    failed = 0
    for s in range(opts.sets):
        torch.manual_seed(opts.seed + 1 + s)
        inputs = [x.to(device) if isinstance(x, torch.Tensor) else x for x in problem.get_inputs()]
        with torch.no_grad():
            want = _flatten(reference(*[x.clone() if isinstance(x, torch.Tensor) else x
                                        for x in inputs]))
            got = _flatten(kernel(*inputs))
        if len(got) != len(want):
            print("set %d: %d outputs, the problem gives %d" % (s, len(got), len(want)))
            failed += 1
            continue
        bad = []
        for i, (g, w) in enumerate(zip(got, want)):
            why = judge(g, w, _pkg.EXPORT["outputs"][i]["dtype"])
            if why:
                bad.append("output %d: %s" % (i, why))
        worst = max(((g.double() - w.double()).abs().max().item() if g.numel() else 0.0)
                    for g, w in zip(got, want)) if got else 0.0
        print("set %d (seed %d): %s" % (s, opts.seed + 1 + s,
                                        "; ".join(bad) if bad else "ok, largest error %.3g" % worst))
        failed += bool(bad)
    print("%d of %d sets match the problem's Model" % (opts.sets - failed, opts.sets))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
