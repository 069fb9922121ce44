/*  kfctl_runs.c - kfctl's commands about one run or all of them: watch,
 *  runs, show, report, best, cancel; and following a run until it ends
 *  (events plus a SHOW poll), which submit --wait shares with watch.
 *  The report's files are written by kfctl_report.c and kfctl_html.c.
 */
#include "kfctl_archive.h"
#include "kfctl_cmd.h"
#include "kfctl_export.h"
#include "kfctl_fields.h"
#include "kfctl_html.h"
#include "kfctl_print.h"
#include "kfctl_report.h"
#include "kfctl_suite.h"
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ------------------------------------------------------------------ */
/* Following a run: events plus a SHOW poll                             */

/* Draws PROGRESS on OUT: in place when OUT is a terminal, else one line
 * per change of what it counts (the clock alone ticking is no change). */
static void
s_draw (FILE *out, bool tty, const kf_ctl_progress_t *progress, char *last,
        size_t last_size)
{
    char line[512], key[512];
    kf_ctl_progress_t untimed = *progress;
    untimed.elapsed_s = -1;
    kf_ctl_progress_line (tty ? progress : &untimed, key, sizeof key);
    if (!strcmp (key, last))
        return;
    snprintf (last, last_size, "%s", key);
    kf_ctl_progress_line (progress, line, sizeof line);
    if (tty)
        fprintf (out, "\r%s\033[K", line);
    else
        fprintf (out, "%s\n", line);
    fflush (out);
}

/* Follows RUN_ID until it ends. WATCH: the progress is the output (stdout,
 * or events as JSON lines); else progress goes to stderr when it is a
 * terminal and the caller prints the result. *RUN_P gets the last run
 * object (caller's). Returns 0 when the run ended, else an exit code. */
int
kf_ctl_follow (const kf_ctl_args_t *args, kf_ctl_endpoints_t *ep, long long run_id,
               bool watch, json_t **run_p)
{
    *run_p = NULL;
    FILE *out = watch ? stdout : stderr;
    bool show_progress = watch ? !args->json : isatty (STDERR_FILENO);
    bool tty = isatty (fileno (out));
    kf_ctl_progress_t progress;
    kf_ctl_progress_init (&progress, run_id);
    char last[512] = "";
    char said_waiting[256] = "";   /* the last "waiting" cause said */

    zsock_t *sub = NULL;
    if (ep->event) {
        sub = zsock_new (ZMQ_SUB);
        if (sub) {
            char topic[64];
            snprintf (topic, sizeof topic, "run/%lld/", run_id);
            zsock_set_linger (sub, 0);
            zsock_set_subscribe (sub, topic);
            /* A failed connect only costs us the events: SHOW still
             * tells us when the run ends. */
            char *serr = NULL;
            if (kf_ctl_secure (sub, ep->event, &serr)
                || zsock_connect (sub, "%s", ep->event) != 0)
                zsock_destroy (&sub);
            free (serr);
        }
    }

    int code = -1;
    bool warned = false;
    int64_t next_show = 0;
    json_t *run = NULL;
    while (code < 0) {
        if (kf_ctl_interrupted) {
            code = KF_CTL_EXIT_INTERRUPTED;
            break;
        }
        int64_t wait = next_show - kf_ctl_now_ms ();
        if (wait > 0) {
            int ready = kf_ctl_wait_readable (sub, (int) wait);
            if (ready < 0)
                continue;
            if (ready > 0) {
                kf_msg_t *event = NULL;
                kf_proto_rc_t prc = kf_msg_recv (
                    zsock_resolve (sub), KF_EP_EVENT_OUT,
                    KF_PROTO_DEFAULT_MAX_MESSAGE, false, NULL, &event, NULL);
                if (prc == KF_PROTO_OK && !strcmp (event->type, "EVENT")
                    && kf_msg_int (event, "run_id", -1) == run_id) {
                    if (watch && args->json)
                        kf_ctl_print_json (event->body);
                    kf_ctl_progress_from_event (&progress, event->body);
                    /* Ask at once: the final state is in the run object. */
                    const char *kind = kf_msg_str (event, "event");
                    if (kind && !strcmp (kind, "finished"))
                        next_show = 0;
                }
                kf_msg_destroy (&event);
                if (show_progress)
                    s_draw (out, tty, &progress, last, sizeof last);
                continue;
            }
        }
        /* SHOW every second whatever the events say, so a lost event or
         * a restarted coordinator (new PUB socket) cannot hang us. */
        kf_msg_t *req = kf_msg_new ("SHOW", json_pack ("{s:I}", "run_id",
                                                       (json_int_t) run_id));
        kf_msg_t *reply = NULL;
        char *err = NULL;
        kf_ctl_rc_t rc = req ? kf_ctl_request (ep->client, &req, "RUN",
                                               args->timeout_ms, &reply, &err)
                             : KF_CTL_NO_REPLY;
        next_show = kf_ctl_now_ms () + KF_CTL_POLL_MS;
        if (rc == KF_CTL_INTERRUPTED)
            code = KF_CTL_EXIT_INTERRUPTED;
        else if (rc == KF_CTL_ERROR_REPLY) {
            if (tty && show_progress && last[0])
                fprintf (out, "\n");
            fprintf (stderr, "kfctl: %s: %s\n",
                     kf_msg_str (reply, "code") ? kf_msg_str (reply, "code")
                                                : "?",
                     kf_msg_str (reply, "reason") ? kf_msg_str (reply, "reason")
                                                  : "");
            code = KF_CTL_EXIT_ERROR;
        }
        else if (rc == KF_CTL_REPLY) {
            if (warned)
                fprintf (stderr, "%skfctl: coordinator answering again\n",
                         tty && show_progress && last[0] ? "\n" : "");
            warned = false;
            json_decref (run);
            run = json_incref (json_object_get (reply->body, "run"));
            kf_ctl_progress_from_run (&progress, run);
            /* Jobs no connected worker can take: said once per cause (the
             * seconds waited change, the cause does not). */
            const char *waiting = json_string_value (json_object_get (run, "waiting"));
            if (waiting && (show_progress || !watch)) {
                const char *colon = strchr (waiting, ':');
                size_t n = colon ? (size_t) (colon - waiting) : strlen (waiting);
                if (n >= sizeof said_waiting || strncmp (said_waiting, waiting, n)
                    || said_waiting[n]) {
                    fprintf (stderr, "%skfctl: run %lld waiting: %s\n",
                             tty && last[0] ? "\n" : "", run_id, waiting);
                    snprintf (said_waiting, sizeof said_waiting, "%.*s", (int) n, waiting);
                    last[0] = '\0';
                }
            }
            const char *status = json_string_value (json_object_get (run,
                                                                     "status"));
            if (status && strcmp (status, "running"))
                code = 0;
        }
        else if (!warned) {
            /* Keep trying: the coordinator may be restarting, and every
             * run survives a restart. */
            fprintf (stderr, "%skfctl: %s; still waiting for run %lld "
                     "(Ctrl-C to stop)\n",
                     tty && show_progress && last[0] ? "\n" : "",
                     err ? err : "no reply", run_id);
            warned = true;
            last[0] = '\0';
        }
        kf_msg_destroy (&reply);
        free (err);
        if (show_progress && code != KF_CTL_EXIT_ERROR)
            s_draw (out, tty, &progress, last, sizeof last);
    }
    if (show_progress && tty && last[0])
        fprintf (out, "\n");
    /* Interrupted: the run goes on; say which one, so it can be found. */
    if (code == KF_CTL_EXIT_INTERRUPTED) {
        fprintf (stderr, "kfctl: stopped following run %lld; it keeps running"
                 " (kfctl watch %lld, kfctl cancel %lld)\n", run_id, run_id, run_id);
        if (args->json) {
            json_t *out_json = json_pack ("{s:I, s:s, s:b}", "run_id", (json_int_t) run_id,
                                          "status", progress.status[0] ? progress.status
                                                                       : "running",
                                          "interrupted", 1);
            kf_ctl_print_json (out_json);
            json_decref (out_json);
        }
    }
    zsock_destroy (&sub);
    if (code == 0)
        *run_p = run;
    else
        json_decref (run);
    return code;
}

/* Exit code for a finished run: 0 only when it is done. */
int
kf_ctl_run_exit (json_t *run)
{
    const char *status = json_string_value (json_object_get (run, "status"));
    return status && !strcmp (status, "done") ? KF_CTL_EXIT_OK
                                              : KF_CTL_EXIT_ERROR;
}

int
kf_ctl_run_ended (const kf_ctl_args_t *args, json_t *run, long long run_id, json_t *as_json)
{
    if (args->json)
        kf_ctl_print_json (as_json);
    else
        kf_ctl_print_outcome (run, run_id);
    json_decref (as_json);
    int code = kf_ctl_run_exit (run);
    json_decref (run);
    return code;
}

void
kf_ctl_print_outcome (json_t *run, long long run_id)
{
    char best[32], first[32];
    const char *status = json_string_value (json_object_get (run, "status"));
    json_t *cid = json_object_get (run, "best_candidate_id");
    printf ("run %lld %s: best speedup %s", run_id, status ? status : "?",
            kf_ctl_speedup_text (json_object_get (run, "best_speedup"), best,
                                 sizeof best));
    if (json_is_integer (cid))
        printf (" (candidate %lld)", (long long) json_integer_value (cid));
    printf (", first correct %s\n",
            kf_ctl_speedup_text (json_object_get (run, "first_speedup"), first,
                                 sizeof first));
    const char *reason = json_string_value (json_object_get (run, "reason"));
    if (reason && *reason)
        printf ("reason: %s\n", reason);
}

/* ------------------------------------------------------------------ */
/* Commands                                                             */

int
kf_ctl_cmd_watch (kf_ctl_args_t *args, kf_ctl_endpoints_t *ep)
{
    long long run_id = 0;
    if (kf_ctl_parse_int (args->args[0], 1, LLONG_MAX, &run_id)) {
        fprintf (stderr, "kfctl: watch: RUN must be a run id, not '%s'\n",
                 args->args[0]);
        return KF_CTL_EXIT_USAGE;
    }
    json_t *run = NULL;
    int code = kf_ctl_follow (args, ep, run_id, true, &run);
    if (code)
        return code;
    return kf_ctl_run_ended (args, run, run_id,
                             args->json ? json_pack ("{s:O}", "run", run) : NULL);
}

int
kf_ctl_cmd_runs (kf_ctl_args_t *args, kf_ctl_endpoints_t *ep)
{
    return kf_ctl_query (args, ep->client, "client", "RUNS", "runs", kf_ctl_print_runs);
}

static int
s_show (kf_ctl_args_t *args, long long run_id, kf_msg_t *reply)
{
    (void) run_id;
    if (args->json) {
        kf_ctl_show_extend (reply->body);
        kf_ctl_print_json (reply->body);
    }
    else {
        kf_ctl_print_run (stdout, json_object_get (reply->body, "run"));
        printf ("\n");
        kf_ctl_print_archive (stdout, reply->body);
        printf ("\n");
        kf_ctl_print_prompts (stdout, reply->body);
        kf_ctl_print_candidates (stdout,
                                 json_object_get (reply->body, "candidates"));
    }
    return KF_CTL_EXIT_OK;
}

int
kf_ctl_cmd_show (kf_ctl_args_t *args, kf_ctl_endpoints_t *ep)
{
    return kf_ctl_run_call (args, ep, "SHOW", "RUN", s_show);
}

/* `report RUN -o FILE.html`: one page from a SHOW asked with `report:
 * true`, which adds the best kernel's lineage with its sources and the
 * jobs' times by kind (kfctl_html.c). */
static int
s_report_html (kf_ctl_args_t *args, kf_ctl_endpoints_t *ep)
{
    long long run_id;
    if (kf_ctl_parse_int (args->args[0], 1, LLONG_MAX, &run_id)) {
        fprintf (stderr, "kfctl: report: RUN must be a run id, not '%s'\n", args->args[0]);
        return KF_CTL_EXIT_USAGE;
    }
    if (!ep->client)
        return kf_ctl_no_endpoint ("client");
    kf_msg_t *reply = NULL;
    int code = kf_ctl_call (ep->client, args, "SHOW",
                            json_pack ("{s:I, s:b}", "run_id", (json_int_t) run_id, "report", 1),
                            "RUN", &reply);
    if (code)
        return code;
    char *err = NULL;
    if (kf_ctl_report_html (reply->body, args->output, &err)) {
        fprintf (stderr, "kfctl: report: %s\n", err ? err : "failed");
        free (err);
        kf_msg_destroy (&reply);
        return KF_CTL_EXIT_ERROR;
    }
    kf_ctl_print_html_written (args, "run_id", run_id);
    kf_msg_destroy (&reply);
    return KF_CTL_EXIT_OK;
}

/* `report RUN [-o PREFIX]`: the curves as files, from the SHOW reply. */
static int
s_report_files (kf_ctl_args_t *args, long long run_id, kf_msg_t *reply)
{
    char prefix[64];
    snprintf (prefix, sizeof prefix, "run-%lld", run_id);
    if (args->output && !*args->output) {
        fprintf (stderr, "kfctl: report: -o needs a non-empty PREFIX\n");
        return KF_CTL_EXIT_USAGE;
    }
    char *paths[3] = { NULL, NULL, NULL };
    char *err = NULL;
    if (kf_ctl_report_write (reply->body, args->output ? args->output : prefix,
                             paths, &err)) {
        fprintf (stderr, "kfctl: report: %s\n", err ? err : "failed");
        free (err);
        return KF_CTL_EXIT_ERROR;
    }
    if (args->json) {
        json_t *out = json_pack ("{s:I, s:s, s:s, s:s}", "run_id",
                                 (json_int_t) run_id, "budget_csv", paths[0],
                                 "generations_csv", paths[1], "svg", paths[2]);
        kf_ctl_print_json (out);
        json_decref (out);
    }
    else
        for (int i = 0; i < 3; i++)
            printf ("%s\n", paths[i]);
    for (int i = 0; i < 3; i++)
        free (paths[i]);
    return KF_CTL_EXIT_OK;
}

/* The run's curves as files: everything is computed here from one SHOW
 * reply, so a report needs no support from the coordinator. With -o
 * FILE.html, the page instead. */
int
kf_ctl_cmd_report (kf_ctl_args_t *args, kf_ctl_endpoints_t *ep)
{
    if (args->suite)   /* report --suite ID -o FILE.html (kfctl_suite.c) */
        return kf_ctl_report_suite (args, ep);
    size_t out_len = args->output ? strlen (args->output) : 0;
    if (out_len > 5 && !strcmp (args->output + out_len - 5, ".html"))
        return s_report_html (args, ep);
    return kf_ctl_run_call (args, ep, "SHOW", "RUN", s_report_files);
}

/* ", 12.3 us against the reference's 22.8 us, tuning point BLOCK=256"
 * from the BEST candidate's figures, or "" when it has none. */
static void
s_best_times (json_t *candidate, char *buf, size_t size)
{
    double cand = 0, ref = 0;
    size_t used = 0;
    buf[0] = 0;
    if (kf_ctl_real (candidate, "candidate_ns", &cand) && cand > 0
        && kf_ctl_real (candidate, "reference_ns", &ref) && ref > 0)
        used = (size_t) snprintf (buf, size, ", %.1f us against the reference's %.1f us",
                                  cand / 1e3, ref / 1e3);
    json_t *config = json_object_get (candidate, "best_config");
    const char *name;
    json_t *value;
    bool first = true;
    json_object_foreach (config, name, value) {
        if (used >= size)
            break;
        char v[48];
        if (json_is_integer (value))
            snprintf (v, sizeof v, "%lld", (long long) json_integer_value (value));
        else
            snprintf (v, sizeof v, "%s", json_is_string (value) ? json_string_value (value) : "?");
        used += (size_t) snprintf (buf + used, size - used, "%s%s=%s",
                                   first ? ", tuning point " : " ", name, v);
        first = false;
    }
}

static int
s_best (kf_ctl_args_t *args, long long run_id, kf_msg_t *reply)
{
    zframe_t *source = kf_msg_frame (reply, 0);
    json_t *candidate = json_object_get (reply->body, "candidate");
    if (!source || !json_is_object (candidate)) {
        fprintf (stderr, "kfctl: run %lld has no correct candidate yet\n",
                 run_id);
        return KF_CTL_EXIT_ERROR;
    }
    int code = KF_CTL_EXIT_OK;
    /* A tuned candidate's figures are those of one tuning point: written
     * in front of the source (kfctl_export.c), so what is built is what
     * was measured rather than the source's own defaults. */
    json_t *config = json_object_get (candidate, "best_config");
    char *tuned = NULL;
    if (json_is_object (config) && json_object_size (config) > 0) {
        char banner[160], why[256];
        snprintf (banner, sizeof banner, "candidate %lld of run %lld, as measured (kfctl best)",
                  kf_ctl_int (candidate, "id", -1), run_id);
        tuned = kf_ctl_export_tuned_source ((const char *) zframe_data (source),
                                            zframe_size (source), config, banner, why,
                                            sizeof why);
        if (!tuned) {
            fprintf (stderr, "kfctl: best: %s\n", why);
                return KF_CTL_EXIT_ERROR;
        }
    }
    const char *text = tuned ? tuned : (const char *) zframe_data (source);
    size_t text_size = tuned ? strlen (tuned) : zframe_size (source);
    if (args->output) {
        FILE *f = fopen (args->output, "wb");
        size_t size = text_size;
        if (!f || fwrite (text, 1, size, f) != size) {
            fprintf (stderr, "kfctl: cannot write %s: %s\n", args->output,
                     strerror (errno));
            code = KF_CTL_EXIT_ERROR;
        }
        if (f && fclose (f) != 0 && code == KF_CTL_EXIT_OK) {
            fprintf (stderr, "kfctl: cannot write %s: %s\n", args->output,
                     strerror (errno));
            code = KF_CTL_EXIT_ERROR;
        }
        if (code == KF_CTL_EXIT_OK && !args->json) {
            char speedup[32];
            char times[128];
            s_best_times (candidate, times, sizeof times);
            printf ("wrote %s: candidate %lld of run %lld, speedup %s%s\n",
                    args->output,
                    (long long) json_integer_value (json_object_get (candidate,
                                                                     "id")),
                    run_id,
                    kf_ctl_speedup_text (json_object_get (candidate,
                                                          "speedup"),
                                         speedup, sizeof speedup), times);
        }
    }
    if (args->json) {
        /* The source travels as a frame; put it in the object so the
         * JSON alone is the whole answer. */
        json_t *out = json_deep_copy (reply->body);
        if (args->output)
            json_object_set_new (out, "output", json_string (args->output));
        else
            json_object_set_new (out, "source", json_stringn (text, text_size));
        kf_ctl_print_json (out);
        json_decref (out);
    }
    else if (!args->output) {
        fwrite (text, 1, text_size, stdout);
        if (text_size && text[text_size - 1] != '\n')
            printf ("\n");
    }
    free (tuned);
    return code;
}

int
kf_ctl_cmd_best (kf_ctl_args_t *args, kf_ctl_endpoints_t *ep)
{
    return kf_ctl_run_call (args, ep, "BEST", "BEST", s_best);
}

static int
s_cancel (kf_ctl_args_t *args, long long run_id, kf_msg_t *reply)
{
    if (args->json)
        kf_ctl_print_json (reply->body);
    else
        printf ("cancelled run %lld\n", run_id);
    return KF_CTL_EXIT_OK;
}

int
kf_ctl_cmd_cancel (kf_ctl_args_t *args, kf_ctl_endpoints_t *ep)
{
    return kf_ctl_run_call (args, ep, "CANCEL", "CANCELLED", s_cancel);
}
