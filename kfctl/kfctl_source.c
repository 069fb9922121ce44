/*  kfctl_source.c - kfctl source RUN CANDIDATE: any candidate's source,
 *  correct or not, with what a user needs to see why it fared as it did:
 *  its verdict in full, the compiler's log, and the times behind its
 *  speedup. The source alone goes to stdout (or -o FILE, the log beside
 *  it as FILE.log) so it can be piped or built; the rest goes to stderr.
 */
#include "kfctl_cmd.h"
#include "kfctl_fields.h"
#include "kfctl_print.h"
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

/* TEXT (SIZE bytes) into PATH. Returns 0, or -1 after a message. */
static int
s_write (const char *path, const void *text, size_t size)
{
    FILE *f = fopen (path, "wb");
    bool ok = f && fwrite (text, 1, size, f) == size;
    if (f && fclose (f) != 0)
        ok = false;
    if (!ok)
        fprintf (stderr, "kfctl: cannot write %s: %s\n", path, strerror (errno));
    return ok ? 0 : -1;
}

/* The candidate's standing, its times and its verdict, on stderr. */
static void
s_describe (json_t *c, long long run_id, const char *log)
{
    char speedup[32];
    fprintf (stderr, "candidate %lld of run %lld: %s, generation %lld, %s",
             kf_ctl_int (c, "id", -1), run_id, kf_ctl_str (c, "status"),
             kf_ctl_int (c, "generation", -1), kf_ctl_str (c, "language"));
    if (json_is_string (json_object_get (c, "model")))
        fprintf (stderr, ", by %s", kf_ctl_str (c, "model"));
    double cand = 0, ref = 0;
    if (kf_ctl_real (c, "candidate_ns", &cand) && cand > 0)
        fprintf (stderr, "; %.1f us", cand / 1e3);
    if (kf_ctl_real (c, "reference_ns", &ref) && ref > 0)
        fprintf (stderr, " against the reference's %.1f us", ref / 1e3);
    if (json_is_number (json_object_get (c, "speedup")))
        fprintf (stderr, " (%s)",
                 kf_ctl_speedup_text (json_object_get (c, "speedup"), speedup, sizeof speedup));
    fprintf (stderr, "\n");
    if (json_is_string (json_object_get (c, "verdict_detail")))
        fprintf (stderr, "verdict: %s\n", kf_ctl_str (c, "verdict_detail"));
    if (log && *log) {
        size_t n = strlen (log);
        fprintf (stderr, "compiler log:\n%s%s", log, log[n - 1] == '\n' ? "" : "\n");
    }
}

int
kf_ctl_cmd_source (kf_ctl_args_t *args, kf_ctl_endpoints_t *ep)
{
    long long run_id, cand_id;
    if (kf_ctl_parse_int (args->args[0], 1, LLONG_MAX, &run_id)
        || kf_ctl_parse_int (args->args[1], 1, LLONG_MAX, &cand_id)) {
        kf_ctl_usage ("source: RUN and CANDIDATE must be ids (kfctl show RUN lists them),"
                      " not '%s' '%s'", args->args[0], args->args[1]);
        return KF_CTL_EXIT_USAGE;
    }
    if (!ep->client)
        return kf_ctl_no_endpoint ("client");
    kf_msg_t *reply = NULL;
    int code = kf_ctl_call (ep->client, args, "SOURCE",
                            json_pack ("{s:I, s:I}", "run_id", (json_int_t) run_id,
                                       "candidate_id", (json_int_t) cand_id),
                            "SOURCE", &reply);
    if (code)
        return code;
    zframe_t *frame = kf_msg_frame (reply, 0);
    const char *source = frame ? (const char *) zframe_data (frame) : "";
    size_t size = frame ? zframe_size (frame) : 0;
    json_t *cand = json_object_get (reply->body, "candidate");
    const char *log = json_string_value (json_object_get (reply->body, "compile_log"));
    if (args->json) {
        json_t *out = json_deep_copy (reply->body);
        json_object_set_new (out, "source", json_stringn (source, size));
        if (args->output)
            json_object_set_new (out, "output", json_string (args->output));
        kf_ctl_print_json (out);
        json_decref (out);
    }
    else
        s_describe (cand, run_id, log);
    if (size == 0 && !args->json)
        fprintf (stderr, "kfctl: candidate %lld has no source (it was never generated)\n",
                 cand_id);
    if (args->output) {
        if (s_write (args->output, source, size))
            code = KF_CTL_EXIT_ERROR;
        else if (log && *log) {
            size_t n = strlen (args->output) + 5;
            char *path = malloc (n);
            if (path) {
                snprintf (path, n, "%s.log", args->output);
                if (s_write (path, log, strlen (log)))
                    code = KF_CTL_EXIT_ERROR;
                else if (!args->json)
                    printf ("wrote %s and %s\n", args->output, path);
                free (path);
            }
        }
        else if (!args->json)
            printf ("wrote %s\n", args->output);
    }
    else if (!args->json && size) {
        fwrite (source, 1, size, stdout);
        if (source[size - 1] != '\n')
            printf ("\n");
    }
    kf_msg_destroy (&reply);
    return code;
}
