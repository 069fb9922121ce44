#!/usr/bin/env python3
"""tests/fuzz/make_seeds.py - writes the seed inputs of the codec fuzzer
(tests/fuzz/fuzz_proto.c explains the input format) into
tests/fuzz/corpus/: one valid message of each type on its endpoint, plus a
few broken ones. libFuzzer grows the corpus from these; `make fuzz` keeps
what it found there."""
import json, os, struct, sys

EP = {"worker_in": 0, "worker_out": 1, "client_in": 2, "client_out": 3,
      "status_in": 4, "event_out": 5, "any": 6}
out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "corpus")
os.makedirs(out, exist_ok=True)

def frames(*fs):
    return b"".join(struct.pack("<H", len(f)) + f for f in fs)

def msg(name, ep, mtype, body, extra=(), routing=True, topic=False, sig=b"KF\x01"):
    head = (1 if routing else 0) | (2 if topic else 0) | (EP[ep] << 2)
    fs = []
    if routing:
        fs.append(b"\x00\x6b\x8b\x45\x67")
    if topic:
        fs.append(b"run/1/")
    fs += [sig, mtype.encode(), json.dumps(body).encode()] + list(extra)
    with open(os.path.join(out, "seed-" + name), "wb") as f:
        f.write(bytes([head]) + frames(*fs))

msg("hello", "worker_in", "HELLO", {"worker_id": "w-1", "role": "compile", "credits": 2,
    "capabilities": {"backends": ["host"], "arch": "x86_64", "devices": [{"name": "cpu"}]}})
msg("heartbeat", "worker_in", "HEARTBEAT", {"credits": 0, "jobs": [1, 2]})
msg("result", "worker_in", "RESULT", {"job_id": 7, "lease": 1, "ok": False, "result": {},
    "error": "worker is stopping", "returned": True}, [b"\x7fELF artifact"])
msg("bye", "worker_in", "BYE", {})
msg("welcome", "worker_out", "WELCOME", {"worker_id": "w-1", "heartbeat_ms": 1000, "liveness": 3},
    routing=False)
msg("job", "worker_out", "JOB", {"job_id": 9, "lease": 2, "kind": "compile",
    "payload": {"language": "c", "target": {"backend": "host"}}}, [b"int kf_forward(void);"],
    routing=False)
msg("submit", "client_in", "SUBMIT", {"task": {"name": "t"}, "config": {"generations": 2}})
msg("drain", "client_in", "DRAIN", {"worker_id": "w-1", "resume": False})
msg("show", "client_in", "SHOW", {"run_id": 1})
msg("status", "status_in", "STATUS", {})
msg("error", "client_out", "ERROR", {"code": "not-found", "reason": "no"}, routing=False)
msg("event", "event_out", "EVENT", {"run_id": 1, "event": "candidate"}, routing=False, topic=True)
msg("badversion", "worker_in", "HELLO", {}, sig=b"KF\x02")
msg("badtype", "client_in", "hello", {})
msg("notobject", "client_in", "RUNS", [1, 2])
msg("unicode", "client_in", "SHOW", {"run_id": 1, "x": "\u00e9\u4e2d\\\"\n"})

# Multi-frame messages (issue 13, item 7): a run (length 0xffff, count,
# size, bytes) makes many frames from a few input bytes.
def run(count, size, byte=b"x"):
    return struct.pack("<HHB", 0xFFFF, count, size) + byte * size

def raw(name, ep, mtype, body, tail, routing=True):
    head = (1 if routing else 0) | (EP[ep] << 2)
    fs = ([b"\x00\x6b\x8b\x45\x67"] if routing else []) + [b"KF\x01", mtype.encode(),
                                                          json.dumps(body).encode()]
    with open(os.path.join(out, "seed-" + name), "wb") as f:
        f.write(bytes([head]) + frames(*fs) + tail)

raw("manyframes", "worker_in", "HEARTBEAT", {}, run(20000, 1))
raw("framesoversize", "worker_in", "RESULT", {"job_id": 1, "lease": 1, "ok": True,
    "result": {}}, run(16, 255))
raw("frames16", "worker_in", "RESULT", {"job_id": 1, "lease": 1, "lease_token": "0" * 32,
    "ok": True, "result": {}}, run(16, 8))
raw("frames17", "worker_out", "JOB", {"job_id": 1, "lease": 1, "kind": "compile",
    "payload": {}}, run(17, 2), routing=False)
msg("worker-error", "worker_in", "ERROR", {"code": "malformed", "reason": "bad JOB"})
