# tests/gpu/cluster.sh - sourced by the GPU scripts that run a whole
# single-node cluster (deploy/kf-local: private PostgreSQL, coordinator,
# offline generator, nvcc compile worker, CUDA exec worker with a torch
# interpreter): finding Python, reading JSON without jq (the GPU host has
# none), asking the database, and bringing the cluster up.
#
# Before sourcing: KF_BIN (binaries), optionally KF_PYTHON, KF_STATE.
# After: $python, $KF_STATE, and the functions below.

python=${KF_PYTHON:-}
if [ -z "$python" ]; then
    for p in /opt/torch/.venv/bin/python3 /usr/bin/python3; do
        if [ -x "$p" ] && "$p" -c 'import torch' 2>/dev/null; then python=$p; break; fi
    done
fi
[ -n "$python" ] || { echo "$(basename "$0"): no Python with torch (set KF_PYTHON)" >&2; exit 2; }
export KF_STATE=${KF_STATE:-$(mktemp -d /tmp/kf-gpu-cluster.XXXXXX)}
chmod 755 "$KF_STATE"

kfctl() { "$KF_BIN/kfctl" "$@"; }
fmt() { case $1 in n/a) echo n/a ;; *) printf '%.3f' "$1" ;; esac; }
# jget EXPR: a value from the JSON on standard input (EXPR is Python over
# `d`), "n/a" when it is missing.
jget() {
    "$python" -c 'import json, sys
try:
    d = json.loads(sys.stdin.read() or "null"); v = eval(sys.argv[1])
except Exception:
    v = None
print("n/a" if v is None else v)' "$1"
}
sql() {
    psql -qAt -h "$KF_STATE/pg" -p "${KF_PG_PORT:-5432}" -d kernelfoundry -c "$1" 2>/dev/null \
        || "$(ls /usr/lib/postgresql/*/bin/psql 2>/dev/null | head -1)" -qAt \
               -h "$KF_STATE/pg" -p "${KF_PG_PORT:-5432}" -d kernelfoundry -c "$1"
}

# cluster_up: kf-local up, then wait until the exec worker has registered
# (it measures its copy bandwidth at start-up), so the first run is not
# queued behind the probe. Waits for the state, at most two minutes.
cluster_up() {
    deploy/kf-local up || { echo "$(basename "$0"): kf-local up failed"; return 1; }
    local _
    for _ in $(seq 1 120); do
        kfctl workers 2>/dev/null | grep -q execute && break
        sleep 1
    done
    kfctl workers
}

cluster_down() { deploy/kf-local down >/dev/null 2>&1; }
