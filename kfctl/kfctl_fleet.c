/*  kfctl_fleet.c - kfctl's commands about the coordinator and its workers
 *  rather than one run: status, workers, drain and undrain, a person's
 *  audit verdict on a held result, and keygen (certificate pairs for the
 *  coordinator's allow-list; needs no coordinator).
 */
#include "kf_curve.h"
#include "kf_json.h"
#include "kfctl_cmd.h"
#include "kfctl_print.h"
#include <limits.h>
#include <stdlib.h>
#include <string.h>

int
kf_ctl_cmd_status (kf_ctl_args_t *args, kf_ctl_endpoints_t *ep)
{
    /* The status endpoint is read-only and may be the only one reachable
     * (e.g. a monitoring host); the client endpoint answers STATUS too. */
    return kf_ctl_query (args, ep->status ? ep->status : ep->client, "status", "STATUS",
                         NULL, kf_ctl_print_status);
}

int
kf_ctl_cmd_workers (kf_ctl_args_t *args, kf_ctl_endpoints_t *ep)
{
    return kf_ctl_query (args, ep->client, "client", "WORKERS", "workers",
                         kf_ctl_print_workers);
}

/* drain / undrain WORKER: the DRAIN request with resume false or true. */
static int
s_drain_call (kf_ctl_args_t *args, kf_ctl_endpoints_t *ep, bool resume)
{
    if (!ep->client)
        return kf_ctl_no_endpoint ("client");
    kf_msg_t *reply = NULL;
    int code = kf_ctl_call (ep->client, args, "DRAIN",
                            json_pack ("{s:s, s:b}", "worker_id", args->args[0], "resume",
                                       resume),
                            "DRAINING", &reply);
    if (code)
        return code;
    if (args->json)
        kf_ctl_print_json (reply->body);
    else if (resume)
        printf ("worker %s takes jobs again\n", args->args[0]);
    else
        printf ("worker %s draining: takes no new jobs; %zu job(s) still running\n",
                args->args[0], json_array_size (json_object_get (reply->body, "jobs")));
    kf_msg_destroy (&reply);
    return KF_CTL_EXIT_OK;
}

int
kf_ctl_cmd_drain (kf_ctl_args_t *args, kf_ctl_endpoints_t *ep)
{
    return s_drain_call (args, ep, false);
}

int
kf_ctl_cmd_undrain (kf_ctl_args_t *args, kf_ctl_endpoints_t *ep)
{
    return s_drain_call (args, ep, true);
}

/* audit CANDIDATE accept|reject: a person's word on a result held for
 * audit (suspicious, and its automatic re-verification failed). */
int
kf_ctl_cmd_audit (kf_ctl_args_t *args, kf_ctl_endpoints_t *ep)
{
    long long cand;
    const char *verdict = args->args[1];
    if (kf_ctl_parse_int (args->args[0], 1, LLONG_MAX, &cand)) {
        fprintf (stderr, "kfctl: audit: CANDIDATE must be a candidate id, not '%s'\n",
                 args->args[0]);
        return KF_CTL_EXIT_USAGE;
    }
    if (strcmp (verdict, "accept") && strcmp (verdict, "reject")) {
        fprintf (stderr, "kfctl: audit: the verdict must be accept or reject, not '%s'\n",
                 verdict);
        return KF_CTL_EXIT_USAGE;
    }
    if (!ep->client)
        return kf_ctl_no_endpoint ("client");
    kf_msg_t *reply = NULL;
    int code = kf_ctl_call (ep->client, args, "AUDIT",
                            json_pack ("{s:I, s:s}", "candidate_id", (json_int_t) cand,
                                       "verdict", verdict),
                            "AUDITED", &reply);
    if (code)
        return code;
    if (args->json)
        kf_ctl_print_json (reply->body);
    else {
        char best[32], first[32];
        printf ("candidate %lld %s (%s); run %lld now: best %s (candidate %lld),"
                " first correct %s\n",
                cand, kf_jstr (reply->body, "verdict"), kf_jstr (reply->body, "audit_reason"),
                (long long) kf_jint (reply->body, "run_id"),
                kf_ctl_speedup_text (json_object_get (reply->body, "best_speedup"), best,
                                     sizeof best),
                (long long) kf_jint (reply->body, "best_candidate_id"),
                kf_ctl_speedup_text (json_object_get (reply->body, "first_speedup"), first,
                                     sizeof first));
    }
    kf_msg_destroy (&reply);
    return KF_CTL_EXIT_OK;
}

/* keygen DIR NAME: a certificate pair for a coordinator, worker or user;
 * needs no coordinator. */
int
kf_ctl_cmd_keygen (kf_ctl_args_t *args, kf_ctl_endpoints_t *ep)
{
    (void) ep;
    char key[41];
    char *err = NULL;
    if (kf_curve_keygen (args->args[0], args->args[1], key, &err)) {
        fprintf (stderr, "kfctl: keygen: %s\n", err ? err : "failed");
        free (err);
        return KF_CTL_EXIT_ERROR;
    }
    if (args->json) {
        json_t *out = json_pack ("{s:s, s:s, s:s}", "public_key", key, "public",
                                 args->args[1], "dir", args->args[0]);
        kf_ctl_print_json (out);
        json_decref (out);
    }
    else
        printf ("%s/%s          public certificate (copy to the coordinator's"
                " allow-list folder)\n%s/%s_secret   secret certificate (stays on this"
                " host, mode 0600)\npublic key %s\n",
                args->args[0], args->args[1], args->args[0], args->args[1], key);
    return KF_CTL_EXIT_OK;
}
