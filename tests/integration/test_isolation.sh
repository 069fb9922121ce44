#!/usr/bin/env bash
# test_isolation.sh - how a worker says it isolates what it runs (issue 13,
# item 1): an exec and a compile worker started normally pass the sandbox's
# probe and report "isolation" in their capabilities, which `kfctl workers`
# shows (ns, or ns+uid as root); one started with --no-isolation logs it
# loudly and shows OFF. A worker on a host that refuses the namespaces
# does not start at all, and says which sysctls allow them: tried by
# running it in a user namespace of its own with user.max_user_namespaces
# at 0, the kernel's real refusal (unshare(1) does the setting up).
. "$(dirname "$0")/lib.sh"

db_new
start_coordinator "${COORD_HB[@]}"
check "the coordinator answers" wait_until 20 kfctl status --json
start exec "$BIN/kf-exec-worker" --coordinator "$KF_WORKER_ENDPOINT" "${WORKER_HB[@]}" --name iso-on
start compile "$BIN/kf-compile-worker" --coordinator "$KF_WORKER_ENDPOINT" "${WORKER_HB[@]}" --name iso-cc
start exec-off "$BIN/kf-exec-worker" --coordinator "$KF_WORKER_ENDPOINT" "${WORKER_HB[@]}" \
    --name iso-off --no-isolation
check "three workers register" wait_until 120 jtrue '.workers | length == 3' kfctl workers --json
want=namespaces
[ "$(id -u)" -eq 0 ] && want="namespaces, uid per run"
check "the isolated exec and compile workers report '$want'" \
    jtrue "[.workers[] | select(.name == \"iso-on\" or .name == \"iso-cc\") | .capabilities.isolation == \"$want\"] == [true, true]" \
    kfctl workers --json
check "the --no-isolation worker reports off" \
    jtrue '.workers[] | select(.name == "iso-off") | .capabilities.isolation == "off"' kfctl workers --json
kfctl workers >"$T/workers.txt"
cat "$T/workers.txt" >&2
short=ns
[ "$(id -u)" -eq 0 ] && short=ns+uid
check "kfctl workers has an ISOLATION column" grep -q ISOLATION "$T/workers.txt"
id_of() { kfctl workers --json | jq -r ".workers[] | select(.name == \"$1\") | .id"; }
ON=$(id_of iso-on)
OFF=$(id_of iso-off)
check "it shows $short for the isolated one and OFF for the other" \
    sh -c "grep '^$ON ' '$T/workers.txt' | grep -qw -- '$short' && grep '^$OFF ' '$T/workers.txt' | grep -qw OFF"
check "the --no-isolation worker says so loudly in its log" grep -q "NO ISOLATION" "$T/exec-off.log"

# No user namespaces to give: the worker refuses to start, and says how.
if command -v unshare >/dev/null && unshare -U --map-user=1000 --keep-caps true 2>/dev/null; then
    refused() {
        local as=()
        [ "$(id -u)" -eq 0 ] && as=(setpriv --reuid=65534 --regid=65534 --clear-groups --)
        # uid 1000 in a user namespace of its own, whose max_user_namespaces is 0.
        ${as[@]+"${as[@]}"} unshare -U --map-user=1000 --map-group=1000 --keep-caps \
            sh -c 'echo 0 > /proc/sys/user/max_user_namespaces && exec "$@"' sh \
            "$BIN/kf-exec-worker" --coordinator "$KF_WORKER_ENDPOINT" --name iso-refused \
            >"$T/refused.log" 2>&1
    }
    refused
    rc=$?
    sed -n 1,3p "$T/refused.log" >&2
    check "without user namespaces the worker does not start (exit 2)" [ "$rc" = 2 ]
    check "and names the sysctls that allow them" \
        sh -c "grep -q user.max_user_namespaces '$T/refused.log' && grep -q kernel.apparmor_restrict_unprivileged_userns '$T/refused.log' && grep -q -- --no-isolation '$T/refused.log'"
else
    say "unshare -U is not available here: the refusal is tried by test_sandbox only"
fi
finish
