#!/usr/bin/env bash
# test_deploy.sh - the fleet recipes in deploy/ are well formed.
# systemd units: systemd-analyze verify (with ExecStart pointed at this
# build, and each template unit as an instance); the Slurm script: bash -n
# and shellcheck when present, and its per-node part really starts one
# exec worker per GPU listed in CUDA_VISIBLE_DEVICES and stops them on
# SIGTERM; the Kubernetes manifests: YAML whose objects reference only
# volumes, ConfigMaps and Secrets that exist, an exec DaemonSet that asks
# for nvidia.com/gpu, and configuration keys the daemons accept; and, where
# node and npm are, every object against the Kubernetes API's schemas.
. "$(dirname "$0")/lib.sh"

# ---- systemd
if command -v systemd-analyze >/dev/null 2>&1; then
    mkdir -p "$T/units"
    for u in "$ROOT"/deploy/systemd/*.service; do
        name=$(basename "$u")
        case "$name" in *@.service) name=${name%@.service}@0.service ;; esac
        sed "s#/usr/local/bin#$BIN#g" "$u" >"$T/units/$name"
    done
    for u in "$T"/units/*.service; do
        out=$(cd "$T/units" && systemd-analyze verify "./$(basename "$u")" 2>&1)
        rc=$?
        [ -n "$out" ] && say "$out"
        check "systemd-analyze verify $(basename "$u")" [ "$rc" -eq 0 -a -z "$out" ]
    done
    check "a template unit per worker role" \
        ls "$ROOT/deploy/systemd/kf-exec-worker@.service" "$ROOT/deploy/systemd/kf-compile-worker@.service" \
           "$ROOT/deploy/systemd/kf-llm-gateway@.service"
else
    say "systemd-analyze not found here: the unit checks are skipped (apt-get install systemd)"
fi

# ---- Slurm
S=$ROOT/deploy/slurm/kf-exec-workers.sbatch
check "the Slurm script parses" bash -n "$S"
if command -v shellcheck >/dev/null 2>&1; then
    check "shellcheck finds no warning in it" shellcheck -S warning "$S"
fi
# Its per-node part with two GPUs, against a real coordinator: two exec
# workers (host backend here) register and leave on SIGTERM. An exec worker
# probes for PyTorch before it registers: seconds, more on a busy machine.
db_new
start_coordinator "${COORD_FAST[@]}"
check "the coordinator answers" wait_until 120 kfctl status --json
KF_COORDINATOR=$KF_WORKER_ENDPOINT KF_BACKEND=host KF_BIN=$BIN CUDA_VISIBLE_DEVICES=0,1 \
    SLURM_JOB_ID=77 TMPDIR=$T KF_HEARTBEAT_MS=200 bash "$S" --node >"$T/slurm-node.log" 2>&1 &
node=$!
PIDS+=("$node")   # stopped (SIGTERM: its workers too) by the cleanup if the test dies first
check "the node part starts one worker per GPU" \
    wait_until 240 jtrue '[.workers[] | select(.name | test("-slurm77-gpu[01]$"))] | length == 2' \
    kfctl workers --json
kill -TERM "$node"
wait "$node"
untrack "$node"
check "on SIGTERM both stop" grep -q "2 worker(s) stopped" "$T/slurm-node.log"
check "and say goodbye" \
    wait_until 60 jtrue '[.workers[] | select(.name | test("-slurm77-"))] | length == 0' kfctl workers --json

# ---- Kubernetes
check "the manifests are consistent" python3 - "$ROOT/deploy/k8s" "$BIN" <<'PY'
import glob, os, re, subprocess, sys, yaml
root, bin_dir = sys.argv[1], sys.argv[2]
docs = []
for path in sorted(glob.glob(os.path.join(root, "*.yaml"))):
    for d in yaml.safe_load_all(open(path)):
        if d:
            docs.append((os.path.basename(path), d))
secrets_md = open(os.path.join(root, "secrets.md")).read()
secrets = set(re.findall(r"create secret generic ([a-z0-9-]+)", secrets_md))
configmaps = {d["metadata"]["name"]: d for _, d in docs if d["kind"] == "ConfigMap"}
ok = True
def bad(where, msg):
    global ok
    ok = False
    print(f"{where}: {msg}")
kinds = {}
for f, d in docs:
    where = f + ":" + d.get("kind", "?")
    for key in ("apiVersion", "kind", "metadata"):
        if key not in d:
            bad(where, "no " + key)
    kinds.setdefault(d["kind"], []).append(d["metadata"]["name"])
    if d["kind"] != "Namespace" and d["metadata"].get("namespace") != "kernelfoundry":
        bad(where, "not in namespace kernelfoundry")
    if d["kind"] in ("Deployment", "StatefulSet", "DaemonSet"):
        spec = d["spec"]
        labels = spec["template"]["metadata"]["labels"]
        for k, v in spec["selector"]["matchLabels"].items():
            if labels.get(k) != v:
                bad(where, "selector does not match the template's labels")
        pod = spec["template"]["spec"]
        vols = {v["name"]: v for v in pod.get("volumes", [])}
        claims = {c["metadata"]["name"] for c in spec.get("volumeClaimTemplates", [])}
        for c in pod["containers"]:
            for m in c.get("volumeMounts", []):
                if m["name"] not in vols and m["name"] not in claims:
                    bad(where, "mount of an unknown volume " + m["name"])
            for e in c.get("env", []):
                ref = e.get("valueFrom", {}).get("secretKeyRef")
                if ref and ref["name"] not in secrets:
                    bad(where, "env from a secret secrets.md does not make: " + ref["name"])
        for v in vols.values():
            if "secret" in v and v["secret"]["secretName"] not in secrets:
                bad(where, "volume from a secret secrets.md does not make: " + v["secret"]["secretName"])
            if "configMap" in v and v["configMap"]["name"] not in configmaps:
                bad(where, "volume from an unknown ConfigMap " + v["configMap"]["name"])
for name in ("kf-coordinator",):
    if name not in kinds.get("Deployment", []) or name not in kinds.get("Service", []):
        bad("coordinator", "needs a Deployment and a Service")
ds = [d for _, d in docs if d["kind"] == "DaemonSet"]
if not ds or not any("nvidia.com/gpu" in c.get("resources", {}).get("limits", {})
                     for d in ds for c in d["spec"]["template"]["spec"]["containers"]):
    bad("exec-workers", "no DaemonSet asking for nvidia.com/gpu")
if "StatefulSet" not in kinds:
    bad("postgres", "no StatefulSet")
# Every configuration key in the ConfigMaps is one the daemon accepts.
helps = {}
for daemon in ("kf-coordinator", "kf-exec-worker"):
    helps[daemon] = subprocess.run([os.path.join(bin_dir, daemon), "--help"],
                                   capture_output=True, text=True).stdout
for name, cm in configmaps.items():
    daemon = "kf-coordinator" if name == "kf-coordinator" else "kf-exec-worker"
    for text in cm["data"].values():
        for line in text.splitlines():
            if "=" in line:
                key = line.split("=")[0].strip().replace("_", "-")
                if "--" + key + " " not in helps[daemon] and "--" + key + "\n" not in helps[daemon]:
                    bad(name, f"{daemon} has no option {key}")
print("objects:", {k: len(v) for k, v in kinds.items()})
sys.exit(0 if ok else 1)
PY
# ---- Kubernetes: every object against the API's schemas (kubernetes-models,
# installed once from npm's registry with the locked versions). A copy with
# a wrong type must fail, so the check is known to bite.
k8s_tools=${KF_K8S_TOOLS:-${XDG_CACHE_HOME:-$HOME/.cache}/kf-k8s-validate}
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
    say "skipped: the schema check of the Kubernetes manifests needs node and npm"
else
    mkdir -p "$k8s_tools"
    cp "$ROOT/tests/tools/k8s/package.json" "$ROOT/tests/tools/k8s/package-lock.json" \
        "$ROOT/tests/tools/k8s/validate.mjs" "$k8s_tools/"
    [ -d "$k8s_tools/node_modules/kubernetes-models" ] \
        || (cd "$k8s_tools" && timeout 180 npm ci --silent --no-audit --no-fund) >"$T/npm.log" 2>&1
    if [ -d "$k8s_tools/node_modules/kubernetes-models" ]; then
        (cd "$k8s_tools" && node validate.mjs "$ROOT"/deploy/k8s/*.yaml) >"$T/k8s.txt" 2>&1
        check "every Kubernetes object validates against the API schemas ($(tail -1 "$T/k8s.txt"))" \
            [ $? -eq 0 ]
        sed 's/containerPort: \([0-9]*\)/containerPort: "p\1"/' "$ROOT/deploy/k8s/coordinator.yaml" \
            >"$T/broken.yaml"
        (cd "$k8s_tools" && node validate.mjs "$T/broken.yaml") >"$T/k8s-broken.txt" 2>&1
        check "and a port given as a string is refused" \
            sh -c "[ $? -ne 0 ] && grep -q 'containerPort must be integer' '$T/k8s-broken.txt'"
    else
        say "skipped: npm could not install the schema check (is its registry reachable?): $(tail -1 "$T/npm.log")"
    fi
fi

# ---- the database roles of docs/operations.md, run as written there
# (names made unique: roles are shared by the whole test server).
sfx=$$_$RANDOM
sed -n "/psql <<'SQL'/,/^    SQL$/p" "$ROOT/docs/operations.md" | sed '1d;$d; s/^    //' \
    | sed "s/kf_status/kfs_$sfx/g; s/ROLE kf /ROLE kfo_$sfx /; s/OWNER kf;/OWNER kfo_$sfx;/;
           s/FOR ROLE kf /FOR ROLE kfo_$sfx /; s/kernelfoundry/kfdb_$sfx/g" >"$T/roles.sql"
check "the roles script of operations.md runs" \
    psql -qX -v ON_ERROR_STOP=1 -h "$KF_TEST_PGHOST" -p "$KF_TEST_PGPORT" -d postgres -f "$T/roles.sql"
asrole() { psql -qAtX -h "$KF_TEST_PGHOST" -p "$KF_TEST_PGPORT" -d "kfdb_$sfx" -U "$1" -c "$2"; }
# The coordinator's role makes a table after the grants (as a migration would).
asrole "kfo_$sfx" "CREATE TABLE runs_later (id int); INSERT INTO runs_later VALUES (1)" >/dev/null
check "the read-only role reads a table created later" [ "$(asrole "kfs_$sfx" "SELECT count(*) FROM runs_later")" = 1 ]
check "the read-only role cannot write" \
    sh -c "psql -qAtX -h '$KF_TEST_PGHOST' -p '$KF_TEST_PGPORT' -d 'kfdb_$sfx' -U 'kfs_$sfx' -c 'INSERT INTO runs_later VALUES (2)' 2>&1 | grep -q 'permission denied'"
psql -qX -h "$KF_TEST_PGHOST" -p "$KF_TEST_PGPORT" -d postgres \
    -c "DROP DATABASE kfdb_$sfx" -c "DROP ROLE kfs_$sfx" -c "DROP ROLE kfo_$sfx" >/dev/null 2>&1
finish
