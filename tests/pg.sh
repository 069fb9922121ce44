# tests/pg.sh - a throwaway PostgreSQL cluster for the suite and the
# benchmarks: a unix socket only, trust for the caller, and, when the
# caller is root, the server run as the unprivileged postgres user
# (PostgreSQL refuses to run as root). Sourced, not run.

kf_pg_bindir() {
    if [ -x /usr/lib/postgresql/15/bin/initdb ]; then
        echo /usr/lib/postgresql/15/bin
    elif command -v initdb >/dev/null 2>&1; then
        dirname "$(command -v initdb)"
    else
        pg_config --bindir
    fi
}

kf_as_pg() {
    if [ "$(id -u)" -eq 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

# kf_pg_start DIR PORT: initdb DIR, start the server with its socket in DIR.
kf_pg_start() {
    local dir=$1 port=$2 bin
    bin=$(kf_pg_bindir) || { echo "PostgreSQL not installed (make deps)"; return 1; }
    mkdir -p "$dir" && chmod 700 "$dir"
    [ "$(id -u)" -eq 0 ] && chown postgres "$dir"
    kf_as_pg "$bin/initdb" -D "$dir" -U "$(id -un)" --auth-local=trust \
        --auth-host=reject -E UTF8 >"$dir.initdb.log" 2>&1 \
        || { cat "$dir.initdb.log"; return 1; }
    kf_as_pg "$bin/pg_ctl" start -D "$dir" -w -t 60 -l "$dir/server.log" \
        -o "-p $port -k $dir -c listen_addresses='' -c max_connections=200 -c fsync=on" \
        >/dev/null || { cat "$dir/server.log"; return 1; }
}

kf_pg_stop() {
    local dir=$1
    [ -f "$dir/PG_VERSION" ] || return 0
    kf_as_pg "$(kf_pg_bindir)/pg_ctl" stop -D "$dir" -m immediate >/dev/null 2>&1
}
