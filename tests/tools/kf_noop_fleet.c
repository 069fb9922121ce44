/*  kf_noop_fleet - a synthetic fleet of workers that do nothing, for tests
 *  and the dispatch benchmark: many DEALER sockets in one process, each
 *  saying HELLO with the given role, credits and capabilities, heartbeating,
 *  and answering every JOB with an empty RESULT after --delay-ms.
 *
 *  It speaks the real protocol through the real codec; only the work is
 *  missing. It reports what it saw (jobs, most jobs held at once by one
 *  worker, dispatch latency when payloads carry "t_us") as one JSON line.
 */
#include "kf_curve.h"
#include "kf_proto.h"
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct {
    zsock_t *sock;
    int held;
    int max_held;
    long jobs;
    bool silent;
} s_worker_t;

typedef struct {
    int64_t due;
    int worker;
    int64_t job_id, lease;
    char token[40];          /* the JOB's lease_token, echoed */
} s_pending_t;

static int64_t
s_now_us (void)
{
    struct timespec ts;
    clock_gettime (CLOCK_REALTIME, &ts);
    return (int64_t) ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static int
s_cmp (const void *a, const void *b)
{
    double x = *(const double *) a, y = *(const double *) b;
    return x < y ? -1 : x > y;
}

static void
s_usage (void)
{
    printf ("usage: kf_noop_fleet --endpoint EP [--workers N] [--role R] [--credits C]\n"
            "         [--backends a,b] [--arch A] [--delay-ms D] [--heartbeat-ms H]\n"
            "         [--silent-after N] [--duration-s S] [--until-jobs N] [--log FILE]\n"
            "         [--curve-cert FILE --curve-server-key FILE|KEY]\n"
            "A fleet of no-op workers for tests and benchmarks (see file header).\n");
}

int
main (int argc, char **argv)
{
    const char *endpoint = NULL, *role = "bench", *backends = "host", *arch = "x86_64";
    const char *log_path = NULL, *id_prefix = "noop";
    const char *curve_cert = NULL, *curve_server_key = NULL;
    int workers = 1, credits = 1, delay_ms = 0, heartbeat_ms = 1000, silent_after = -1;
    double duration_s = 0;
    long until_jobs = 0;
    static struct option opts[] = {
        { "endpoint", 1, 0, 'e' }, { "workers", 1, 0, 'n' }, { "role", 1, 0, 'r' },
        { "credits", 1, 0, 'c' }, { "backends", 1, 0, 'b' }, { "arch", 1, 0, 'a' },
        { "delay-ms", 1, 0, 'd' }, { "heartbeat-ms", 1, 0, 'h' },
        { "silent-after", 1, 0, 's' }, { "duration-s", 1, 0, 't' },
        { "until-jobs", 1, 0, 'u' }, { "log", 1, 0, 'l' }, { "id-prefix", 1, 0, 'i' },
        { "curve-cert", 1, 0, 'C' }, { "curve-server-key", 1, 0, 'S' },
        { "help", 0, 0, 'H' }, { 0, 0, 0, 0 }
    };
    int o;
    while ((o = getopt_long (argc, argv, "", opts, NULL)) != -1) {
        switch (o) {
        case 'e': endpoint = optarg; break;
        case 'n': workers = atoi (optarg); break;
        case 'r': role = optarg; break;
        case 'c': credits = atoi (optarg); break;
        case 'b': backends = optarg; break;
        case 'a': arch = optarg; break;
        case 'd': delay_ms = atoi (optarg); break;
        case 'h': heartbeat_ms = atoi (optarg); break;
        case 's': silent_after = atoi (optarg); break;
        case 't': duration_s = atof (optarg); break;
        case 'u': until_jobs = atol (optarg); break;
        case 'l': log_path = optarg; break;
        case 'i': id_prefix = optarg; break;
        case 'C': curve_cert = optarg; break;
        case 'S': curve_server_key = optarg; break;
        case 'H': s_usage (); return 0;
        default: s_usage (); return 2;
        }
    }
    if (!endpoint || workers < 1 || credits < 1) {
        s_usage ();
        return 2;
    }
    zsys_set_max_sockets (workers + 64);
    zsys_handler_set (NULL);
    FILE *log = log_path ? fopen (log_path, "w") : NULL;
    json_t *caps = json_pack ("{s:[], s:s}", "backends", "arch", arch);
    char *list = strdup (backends), *save = NULL;
    for (char *b = strtok_r (list, ",", &save); b; b = strtok_r (NULL, ",", &save))
        json_array_append_new (json_object_get (caps, "backends"), json_string (b));
    free (list);

    s_worker_t *w = calloc ((size_t) workers, sizeof *w);
    zmq_pollitem_t *items = calloc ((size_t) workers, sizeof *items);
    for (int i = 0; i < workers; i++) {
        w[i].sock = zsock_new (ZMQ_DEALER);
        zsock_set_sndhwm (w[i].sock, 100000);
        char *err = NULL;
        if (kf_curve_client_apply (w[i].sock, endpoint, curve_cert, curve_server_key, true,
                                   &err)) {
            fprintf (stderr, "kf_noop_fleet: %s\n", err);
            return 2;
        }
        zsock_connect (w[i].sock, "%s", endpoint);
        char id[128];
        snprintf (id, sizeof id, "%s-%d-%d", id_prefix, (int) getpid (), i);
        kf_msg_t *m = kf_msg_new ("HELLO", json_pack ("{s:s, s:s, s:i, s:O}", "worker_id", id,
                                                      "role", role, "credits", credits,
                                                      "capabilities", caps));
        kf_msg_send (&m, w[i].sock, NULL, NULL);
        items[i] = (zmq_pollitem_t) { zsock_resolve (w[i].sock), 0, ZMQ_POLLIN, 0 };
    }
    size_t pcap = (size_t) workers * (size_t) credits + 16, npending = 0;
    s_pending_t *pending = calloc (pcap, sizeof *pending);
    size_t lcap = 1 << 16, nlat = 0;
    double *lat = malloc (lcap * sizeof *lat);
    long total = 0;
    int64_t start = zclock_mono (), next_hb = start + heartbeat_ms;
    int64_t first_job = 0, last_result = 0;
    while (true) {
        int64_t now = zclock_mono ();
        if (duration_s > 0 && now - start > duration_s * 1000)
            break;
        if (until_jobs && total >= until_jobs && npending == 0)
            break;
        if (now >= next_hb) {
            for (int i = 0; i < workers; i++)
                if (!w[i].silent) {
                    kf_msg_t *m = kf_msg_new ("HEARTBEAT", json_pack ("{s:i, s:[]}", "credits",
                                                                      credits, "jobs"));
                    kf_msg_send (&m, w[i].sock, NULL, NULL);
                }
            next_hb = now + heartbeat_ms;
        }
        /* Answer what is due. */
        for (size_t k = 0; k < npending;) {
            if (pending[k].due > now) {
                k++;
                continue;
            }
            s_worker_t *x = &w[pending[k].worker];
            if (!x->silent) {
                kf_msg_t *m = kf_msg_new ("RESULT", json_pack ("{s:I, s:I, s:s, s:b, s:{}}",
                                                               "job_id",
                                                               (json_int_t) pending[k].job_id,
                                                               "lease",
                                                               (json_int_t) pending[k].lease,
                                                               "lease_token", pending[k].token,
                                                               "ok", 1, "result"));
                kf_msg_send (&m, x->sock, NULL, NULL);
                last_result = zclock_mono ();
            }
            x->held--;
            pending[k] = pending[--npending];
        }
        long wait = next_hb - now;
        for (size_t k = 0; k < npending; k++)
            if (pending[k].due - now < wait)
                wait = (long) (pending[k].due - now);
        if (wait < 0)
            wait = 0;
        if (wait > 100)
            wait = 100;
        if (zmq_poll (items, workers, wait) < 0)
            break;
        for (int i = 0; i < workers; i++) {
            if (!(items[i].revents & ZMQ_POLLIN))
                continue;
            kf_msg_t *m = NULL;
            while (kf_msg_recv (w[i].sock, KF_EP_WORKER_OUT, KF_PROTO_DEFAULT_MAX_MESSAGE,
                                false, NULL, &m, NULL) == KF_PROTO_OK) {
                if (!strcmp (m->type, "JOB")) {
                    int64_t t = json_integer_value (
                        json_object_get (json_object_get (m->body, "payload"), "t_us"));
                    if (t && nlat < lcap)
                        lat[nlat++] = (double) (s_now_us () - t) / 1000.0;
                    if (!first_job)
                        first_job = zclock_mono ();
                    total++;
                    w[i].jobs++;
                    w[i].held++;
                    if (w[i].held > w[i].max_held)
                        w[i].max_held = w[i].held;
                    if (log)
                        fprintf (log, "%d %lld\n", i, (long long) kf_msg_int (m, "job_id", 0));
                    if (silent_after >= 0 && w[i].jobs > silent_after)
                        w[i].silent = true;
                    if (npending < pcap) {
                        pending[npending] = (s_pending_t) {
                            zclock_mono () + delay_ms, i, kf_msg_int (m, "job_id", 0),
                            kf_msg_int (m, "lease", 0), "" };
                        const char *token = kf_msg_str (m, "lease_token");
                        snprintf (pending[npending].token, sizeof pending[npending].token,
                                  "%s", token ? token : "");
                        npending++;
                    }
                }
                kf_msg_destroy (&m);
                if (!(zsock_events (w[i].sock) & ZMQ_POLLIN))
                    break;
            }
        }
    }
    int max_held = 0;
    for (int i = 0; i < workers; i++)
        if (w[i].max_held > max_held)
            max_held = w[i].max_held;
    qsort (lat, nlat, sizeof *lat, s_cmp);
    double secs = last_result > first_job ? (last_result - first_job) / 1000.0 : 0;
    printf ("{\"jobs\": %ld, \"seconds\": %.3f, \"jobs_per_s\": %.1f, \"max_held\": %d,"
            " \"latency_ms_p50\": %.3f, \"latency_ms_p99\": %.3f, \"latency_samples\": %zu}\n",
            total, secs, secs > 0 ? total / secs : 0.0, max_held,
            nlat ? lat[nlat / 2] : 0.0, nlat ? lat[(size_t) (nlat * 0.99)] : 0.0, nlat);
    for (int i = 0; i < workers; i++) {
        if (!w[i].silent) {
            kf_msg_t *m = kf_msg_new ("BYE", NULL);
            kf_msg_send (&m, w[i].sock, NULL, NULL);
        }
        zsock_set_linger (w[i].sock, w[i].silent ? 0 : 200);
        zsock_destroy (&w[i].sock);
    }
    if (log)
        fclose (log);
    free (w);
    free (items);
    free (pending);
    free (lat);
    json_decref (caps);
    return 0;
}
