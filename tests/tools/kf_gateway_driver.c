/*  kf_gateway_driver - plays the coordinator for one kf-llm-gateway, over
 *  the real protocol and codec, for the gateway's tests and benchmark.
 *
 *  It binds a ROUTER, welcomes the first worker that says HELLO, and
 *  leases it generate jobs: each line of --jobs FILE is one payload (sent
 *  once), or --payload JSON is sent --count times. It keeps at most
 *  --inflight jobs (and never more than the worker's credits) out,
 *  heartbeats the worker as a coordinator does, and records when each of
 *  the worker's HEARTBEATs arrived. Each RESULT becomes one JSON line in
 *  --out: {job_id, ok, error, result, t_ms}. At the end it prints one JSON
 *  line: jobs, results, ok, failed, elapsed_s, rate, heartbeats,
 *  max_heartbeat_gap_ms (the longest silence of the worker while jobs
 *  were out, which must stay near heartbeat_ms for the loop to be sound).
 */
#include "kf_proto.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char **
s_read_lines (const char *path, int *n)
{
    FILE *f = fopen (path, "r");
    if (!f)
        return NULL;
    char **lines = NULL;
    *n = 0;
    char *line = NULL;
    size_t cap = 0;
    ssize_t len;
    while ((len = getline (&line, &cap, f)) > 0) {
        if (len <= 1)
            continue;
        char **grown = realloc (lines, sizeof *grown * (size_t) (*n + 1));
        if (!grown)
            break;
        lines = grown;
        lines[(*n)++] = strdup (line);
    }
    free (line);
    fclose (f);
    return lines;
}

int
main (int argc, char **argv)
{
    const char *endpoint = NULL, *jobs_path = NULL, *payload_text = NULL, *out_path = NULL;
    int count = 1, inflight = 1000000, heartbeat_ms = 1000;
    double timeout_s = 120;
    static struct option opts[] = {
        { "endpoint", 1, 0, 'e' }, { "jobs", 1, 0, 'j' }, { "payload", 1, 0, 'p' },
        { "count", 1, 0, 'n' }, { "inflight", 1, 0, 'i' }, { "heartbeat-ms", 1, 0, 'h' },
        { "out", 1, 0, 'o' }, { "timeout-s", 1, 0, 't' }, { "help", 0, 0, 'H' }, { 0, 0, 0, 0 }
    };
    int o;
    while ((o = getopt_long (argc, argv, "", opts, NULL)) != -1) {
        switch (o) {
        case 'e': endpoint = optarg; break;
        case 'j': jobs_path = optarg; break;
        case 'p': payload_text = optarg; break;
        case 'n': count = atoi (optarg); break;
        case 'i': inflight = atoi (optarg); break;
        case 'h': heartbeat_ms = atoi (optarg); break;
        case 'o': out_path = optarg; break;
        case 't': timeout_s = atof (optarg); break;
        default:
            printf ("usage: kf_gateway_driver --endpoint EP (--jobs FILE | --payload JSON "
                    "[--count N])\n  [--inflight N] [--heartbeat-ms H] [--out FILE] "
                    "[--timeout-s S]\nPlays the coordinator for one gateway (see file "
                    "header).\n");
            return o == 'H' ? 0 : 2;
        }
    }
    int n_lines = 0;
    char **lines = NULL;
    if (jobs_path) {
        lines = s_read_lines (jobs_path, &n_lines);
        count = n_lines;
    }
    else if (payload_text)
        n_lines = 1;
    if (!endpoint || (!lines && !payload_text) || count < 1) {
        fprintf (stderr, "kf_gateway_driver: need --endpoint and --jobs or --payload\n");
        return 2;
    }
    json_t **payloads = calloc ((size_t) n_lines, sizeof *payloads);
    for (int i = 0; i < n_lines; i++) {
        json_error_t jerr;
        payloads[i] = json_loads (lines ? lines[i] : payload_text, 0, &jerr);
        if (!json_is_object (payloads[i])) {
            fprintf (stderr, "kf_gateway_driver: payload %d: %s\n", i + 1, jerr.text);
            return 2;
        }
    }
    FILE *out = out_path ? fopen (out_path, "w") : NULL;
    zsock_t *router = zsock_new (ZMQ_ROUTER);
    zsock_set_maxmsgsize (router, (int64_t) KF_PROTO_DEFAULT_MAX_MESSAGE * 2);
    if (zsock_bind (router, "%s", endpoint) < 0) {
        fprintf (stderr, "kf_gateway_driver: cannot bind %s\n", endpoint);
        return 1;
    }
    zframe_t *worker = NULL;
    int credits = 0, sent = 0, results = 0, ok = 0, failed = 0, out_now = 0, heartbeats = 0;
    int64_t start = zclock_mono (), first_job = 0, last_hb = 0, max_gap = 0;
    int64_t next_hb = start + heartbeat_ms, deadline = start + (int64_t) (timeout_s * 1000);
    while (results < count && zclock_mono () < deadline && !zsys_interrupted) {
        int64_t now = zclock_mono ();
        while (worker && sent < count && out_now < credits && out_now < inflight) {
            json_t *payload = payloads[lines ? sent : 0];
            int64_t id = sent + 1;
            kf_msg_t *job = kf_msg_new ("JOB", json_pack ("{s:I, s:I, s:s, s:O}", "job_id",
                                                          (json_int_t) id, "lease",
                                                          (json_int_t) id * 10 + 1, "kind",
                                                          "generate", "payload", payload));
            kf_msg_send (&job, router, worker, NULL);
            if (!first_job)
                first_job = zclock_mono ();
            sent++;
            out_now++;
        }
        if (worker && now >= next_hb) {
            kf_msg_t *hb = kf_msg_new ("HEARTBEAT", NULL);
            kf_msg_send (&hb, router, worker, NULL);
            next_hb = now + heartbeat_ms;
        }
        zmq_pollitem_t item = { zsock_resolve (router), 0, ZMQ_POLLIN, 0 };
        long wait = (long) (next_hb - now);
        if (zmq_poll (&item, 1, wait < 0 ? 0 : wait) <= 0)
            continue;
        zframe_t *route = NULL;
        kf_msg_t *msg = NULL;
        if (kf_msg_recv (router, KF_EP_WORKER_IN, KF_PROTO_DEFAULT_MAX_MESSAGE, true, &route,
                         &msg, NULL) != KF_PROTO_OK) {
            zframe_destroy (&route);
            continue;
        }
        now = zclock_mono ();
        if (!strcmp (msg->type, "HELLO")) {
            //  A worker that reconnected has a new routing id; jobs sent
            //  to the old one are lost, as with a real coordinator until
            //  their leases lapse, so a test starts the driver first.
            zframe_destroy (&worker);
            worker = zframe_dup (route);
            credits = (int) kf_msg_int (msg, "credits", 1);
            kf_msg_t *w = kf_msg_new ("WELCOME", json_pack ("{s:s, s:i, s:i}", "worker_id",
                                                            kf_msg_str (msg, "worker_id"),
                                                            "heartbeat_ms", heartbeat_ms,
                                                            "liveness", 3));
            kf_msg_send (&w, router, worker, NULL);
            last_hb = now;
        }
        else if (!strcmp (msg->type, "HEARTBEAT")) {
            heartbeats++;
            if (first_job && now - last_hb > max_gap)
                max_gap = now - last_hb;
            last_hb = now;
        }
        else if (!strcmp (msg->type, "RESULT")) {
            results++;
            out_now--;
            bool good = json_is_true (json_object_get (msg->body, "ok"));
            good ? ok++ : failed++;
            if (out) {
                json_t *line = json_pack ("{s:O, s:b, s:O, s:O, s:I}", "job_id",
                                          json_object_get (msg->body, "job_id"), "ok", good,
                                          "error",
                                          json_object_get (msg->body, "error")
                                              ? json_object_get (msg->body, "error")
                                              : json_null (),
                                          "result", json_object_get (msg->body, "result"),
                                          "t_ms", (json_int_t) (now - start));
                char *text = json_dumps (line, JSON_COMPACT);
                fprintf (out, "%s\n", text);
                free (text);
                json_decref (line);
            }
        }
        kf_msg_destroy (&msg);
        zframe_destroy (&route);
    }
    int64_t end = zclock_mono ();
    //  The silence after the last heartbeat counts too.
    if (first_job && end - last_hb > max_gap)
        max_gap = end - last_hb;
    double elapsed = (double) (end - (first_job ? first_job : start)) / 1000.0;
    printf ("{\"jobs\": %d, \"results\": %d, \"ok\": %d, \"failed\": %d, \"elapsed_s\": %.3f, "
            "\"rate\": %.1f, \"heartbeats\": %d, \"max_heartbeat_gap_ms\": %lld}\n",
            count, results, ok, failed, elapsed, elapsed > 0 ? results / elapsed : 0.0,
            heartbeats, (long long) max_gap);
    if (out)
        fclose (out);
    zframe_destroy (&worker);
    zsock_destroy (&router);
    for (int i = 0; i < n_lines; i++) {
        json_decref (payloads[i]);
        if (lines)
            free (lines[i]);
    }
    free (payloads);
    free (lines);
    return results == count ? 0 : 1;
}
