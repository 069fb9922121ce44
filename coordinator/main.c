/*  kf-coordinator: the only stateful daemon. Parses its configuration,
 *  starts the coordinator and serves until SIGINT or SIGTERM. */
#include "kf_config.h"
#include "kf_coord.h"
#include "kf_floors.h"
#include "kf_log.h"
#include "kf_proto.h"
#include "kf_search.h"
#include "kf_worker.h"
#include <stdio.h>
#include <stdlib.h>

static const kf_cfg_entry_t s_table[] = {
    { "database_url", KF_CFG_STR, "postgresql:///kernelfoundry", 0, -1,
      "libpq connection URL or key=value string (never logged)" },
    { "worker_endpoint", KF_CFG_STR, "ipc:///tmp/kf-workers.sock", 0, -1,
      "ROUTER endpoint for workers" },
    { "client_endpoint", KF_CFG_STR, "ipc:///tmp/kf-clients.sock", 0, -1,
      "ROUTER endpoint for kfctl" },
    { "status_endpoint", KF_CFG_STR, "ipc:///tmp/kf-status.sock", 0, -1,
      "read-only status endpoint (answers STATUS only)" },
    { "event_endpoint", KF_CFG_STR, "ipc:///tmp/kf-events.sock", 0, -1,
      "PUB endpoint for run events" },
    { "db_connect_timeout_s", KF_CFG_INT, "5", 1, 600,
      "longest wait for one connection attempt to the database" },
    { "db_statement_timeout_ms", KF_CFG_INT, "60000", 0, 86400000,
      "longest one statement may run (the server's statement_timeout; 0: none)" },
    { "db_keepalive_s", KF_CFG_INT, "30", 0, 3600,
      "a database that stops answering over TCP is given up after about this long"
      " (keepalives and tcp_user_timeout; 0: the system's)" },
    { "heartbeat_ms", KF_CFG_INT, "1000", 50, 60000, "heartbeat interval to and from workers" },
    { "liveness", KF_CFG_INT, "3", 1, 100, "missed heartbeats before a worker is dead" },
    { "max_attempts", KF_CFG_INT, "3", 1, 100, "leases of one job before it fails for good" },
    { "worker_wait_s", KF_CFG_INT, "900", 0, 604800,
      "a running run whose queued jobs no connected worker can take (a target no exec"
      " worker runs, no gateway connected) fails after this long (0: waits for ever)" },
    { "max_message_bytes", KF_CFG_INT, "67108864", 4096, 1073741824,
      "largest message accepted; larger ones get an 'oversized' ERROR" },
    { "max_held_result_bytes", KF_CFG_INT, "268435456", 65536, 17179869184,
      "bytes of RESULTs held while the database is away; past it the oldest are"
      " dropped (their leases are the backstop)" },
    { "batch", KF_CFG_INT, "256", 1, 100000, "worker messages handled per transaction" },
    { "lease_generate_ms", KF_CFG_INT, "600000", 1000, 86400000, "lease backstop of generate jobs" },
    { "lease_compile_ms", KF_CFG_INT, "300000", 1000, 86400000, "lease backstop of compile jobs" },
    { "lease_execute_ms", KF_CFG_INT, "600000", 1000, 86400000, "lease backstop of evaluate jobs" },
    { "eval_min_time_s", KF_CFG_DOUBLE, KF_FLOOR_TEXT (KF_FULL_MIN_TIME_S), 0.001, 600,
      "timed seconds per kernel, at least" },
    { "eval_min_samples", KF_CFG_INT, KF_FLOOR_TEXT (KF_FULL_MIN_SAMPLES), 1, 100000,
      "timing samples per kernel, at least" },
    { "eval_warmup_s", KF_CFG_DOUBLE, KF_FLOOR_TEXT (KF_FULL_WARMUP_S), 0, 600,
      "warm-up seconds per kernel" },
    { "eval_warmup_calls", KF_CFG_INT, KF_FLOOR_TEXT (KF_FULL_WARMUP_CALLS), 0, 100000,
      "warm-up calls per kernel, at least" },
    { "eval_retime_wait_s", KF_CFG_DOUBLE, "5", 0, 60,
      "a full host timing beside other work is taken again once, after waiting up to this"
      " long for a quiet host; the timing less disturbed stands (0: never)" },
    /* When a correct result is re-verified before it counts (kf_verify.c;
     * the defaults are common/kf_plausible.h's KF_PLAUSIBLE_*). */
    { "plausible_margin", KF_CFG_DOUBLE, "1.1", 1, 100,
      "re-verify a correct result that moves its bytes or computes faster than this"
      " many times the worker's measured copy bandwidth or FMA peak" },
    { "plausible_outlier_factor", KF_CFG_DOUBLE, "8", 0, 1e6,
      "re-verify a correct result whose speedup is over this many times the run's"
      " best counted speedup (taken as at least 1x; 0: every correct result)" },
    { "plausible_min_counted", KF_CFG_INT, "3", 0, 100000,
      "counted correct candidates a run needs before plausible_outlier_factor applies" },
    { "verify_tolerance", KF_CFG_DOUBLE, "0.5", 0, 1,
      "a re-verification holds when its speedup is at least (1 - this) times the first" },
    { "curve_cert", KF_CFG_STR, NULL, 0, -1,
      "our secret certificate (kfctl keygen): CURVE on every tcp:// endpoint" },
    { "curve_allow_dir", KF_CFG_STR, NULL, 0, -1,
      "folder of the public certificates admitted; re-read when it changes" },
    { "allow_plain_tcp", KF_CFG_BOOL, "false", 0, -1,
      "serve tcp:// beyond loopback without CURVE (warned at start-up)" },
    { "metrics_address", KF_CFG_STR, NULL, 0, -1,
      "HOST:PORT for Prometheus metrics over HTTP, e.g. 127.0.0.1:9464 (unset: off)" },
    { "metrics_allow", KF_CFG_STR, "127.0.0.0/8, ::1", 0, -1,
      "addresses or CIDR blocks served /metrics, comma-separated (others are closed unread)" },
    { "search_defaults", KF_CFG_STR, NULL, 0, -1,
      "JSON file of search defaults replacing the built-in ones (docs/search.md)" },
    { "verbose", KF_CFG_BOOL, "false", 0, -1, "log debug records" },
    KF_CFG_END
};

int
main (int argc, char **argv)
{
    int code;
    kf_config_t *cfg = kf_config_daemon ("kf-coordinator", s_table, argc, argv, &code);
    if (!cfg)
        return code;
    char *why = NULL;
    json_t *search_defaults = kf_search_defaults_load (kf_config_str (cfg, "search_defaults"),
                                                       &why);
    if (!search_defaults) {
        kf_error ("search defaults: %s", why ? why : "cannot be read");
        free (why);
        kf_config_destroy (&cfg);
        return 2;
    }
    static volatile sig_atomic_t stop;
    kf_worker_catch_signals (&stop);
    json_t *timing = json_pack ("{s:f, s:I, s:f, s:I, s:f}",
                                "min_time_s", kf_config_double (cfg, "eval_min_time_s"),
                                "min_samples", (json_int_t) kf_config_int (cfg, "eval_min_samples"),
                                "warmup_s", kf_config_double (cfg, "eval_warmup_s"),
                                "warmup_calls", (json_int_t) kf_config_int (cfg, "eval_warmup_calls"),
                                "retime_wait_s", kf_config_double (cfg, "eval_retime_wait_s"));
    kf_coord_config_t c = {
        .database_url = kf_config_str (cfg, "database_url"),
        .worker_endpoint = kf_config_str (cfg, "worker_endpoint"),
        .client_endpoint = kf_config_str (cfg, "client_endpoint"),
        .status_endpoint = kf_config_str (cfg, "status_endpoint"),
        .event_endpoint = kf_config_str (cfg, "event_endpoint"),
        .heartbeat_ms = (int) kf_config_int (cfg, "heartbeat_ms"),
        .liveness = (int) kf_config_int (cfg, "liveness"),
        .max_attempts = (int) kf_config_int (cfg, "max_attempts"),
        .worker_wait_s = (int) kf_config_int (cfg, "worker_wait_s"),
        .max_message = (size_t) kf_config_int (cfg, "max_message_bytes"),
        .max_held_bytes = (size_t) kf_config_int (cfg, "max_held_result_bytes"),
        .batch = (int) kf_config_int (cfg, "batch"),
        .db_connect_s = (int) kf_config_int (cfg, "db_connect_timeout_s"),
        .db_statement_ms = (int) kf_config_int (cfg, "db_statement_timeout_ms"),
        .db_keepalive_s = (int) kf_config_int (cfg, "db_keepalive_s"),
        .lease_ms = { (int) kf_config_int (cfg, "lease_generate_ms"),
                      (int) kf_config_int (cfg, "lease_compile_ms"),
                      (int) kf_config_int (cfg, "lease_execute_ms") },
        .timing = timing,
        .search_defaults = search_defaults,
        .curve_cert = kf_config_str (cfg, "curve_cert"),
        .curve_allow_dir = kf_config_str (cfg, "curve_allow_dir"),
        .allow_plain_tcp = kf_config_bool (cfg, "allow_plain_tcp"),
        .metrics_address = kf_config_str (cfg, "metrics_address"),
        .metrics_allow = kf_config_str (cfg, "metrics_allow"),
        .plausible = { .margin = kf_config_double (cfg, "plausible_margin"),
                       .outlier_factor = kf_config_double (cfg, "plausible_outlier_factor"),
                       .min_counted = (int) kf_config_int (cfg, "plausible_min_counted"),
                       .tolerance = kf_config_double (cfg, "verify_tolerance") },
    };
    kf_coord_t *coord = kf_coord_new (&c);
    int rc = 1;
    if (coord) {
        rc = kf_coord_run (coord, &stop);
        kf_coord_destroy (&coord);
    }
    json_decref (timing);
    json_decref (search_defaults);
    kf_config_destroy (&cfg);
    return rc;
}
