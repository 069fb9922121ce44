/*  kfctl_cmd.c - the helpers every kfctl command uses (kfctl_cmd.h): one
 *  request with each failure turned into its message and exit code, the
 *  printing of a reply as JSON, and reading a number from the command line.
 */
#include "kfctl_cmd.h"
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

void
kf_ctl_print_json (json_t *value)
{
    char *text = json_dumps (value, JSON_COMPACT | JSON_ENCODE_ANY
                                       | JSON_REAL_PRECISION (15));
    if (text) {
        printf ("%s\n", text);
        free (text);
    }
    fflush (stdout);
}

void
kf_ctl_print_html_written (const kf_ctl_args_t *args, const char *key, long long id)
{
    if (args->json) {
        json_t *out = json_pack ("{s:I, s:s}", key, (json_int_t) id, "html", args->output);
        kf_ctl_print_json (out);
        json_decref (out);
    }
    else
        printf ("%s\n", args->output);
}

int
kf_ctl_parse_int (const char *text, long long min, long long max, long long *out)
{
    if (!text || !*text)
        return -1;
    errno = 0;
    char *end = NULL;
    long long v = strtoll (text, &end, 10);
    if (errno || *end || v < min || v > max)
        return -1;
    *out = v;
    return 0;
}

int
kf_ctl_no_endpoint (const char *which)
{
    char *dir = kf_ctl_state_dir ();
    char text[1024];
    snprintf (text, sizeof text,
              "no %s endpoint known: pass --%s, set KF_%s_ENDPOINT, "
              "or start a single-node system with 'kf-local up' "
              "(no entry in %s/endpoints)",
              which, !strcmp (which, "client") ? "endpoint" : "status-endpoint",
              !strcmp (which, "client") ? "CLIENT" : "STATUS", dir ? dir : "?");
    fprintf (stderr, "kfctl: %s\n", text);
    kf_ctl_error_json ("unreachable", text);
    free (dir);
    return KF_CTL_EXIT_UNREACHABLE;
}

/* Runs one request and turns every failure into its message and exit
 * code. Returns 0 with *REPLY_P set, or the exit code. */
/* An error kfctl itself finds, as --json prints a coordinator's ERROR:
 * {"code", "reason"} on stdout. */
static void
s_print_error_json (const char *code, const char *reason)
{
    json_t *out = json_pack ("{s:s, s:s}", "code", code, "reason", reason);
    kf_ctl_print_json (out);
    json_decref (out);
}

int
kf_ctl_call (const char *endpoint, const kf_ctl_args_t *args, const char *type,
             json_t *body, const char *expect, kf_msg_t **reply_p)
{
    *reply_p = NULL;
    kf_msg_t *req = kf_msg_new (type, body);
    if (!req) {
        fprintf (stderr, "kfctl: out of memory\n");
        return KF_CTL_EXIT_ERROR;
    }
    char *err = NULL;
    kf_msg_t *reply = NULL;
    kf_ctl_rc_t rc = kf_ctl_request (endpoint, &req, expect, args->timeout_ms,
                                     &reply, &err);
    int code = KF_CTL_EXIT_OK;
    switch (rc) {
    case KF_CTL_REPLY:
        *reply_p = reply;
        break;
    case KF_CTL_ERROR_REPLY:
        if (args->json)
            kf_ctl_print_json (reply->body);
        fprintf (stderr, "kfctl: %s: %s\n",
                 kf_msg_str (reply, "code") ? kf_msg_str (reply, "code") : "?",
                 kf_msg_str (reply, "reason") ? kf_msg_str (reply, "reason")
                                              : "");
        kf_msg_destroy (&reply);
        code = KF_CTL_EXIT_ERROR;
        break;
    case KF_CTL_INTERRUPTED:
        code = KF_CTL_EXIT_INTERRUPTED;
        break;
    case KF_CTL_BAD_REPLY:
        if (args->json)
            s_print_error_json ("bad-reply", err ? err : "bad reply");
        fprintf (stderr, "kfctl: %s\n", err ? err : "bad reply");
        code = KF_CTL_EXIT_ERROR;
        break;
    case KF_CTL_NO_REPLY:
    default:
        if (args->json)
            s_print_error_json ("unreachable", err ? err : "no reply");
        fprintf (stderr, "kfctl: %s (is the coordinator running? "
                 "'kf-local status' shows a single-node system)\n",
                 err ? err : "no reply");
        code = KF_CTL_EXIT_UNREACHABLE;
        break;
    }
    free (err);
    return code;
}

/* A request with an empty body whose reply is printed whole (--json) or
 * by PRINT, given the reply's field KEY (NULL: the whole body). */
int
kf_ctl_query (kf_ctl_args_t *args, const char *endpoint, const char *what,
              const char *type, const char *key, void (*print) (FILE *, json_t *))
{
    if (!endpoint)
        return kf_ctl_no_endpoint (what);
    kf_msg_t *reply = NULL;
    int code = kf_ctl_call (endpoint, args, type, NULL, type, &reply);
    if (code)
        return code;
    if (args->json)
        kf_ctl_print_json (reply->body);
    else
        print (stdout, key ? json_object_get (reply->body, key) : reply->body);
    kf_msg_destroy (&reply);
    return KF_CTL_EXIT_OK;
}

/* Requests TYPE {run_id} for the command's RUN argument. */
int
kf_ctl_run_call (kf_ctl_args_t *args, kf_ctl_endpoints_t *ep, const char *type,
                 const char *expect, kf_ctl_run_reply_fn *done)
{
    long long run_id;
    if (kf_ctl_parse_int (args->args[0], 1, LLONG_MAX, &run_id)) {
        kf_ctl_usage ("%s: RUN must be a run id, not '%s'", args->command, args->args[0]);
        return KF_CTL_EXIT_USAGE;
    }
    if (!ep->client)
        return kf_ctl_no_endpoint ("client");
    kf_msg_t *reply = NULL;
    int code = kf_ctl_call (ep->client, args, type,
                            json_pack ("{s:I}", "run_id", (json_int_t) run_id), expect, &reply);
    if (code == 0)
        code = done (args, run_id, reply);
    kf_msg_destroy (&reply);
    return code;
}
