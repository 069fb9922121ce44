/*  kfctl_main.c - kfctl, the user's command line to the coordinator.
 *
 *  Parses its own argv (subcommands with their options, global options
 *  anywhere), finds the endpoints, and runs one command: submit, status,
 *  workers, runs, show, report, best, cancel, watch. Exit codes and JSON shapes
 *  are documented in docs/kfctl.md; keep both in step.
 */
#include "kf_auth.h"
#include "kf_json.h"
#include "kf_log.h"
#include "kf_proto.h"
#include "kf_str.h"
#include "kf_task.h"
#include "kfctl_client.h"
#include "kfctl_print.h"
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define S_DEFAULT_TIMEOUT_MS 5000
#define S_POLL_MS 1000

/* Which options a command accepts beyond the global ones. */
enum {
    S_OPT_SUBMIT = 1,      /* --target --generations --population --seed --wait */
    S_OPT_OUTPUT = 2       /* -o / --output */
};

typedef struct {
    const char *command;
    const char *args[4];
    int nargs;
    const char *endpoint, *status_endpoint, *event_endpoint;
    int timeout_ms;
    bool json, help, wait;
    const char *target, *output;
    long long generations, population, seed;
    bool has_generations, has_population, has_seed;
    const char *model, *first_model;      /* checked by the coordinator */
    double budget_tokens, budget_usd;     /* 0: none */
    long long tune;                       /* 0: the coordinator's default */
    const char *task_name, *op;           /* a PyTorch problem's name and op */
    bool allow_degenerate;
    const char *config_file;              /* submit --config FILE */
    const char *sets[16];                 /* submit --set KEY=VALUE, in order */
    int n_sets;
} s_args_t;

typedef struct s_command_t s_command_t;
typedef int (s_handler_fn) (s_args_t *args, kf_ctl_endpoints_t *ep);

struct s_command_t {
    const char *name;
    const char *usage;
    const char *summary;
    int nargs;             /* required positional arguments */
    int options;
    s_handler_fn *handler;
};

static const char *s_global_help =
    "Options of every command:\n"
    "  --endpoint EP          coordinator's client endpoint\n"
    "                         (else $KF_CLIENT_ENDPOINT, else the kf-local state folder)\n"
    "  --status-endpoint EP   status endpoint (else $KF_STATUS_ENDPOINT, ...)\n"
    "  --event-endpoint EP    event endpoint (else $KF_EVENT_ENDPOINT, ...)\n"
    "  --timeout SECONDS      how long to wait for each reply (default 5)\n"
    "  --json                 print the raw reply objects as JSON\n"
    "  -h, --help             this help\n"
    "State folder: $KF_STATE, else /var/lib/kf-local (root) or ~/.kf-local;\n"
    "its file `endpoints` is written by kf-local up.\n"
    "Exit codes: 0 ok, 1 error reply or run failed/cancelled, 2 bad usage or\n"
    "task file, 3 coordinator unreachable, 130 interrupted.\n";

/* ------------------------------------------------------------------ */
/* Small helpers                                                        */

static void
s_print_json (json_t *value)
{
    char *text = json_dumps (value, JSON_COMPACT | JSON_ENCODE_ANY
                                       | JSON_REAL_PRECISION (15));
    if (text) {
        printf ("%s\n", text);
        free (text);
    }
    fflush (stdout);
}

static int
s_parse_int (const char *text, long long min, long long max, long long *out)
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

/* host, cuda, level-zero, optionally narrowed by ":ARCH"; cuda arches
 * must read sm_NN so a typo fails here rather than as an unroutable job. */
static int
s_target_ok (const char *target)
{
    static const char *backends[] = { "host", "cuda", "level-zero" };
    const char *colon = strchr (target, ':');
    size_t blen = colon ? (size_t) (colon - target) : strlen (target);
    int which = -1;
    for (int i = 0; i < 3; i++)
        if (strlen (backends[i]) == blen && !strncmp (target, backends[i], blen))
            which = i;
    if (which < 0)
        return -1;
    if (!colon)
        return 0;
    const char *arch = colon + 1;
    size_t alen = strlen (arch);
    if (alen == 0 || alen > 32)
        return -1;
    for (const char *p = arch; *p; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z')
              || (*p >= '0' && *p <= '9') || *p == '_' || *p == '-'
              || *p == '.'))
            return -1;
    if (which == 1) {
        if (strncmp (arch, "sm_", 3) || !arch[3])
            return -1;
        for (const char *p = arch + 3; *p; p++)
            if (!((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'z')))
                return -1;
    }
    return 0;
}

static int
s_no_endpoint (const char *which)
{
    char *dir = kf_ctl_state_dir ();
    fprintf (stderr,
             "kfctl: no %s endpoint known: pass --%s, set KF_%s_ENDPOINT, "
             "or start a single-node system with 'kf-local up' "
             "(no entry in %s/endpoints)\n",
             which, !strcmp (which, "client") ? "endpoint" : "status-endpoint",
             !strcmp (which, "client") ? "CLIENT" : "STATUS",
             dir ? dir : "?");
    free (dir);
    return KF_CTL_EXIT_UNREACHABLE;
}

/* Runs one request and turns every failure into its message and exit
 * code. Returns 0 with *REPLY_P set, or the exit code. */
static int
s_call (const char *endpoint, const s_args_t *args, const char *type,
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
            s_print_json (reply->body);
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
        fprintf (stderr, "kfctl: %s\n", err ? err : "bad reply");
        code = KF_CTL_EXIT_ERROR;
        break;
    case KF_CTL_NO_REPLY:
    default:
        fprintf (stderr, "kfctl: %s (is the coordinator running? "
                 "'kf-local status' shows a single-node system)\n",
                 err ? err : "no reply");
        code = KF_CTL_EXIT_UNREACHABLE;
        break;
    }
    free (err);
    return code;
}

/* ------------------------------------------------------------------ */
/* Following a run: events plus a SHOW poll                             */

/* Draws PROGRESS on OUT: in place when OUT is a terminal, else one line
 * per change. */
static void
s_draw (FILE *out, bool tty, const kf_ctl_progress_t *progress, char *last,
        size_t last_size)
{
    char line[256];
    kf_ctl_progress_line (progress, line, sizeof line);
    if (!strcmp (line, last))
        return;
    snprintf (last, last_size, "%s", line);
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
static int
s_follow (const s_args_t *args, kf_ctl_endpoints_t *ep, long long run_id,
          bool watch, json_t **run_p)
{
    *run_p = NULL;
    FILE *out = watch ? stdout : stderr;
    bool show_progress = watch ? !args->json : isatty (STDERR_FILENO);
    bool tty = isatty (fileno (out));
    kf_ctl_progress_t progress;
    memset (&progress, 0, sizeof progress);
    progress.run_id = run_id;
    char last[256] = "";

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
                        s_print_json (event->body);
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
        next_show = kf_ctl_now_ms () + S_POLL_MS;
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
    zsock_destroy (&sub);
    if (code == 0)
        *run_p = run;
    else
        json_decref (run);
    return code;
}

/* Exit code for a finished run: 0 only when it is done. */
static int
s_run_exit (json_t *run)
{
    const char *status = json_string_value (json_object_get (run, "status"));
    return status && !strcmp (status, "done") ? KF_CTL_EXIT_OK
                                              : KF_CTL_EXIT_ERROR;
}

static void
s_print_outcome (json_t *run, long long run_id)
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
/* PyTorch problems (KernelBench format)                                */

/* A problem file is a few kilobytes; anything this big is a wrong path. */
#define S_PROBLEM_MAX_BYTES (1024 * 1024)

/* The op classes the generators know (docs/task-format.md): a problem
 * file named after one of them gets it as its op. */
static const char *s_known_ops[] = { "softmax", "rmsnorm", "layernorm", "activation",
                                     "row_reduction", NULL };

/* True when PATH is a PyTorch problem rather than a task file: its name
 * ends in .py, or it is not JSON and defines class Model. */
static bool
s_is_problem (const char *path, const char *text)
{
    size_t n = strlen (path);
    if (n > 3 && !strcmp (path + n - 3, ".py"))
        return true;
    const char *p = text;
    while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
        p++;
    return *p != '{' && (!strncmp (text, "class Model", 11) || strstr (text, "\nclass Model"));
}

/* True when some line of TEXT starts with PREFIX followed by one of ENDS. */
static bool
s_has_line (const char *text, const char *prefix, const char *ends)
{
    size_t n = strlen (prefix);
    for (const char *p = text; p; p = strchr (p, '\n')) {
        if (*p == '\n')
            p++;
        if (!strncmp (p, prefix, n) && p[n] && strchr (ends, p[n]))
            return true;
    }
    return false;
}

/* The module's docstring (a string literal before any code), or "". */
static char *
s_docstring (const char *text)
{
    const char *p = text;
    for (;;) {
        while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
            p++;
        if (*p != '#')
            break;
        p = strchr (p, '\n');
        if (!p)
            return strdup ("");
    }
    const char *quote = !strncmp (p, "\"\"\"", 3) ? "\"\"\"" : !strncmp (p, "'''", 3) ? "'''" : NULL;
    const char *end = quote ? strstr (p + 3, quote) : NULL;
    if (!end)
        return strdup ("");
    p += 3;
    while (p < end && (*p == ' ' || *p == '\n'))
        p++;
    while (end > p && (end[-1] == ' ' || end[-1] == '\n'))
        end--;
    return strndup (p, (size_t) (end - p) > 4000 ? 4000 : (size_t) (end - p));
}

/* The task for a PyTorch problem file: {name, op, description, reference:
 * {language: pytorch, source}}, checked and with defaults filled by
 * kf_task_validate. Its inputs and outputs are derived by the coordinator
 * from the reference job (docs/pytorch-references.md). NULL with *ERR. */
static json_t *
s_problem_task (const s_args_t *args, const char *path, char *text, size_t size, char **err)
{
    if (size > S_PROBLEM_MAX_BYTES) {
        *err = kf_strdupf ("%s: larger than %d bytes: not a PyTorch problem file", path,
                           S_PROBLEM_MAX_BYTES);
        return NULL;
    }
    json_t *source = json_stringn (text, size);   /* NULL unless UTF-8 without NUL */
    if (!source || strlen (text) != size) {
        json_decref (source);
        *err = kf_strdupf ("%s: not UTF-8 text", path);
        return NULL;
    }
    const char *missing = !s_has_line (text, "class Model", "(:")  ? "class Model"
                          : !s_has_line (text, "def get_inputs", "(")  ? "def get_inputs()"
                          : !s_has_line (text, "def get_init_inputs", "(")
                              ? "def get_init_inputs()" : NULL;
    if (missing) {
        json_decref (source);
        *err = kf_strdupf ("%s: no '%s' at the start of a line (a KernelBench problem defines"
                           " class Model, get_inputs and get_init_inputs)", path, missing);
        return NULL;
    }
    const char *base = strrchr (path, '/');
    base = base ? base + 1 : path;
    size_t stem_len = strlen (base);
    if (stem_len > 3 && !strcmp (base + stem_len - 3, ".py"))
        stem_len -= 3;
    char *stem = strndup (base, stem_len);
    const char *op = args->op;
    for (int i = 0; !op && s_known_ops[i]; i++)
        if (!strcmp (stem, s_known_ops[i]))
            op = s_known_ops[i];
    char *doc = s_docstring (text);
    json_t *task = json_pack ("{s:s, s:s, s:s, s:{s:s, s:o}}", "name",
                              args->task_name ? args->task_name : stem, "op",
                              op ? op : "pytorch", "description", doc ? doc : "",
                              "reference", "language", "pytorch", "source", source);
    free (doc);
    free (stem);
    char *why = NULL;
    if (!task || kf_task_validate (task, &why)) {
        *err = kf_strdupf ("%s: %s", path, why ? why : "out of memory");
        free (why);
        json_decref (task);
        return NULL;
    }
    return task;
}

/* The task of submit's argument: a task file, or a PyTorch problem. */
static json_t *
s_submit_task (const s_args_t *args, char **err)
{
    const char *path = args->args[0];
    FILE *f = fopen (path, "rb");
    if (!f) {
        *err = kf_strdupf ("%s: %s", path, strerror (errno));
        return NULL;
    }
    char *text = malloc (S_PROBLEM_MAX_BYTES + 2);
    size_t size = text ? fread (text, 1, S_PROBLEM_MAX_BYTES + 1, f) : 0;
    fclose (f);
    if (!text) {
        *err = strdup ("out of memory");
        return NULL;
    }
    text[size] = 0;
    json_t *task;
    if (s_is_problem (path, text))
        task = s_problem_task (args, path, text, size, err);
    else if (args->task_name || args->op) {
        *err = kf_strdupf ("%s: --name and --op are for PyTorch problem files", path);
        task = NULL;
    }
    else
        task = kf_task_load (path, err);
    free (text);
    return task;
}

/* ------------------------------------------------------------------ */
/* Commands                                                             */

/* The run config the user wrote (docs/search.md): the JSON object of
 * --config FILE, then each --set KEY=VALUE on top (VALUE read as JSON,
 * else taken as a string; KEY.MEMBER sets one member of an object, as in
 * selection.curiosity=1). The coordinator checks the keys; submit's own
 * flags go on top of both. NULL with *ERR when the file or a --set is
 * unreadable. */
static json_t *
s_run_config (s_args_t *args, char **err)
{
    json_t *config = json_object ();
    if (args->config_file) {
        json_error_t e;
        json_t *file = json_load_file (args->config_file, JSON_REJECT_DUPLICATES, &e);
        if (!file || !json_is_object (file)) {
            if (file)
                kf_fail (err, "--config %s: not a JSON object", args->config_file);
            else
                kf_fail (err, "--config %s:%d: %s", args->config_file, e.line, e.text);
            json_decref (file);
            json_decref (config);
            return NULL;
        }
        json_object_update (config, file);
        json_decref (file);
    }
    for (int i = 0; i < args->n_sets; i++) {
        const char *set = args->sets[i], *eq = strchr (set, '=');
        const char *dot = eq ? memchr (set, '.', (size_t) (eq - set)) : NULL;
        if (!eq || eq == set || dot == set || (dot && dot + 1 == eq)) {
            kf_fail (err, "--set %s: expected KEY=VALUE or KEY.MEMBER=VALUE", set);
            json_decref (config);
            return NULL;
        }
        json_t *value = json_loads (eq + 1, JSON_DECODE_ANY, NULL);
        if (!value)
            value = json_string (eq + 1);
        char key[128];
        snprintf (key, sizeof key, "%.*s", (int) ((dot ? dot : eq) - set), set);
        if (!dot) {
            json_object_set_new (config, key, value);
            continue;
        }
        json_t *obj = json_object_get (config, key);
        if (!json_is_object (obj)) {
            obj = json_object ();
            json_object_set_new (config, key, obj);
        }
        char member[128];
        snprintf (member, sizeof member, "%.*s", (int) (eq - dot - 1), dot + 1);
        json_object_set_new (obj, member, value);
    }
    return config;
}

static int
s_cmd_submit (s_args_t *args, kf_ctl_endpoints_t *ep)
{
    if (args->target && s_target_ok (args->target) != 0) {
        fprintf (stderr, "kfctl: --target: unknown target '%s' (host, cuda, "
                 "level-zero, optionally narrowed as cuda:sm_90)\n",
                 args->target);
        return KF_CTL_EXIT_USAGE;
    }
    char *err = NULL;
    json_t *task = s_submit_task (args, &err);
    if (!task) {
        fprintf (stderr, "kfctl: %s\n", err ? err : args->args[0]);
        free (err);
        return KF_CTL_EXIT_USAGE;
    }
    /* Only what the user chose: the coordinator owns the defaults. */
    json_t *config = s_run_config (args, &err);
    if (!config) {
        fprintf (stderr, "kfctl: %s\n", err ? err : "bad run config");
        free (err);
        json_decref (task);
        return KF_CTL_EXIT_USAGE;
    }
    if (!ep->client) {
        json_decref (task);
        json_decref (config);
        return s_no_endpoint ("client");
    }
    if (args->target)
        json_object_set_new (config, "target", json_string (args->target));
    if (args->has_generations)
        json_object_set_new (config, "generations",
                             json_integer (args->generations));
    if (args->has_population)
        json_object_set_new (config, "population",
                             json_integer (args->population));
    if (args->has_seed)
        json_object_set_new (config, "seed", json_integer (args->seed));
    if (args->model)
        json_object_set_new (config, "model", json_string (args->model));
    if (args->tune)
        json_object_set_new (config, "tune", json_integer (args->tune));
    if (args->first_model)
        json_object_set_new (config, "first_model", json_string (args->first_model));
    if (args->budget_tokens > 0 || args->budget_usd > 0) {
        json_t *budget = json_object ();
        if (args->budget_tokens > 0)
            json_object_set_new (budget, "tokens", json_real (args->budget_tokens));
        if (args->budget_usd > 0)
            json_object_set_new (budget, "usd", json_real (args->budget_usd));
        json_object_set_new (config, "budget", budget);
    }
    if (args->allow_degenerate)
        json_object_set_new (config, "allow_degenerate", json_true ());
    json_t *body = json_object ();
    json_object_set_new (body, "task", task);
    json_object_set_new (body, "config", config);

    kf_msg_t *reply = NULL;
    int code = s_call (ep->client, args, "SUBMIT", body, "SUBMITTED", &reply);
    if (code)
        return code;
    long long run_id = (long long) kf_msg_int (reply, "run_id", -1);
    if (!args->wait) {
        if (args->json)
            s_print_json (reply->body);
        else
            printf ("%lld\n", run_id);
        kf_msg_destroy (&reply);
        return KF_CTL_EXIT_OK;
    }
    kf_msg_destroy (&reply);
    if (isatty (STDERR_FILENO))
        fprintf (stderr, "submitted run %lld\n", run_id);
    json_t *run = NULL;
    code = s_follow (args, ep, run_id, false, &run);
    if (code)
        return code;
    if (args->json) {
        json_t *result = json_object ();
        json_object_set_new (result, "run_id", json_integer (run_id));
        static const char *keys[] = { "status", "best_speedup", "first_speedup",
                                      "best_candidate_id", "reason" };
        for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
            json_t *v = json_object_get (run, keys[i]);
            json_object_set (result, keys[i], v ? v : json_null ());
        }
        s_print_json (result);
        json_decref (result);
    }
    else
        s_print_outcome (run, run_id);
    code = s_run_exit (run);
    json_decref (run);
    return code;
}

static int
s_cmd_watch (s_args_t *args, kf_ctl_endpoints_t *ep)
{
    long long run_id = 0;
    if (s_parse_int (args->args[0], 1, LLONG_MAX, &run_id)) {
        fprintf (stderr, "kfctl: watch: RUN must be a run id, not '%s'\n",
                 args->args[0]);
        return KF_CTL_EXIT_USAGE;
    }
    json_t *run = NULL;
    int code = s_follow (args, ep, run_id, true, &run);
    if (code)
        return code;
    if (args->json) {
        json_t *wrapped = json_pack ("{s:O}", "run", run);
        s_print_json (wrapped);
        json_decref (wrapped);
    }
    else
        s_print_outcome (run, run_id);
    code = s_run_exit (run);
    json_decref (run);
    return code;
}

/* A request with an empty body whose reply is printed whole (--json) or
 * by PRINT, given the reply's field KEY (NULL: the whole body). */
static int
s_query (s_args_t *args, const char *endpoint, const char *what, const char *type,
         const char *key, void (*print) (FILE *, json_t *))
{
    if (!endpoint)
        return s_no_endpoint (what);
    kf_msg_t *reply = NULL;
    int code = s_call (endpoint, args, type, NULL, type, &reply);
    if (code)
        return code;
    if (args->json)
        s_print_json (reply->body);
    else
        print (stdout, key ? json_object_get (reply->body, key) : reply->body);
    kf_msg_destroy (&reply);
    return KF_CTL_EXIT_OK;
}

static int
s_cmd_status (s_args_t *args, kf_ctl_endpoints_t *ep)
{
    /* The status endpoint is read-only and may be the only one reachable
     * (e.g. a monitoring host); the client endpoint answers STATUS too. */
    return s_query (args, ep->status ? ep->status : ep->client, "status", "STATUS",
                    NULL, kf_ctl_print_status);
}

static int
s_cmd_workers (s_args_t *args, kf_ctl_endpoints_t *ep)
{
    return s_query (args, ep->client, "client", "WORKERS", "workers", kf_ctl_print_workers);
}

static int
s_cmd_runs (s_args_t *args, kf_ctl_endpoints_t *ep)
{
    return s_query (args, ep->client, "client", "RUNS", "runs", kf_ctl_print_runs);
}

/* Requests TYPE {run_id} for the command's RUN argument. */
static int
s_run_call (s_args_t *args, kf_ctl_endpoints_t *ep, const char *type,
            const char *expect, long long *run_id, kf_msg_t **reply_p)
{
    *reply_p = NULL;
    if (s_parse_int (args->args[0], 1, LLONG_MAX, run_id)) {
        fprintf (stderr, "kfctl: %s: RUN must be a run id, not '%s'\n",
                 args->command, args->args[0]);
        return KF_CTL_EXIT_USAGE;
    }
    if (!ep->client)
        return s_no_endpoint ("client");
    return s_call (ep->client, args, type,
                   json_pack ("{s:I}", "run_id", (json_int_t) *run_id), expect,
                   reply_p);
}

static int
s_cmd_show (s_args_t *args, kf_ctl_endpoints_t *ep)
{
    long long run_id;
    kf_msg_t *reply = NULL;
    int code = s_run_call (args, ep, "SHOW", "RUN", &run_id, &reply);
    if (code)
        return code;
    if (args->json) {
        kf_ctl_show_extend (reply->body);
        s_print_json (reply->body);
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
    kf_msg_destroy (&reply);
    return KF_CTL_EXIT_OK;
}

/* The run's curves as files: everything is computed here from one SHOW
 * reply, so a report needs no support from the coordinator. */
static int
s_cmd_report (s_args_t *args, kf_ctl_endpoints_t *ep)
{
    long long run_id;
    kf_msg_t *reply = NULL;
    int code = s_run_call (args, ep, "SHOW", "RUN", &run_id, &reply);
    if (code)
        return code;
    char prefix[64];
    snprintf (prefix, sizeof prefix, "run-%lld", run_id);
    if (args->output && !*args->output) {
        fprintf (stderr, "kfctl: report: -o needs a non-empty PREFIX\n");
        kf_msg_destroy (&reply);
        return KF_CTL_EXIT_USAGE;
    }
    char *paths[3] = { NULL, NULL, NULL };
    char *err = NULL;
    if (kf_ctl_report_write (reply->body, args->output ? args->output : prefix,
                             paths, &err)) {
        fprintf (stderr, "kfctl: report: %s\n", err ? err : "failed");
        free (err);
        kf_msg_destroy (&reply);
        return KF_CTL_EXIT_ERROR;
    }
    if (args->json) {
        json_t *out = json_pack ("{s:I, s:s, s:s, s:s}", "run_id",
                                 (json_int_t) run_id, "budget_csv", paths[0],
                                 "generations_csv", paths[1], "svg", paths[2]);
        s_print_json (out);
        json_decref (out);
    }
    else
        for (int i = 0; i < 3; i++)
            printf ("%s\n", paths[i]);
    for (int i = 0; i < 3; i++)
        free (paths[i]);
    kf_msg_destroy (&reply);
    return KF_CTL_EXIT_OK;
}

static int
s_cmd_best (s_args_t *args, kf_ctl_endpoints_t *ep)
{
    long long run_id;
    kf_msg_t *reply = NULL;
    int code = s_run_call (args, ep, "BEST", "BEST", &run_id, &reply);
    if (code)
        return code;
    zframe_t *source = kf_msg_frame (reply, 0);
    json_t *candidate = json_object_get (reply->body, "candidate");
    if (!source || !json_is_object (candidate)) {
        fprintf (stderr, "kfctl: run %lld has no correct candidate yet\n",
                 run_id);
        kf_msg_destroy (&reply);
        return KF_CTL_EXIT_ERROR;
    }
    code = KF_CTL_EXIT_OK;
    if (args->output) {
        FILE *f = fopen (args->output, "wb");
        size_t size = zframe_size (source);
        if (!f || fwrite (zframe_data (source), 1, size, f) != size) {
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
            printf ("wrote %s: candidate %lld of run %lld, speedup %s\n",
                    args->output,
                    (long long) json_integer_value (json_object_get (candidate,
                                                                     "id")),
                    run_id,
                    kf_ctl_speedup_text (json_object_get (candidate,
                                                          "speedup"),
                                         speedup, sizeof speedup));
        }
    }
    if (args->json) {
        /* The source travels as a frame; put it in the object so the
         * JSON alone is the whole answer. */
        json_t *out = json_deep_copy (reply->body);
        if (args->output)
            json_object_set_new (out, "output", json_string (args->output));
        else
            json_object_set_new (out, "source",
                                 json_stringn ((const char *) zframe_data (source),
                                               zframe_size (source)));
        s_print_json (out);
        json_decref (out);
    }
    else if (!args->output) {
        fwrite (zframe_data (source), 1, zframe_size (source), stdout);
        size_t size = zframe_size (source);
        if (size && ((const char *) zframe_data (source))[size - 1] != '\n')
            printf ("\n");
    }
    kf_msg_destroy (&reply);
    return code;
}

static int
s_cmd_cancel (s_args_t *args, kf_ctl_endpoints_t *ep)
{
    long long run_id;
    kf_msg_t *reply = NULL;
    int code = s_run_call (args, ep, "CANCEL", "CANCELLED", &run_id, &reply);
    if (code)
        return code;
    if (args->json)
        s_print_json (reply->body);
    else
        printf ("cancelled run %lld\n", run_id);
    kf_msg_destroy (&reply);
    return KF_CTL_EXIT_OK;
}

/* keygen DIR NAME: a certificate pair for a coordinator, worker or user;
 * needs no coordinator. */
static int
s_cmd_keygen (s_args_t *args, kf_ctl_endpoints_t *ep)
{
    (void) ep;
    char key[41];
    char *err = NULL;
    if (kf_auth_keygen (args->args[0], args->args[1], key, &err)) {
        fprintf (stderr, "kfctl: keygen: %s\n", err ? err : "failed");
        free (err);
        return KF_CTL_EXIT_ERROR;
    }
    if (args->json) {
        json_t *out = json_pack ("{s:s, s:s, s:s}", "public_key", key, "public",
                                 args->args[1], "dir", args->args[0]);
        s_print_json (out);
        json_decref (out);
    }
    else
        printf ("%s/%s          public certificate (copy to the coordinator's"
                " allow-list folder)\n%s/%s_secret   secret certificate (stays on this"
                " host, mode 0600)\npublic key %s\n",
                args->args[0], args->args[1], args->args[0], args->args[1], key);
    return KF_CTL_EXIT_OK;
}

/* drain / undrain WORKER: the DRAIN request with resume false or true. */
static int
s_drain_call (s_args_t *args, kf_ctl_endpoints_t *ep, bool resume)
{
    if (!ep->client)
        return s_no_endpoint ("client");
    kf_msg_t *reply = NULL;
    int code = s_call (ep->client, args, "DRAIN",
                       json_pack ("{s:s, s:b}", "worker_id", args->args[0], "resume", resume),
                       "DRAINING", &reply);
    if (code)
        return code;
    if (args->json)
        s_print_json (reply->body);
    else if (resume)
        printf ("worker %s takes jobs again\n", args->args[0]);
    else
        printf ("worker %s draining: takes no new jobs; %zu job(s) still running\n",
                args->args[0], json_array_size (json_object_get (reply->body, "jobs")));
    kf_msg_destroy (&reply);
    return KF_CTL_EXIT_OK;
}

static int
s_cmd_drain (s_args_t *args, kf_ctl_endpoints_t *ep)
{
    return s_drain_call (args, ep, false);
}

static int
s_cmd_undrain (s_args_t *args, kf_ctl_endpoints_t *ep)
{
    return s_drain_call (args, ep, true);
}

/* audit CANDIDATE accept|reject: a person's word on a result held for
 * audit (suspicious, and its automatic re-verification failed). */
static int
s_cmd_audit (s_args_t *args, kf_ctl_endpoints_t *ep)
{
    long long cand;
    const char *verdict = args->args[1];
    if (s_parse_int (args->args[0], 1, LLONG_MAX, &cand)) {
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
        return s_no_endpoint ("client");
    kf_msg_t *reply = NULL;
    int code = s_call (ep->client, args, "AUDIT",
                       json_pack ("{s:I, s:s}", "candidate_id", (json_int_t) cand,
                                  "verdict", verdict),
                       "AUDITED", &reply);
    if (code)
        return code;
    if (args->json)
        s_print_json (reply->body);
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

static const s_command_t s_commands[] = {
    { "submit",
      "kfctl submit TASK|PROBLEM.py [--target T] [--generations N] [--population P] "
      "[--seed S] [--model M] [--first-model M] [--budget-tokens N] [--budget-usd X] "
      "[--tune N] [--name N] [--op OP] [--allow-degenerate] [--config FILE]\n"
      "       [--set KEY=VALUE]... [--no-memory] [--wait] [--json]",
      "submit a task file or a PyTorch problem (KernelBench format); prints the run id\n"
      "  --target T          host, cuda, level-zero, or narrowed: cuda:sm_90\n"
      "  --generations N     generations of the search (1..100000)\n"
      "  --population P      candidates per generation (1..10000)\n"
      "  --seed S            random seed (0..2^63-1)\n"
      "  --model M           generator: offline (default), openai:MODEL,\n"
      "                      anthropic:MODEL, command:NAME, or an ensemble\n"
      "                      with weights: openai:gpt-5-mini=1,openai:gpt-4.1=1\n"
      "  --first-model M     another model for the first generation\n"
      "  --budget-tokens N   stop asking for candidates after N tokens\n"
      "  --budget-usd X      stop asking for candidates after X dollars\n"
      "  --tune N            build and time up to N kf-tune points of each\n"
      "                      candidate (1..16; default 1: no sweep)\n"
      "  --name N            a PyTorch problem's task name (default: the file's stem)\n"
      "  --op OP             its op class (default: the stem when it is softmax,\n"
      "                      rmsnorm, layernorm, activation or row_reduction,\n"
      "                      else pytorch)\n"
      "  --allow-degenerate  run even when the reference's outputs are degenerate\n"
      "                      (constant, input-independent, all near zero); the\n"
      "                      reasons become a run warning instead of failing it\n"
      "  --config FILE       a run config: a JSON object of search settings\n"
      "                      (docs/search.md: islands, gradients, tuning,\n"
      "                      selection, ...); the flags above override it\n"
      "  --set KEY=VALUE     one run-config setting (VALUE as JSON), e.g.\n"
      "                      islands=false, selection.curiosity=1; repeatable\n"
      "  --no-memory         offer no elites of earlier runs of the op as\n"
      "                      inspirations (--set memory=false)\n"
      "  --wait              wait until the run ends; print the best speedup;\n"
      "                      exit 0 when done, 1 when failed or cancelled\n"
      "  --json              with --wait: {run_id, status, best_speedup,\n"
      "                      first_speedup, best_candidate_id, reason}; else {run_id}",
      1, S_OPT_SUBMIT, s_cmd_submit },
    { "status", "kfctl status [--json]",
      "coordinator summary: workers per role, queue depths, runs, counters",
      0, 0, s_cmd_status },
    { "workers", "kfctl workers [--json]",
      "connected workers with their role, credits, jobs and capabilities", 0,
      0, s_cmd_workers },
    { "drain", "kfctl drain WORKER [--json]",
      "stop giving WORKER (an id from 'kfctl workers') new jobs; the ones it\n"
      "  holds run to the end. It stays connected: stop it once its JOBS is 0.\n"
      "  --json              {worker_id, draining, jobs}",
      1, 0, s_cmd_drain },
    { "undrain", "kfctl undrain WORKER [--json]",
      "give a drained worker jobs again", 1, 0, s_cmd_undrain },
    { "audit", "kfctl audit CANDIDATE accept|reject [--json]",
      "a person's verdict on a correct result held for audit\n"
      "  (suspicious: past a measured ceiling or far beyond its run, and its\n"
      "  automatic re-verification failed): until accepted it does not\n"
      "  count towards its run's best and first-correct\n"
      "  figures ('kfctl show' lists it as \"correct, held\"); a rejected one\n"
      "  also leaves the archive. Prints the run's figures after the verdict\n"
      "  --json              {candidate_id, run_id, verdict, audit_reason,\n"
      "                      best_candidate_id, best_speedup, first_speedup}",
      2, 0, s_cmd_audit },
    { "keygen", "kfctl keygen DIR NAME [--json]",
      "make a CURVE certificate pair: DIR/NAME (public) and DIR/NAME_secret\n"
      "  (mode 0600); DIR is created (0700) when missing. Give the public file\n"
      "  to the coordinator's allow-list folder (docs/operations.md)",
      2, 0, s_cmd_keygen },
    { "runs", "kfctl runs [--json]", "every run with status and best speedup",
      0, 0, s_cmd_runs },
    { "show", "kfctl show RUN [--json]",
      "one run's summary, archive grids, best kernel, lineage, candidates",
      1, 0, s_cmd_show },
    { "report", "kfctl report RUN [-o PREFIX] [--json]",
      "write the run's limited-budget curve and progress as CSV and SVG\n"
      "  -o, --output PREFIX write PREFIX.csv, PREFIX-generations.csv and\n"
      "                      PREFIX.svg (default run-RUN); prints the paths\n"
      "  --json              {run_id, budget_csv, generations_csv, svg}",
      1, S_OPT_OUTPUT, s_cmd_report },
    { "best", "kfctl best RUN [-o FILE] [--json]",
      "the best candidate's source, on stdout or into FILE\n"
      "  -o, --output FILE   write the source to FILE", 1, S_OPT_OUTPUT,
      s_cmd_best },
    { "cancel", "kfctl cancel RUN [--json]", "cancel a running run", 1, 0,
      s_cmd_cancel },
    { "watch", "kfctl watch RUN [--json]",
      "live progress of a run until it ends\n"
      "  Ctrl-C stops watching (exit 130); the run goes on\n"
      "  --json              one line per event, then {\"run\": run object}",
      1, 0, s_cmd_watch },
};
#define S_N_COMMANDS (sizeof s_commands / sizeof s_commands[0])

static void
s_main_help (FILE *out)
{
    fprintf (out, "usage: kfctl COMMAND [ARGS] [OPTIONS]\n\n"
                  "KernelFoundry's command line: talks to kf-coordinator.\n\n"
                  "Commands:\n");
    for (size_t i = 0; i < S_N_COMMANDS; i++) {
        const char *nl = strchr (s_commands[i].summary, '\n');
        int len = nl ? (int) (nl - s_commands[i].summary)
                     : (int) strlen (s_commands[i].summary);
        fprintf (out, "  %-9s %.*s\n", s_commands[i].name, len,
                 s_commands[i].summary);
    }
    fprintf (out, "\n'kfctl COMMAND --help' shows a command's options.\n\n%s",
             s_global_help);
}

static void
s_command_help (const s_command_t *cmd)
{
    printf ("usage: %s\n\n%s\n\n%s", cmd->usage, cmd->summary, s_global_help);
}

/* Takes the value of option NAME: "--name=value" or "--name value". */
static int
s_value (int argc, char **argv, int *i, const char *arg, const char *name,
         const char **value)
{
    size_t n = strlen (name);
    if (strncmp (arg, name, n))
        return 0;
    if (arg[n] == '=') {
        *value = arg + n + 1;
        return 1;
    }
    if (arg[n] != '\0')
        return 0;
    if (*i + 1 >= argc) {
        fprintf (stderr, "kfctl: %s needs a value\n", name);
        return -1;
    }
    *value = argv[++*i];
    return 1;
}

/* Parses argv into ARGS. Returns 0, or an exit code after a message. */
static int
s_parse (int argc, char **argv, s_args_t *args, const s_command_t **cmd_p)
{
    memset (args, 0, sizeof *args);
    args->timeout_ms = S_DEFAULT_TIMEOUT_MS;
    *cmd_p = NULL;
    const char *timeout = NULL, *gens = NULL, *pop = NULL, *seed = NULL;
    const char *budget_tokens = NULL, *budget_usd = NULL, *tune = NULL;
    bool options_done = false;
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        if (options_done || arg[0] != '-' || !strcmp (arg, "-")) {
            if (!args->command)
                args->command = arg;
            else if (args->nargs < 4)
                args->args[args->nargs++] = arg;
            else {
                fprintf (stderr, "kfctl: too many arguments\n");
                return KF_CTL_EXIT_USAGE;
            }
            continue;
        }
        if (!strcmp (arg, "--")) {
            options_done = true;
            continue;
        }
        if (!strcmp (arg, "-h") || !strcmp (arg, "--help")) {
            args->help = true;
            continue;
        }
        if (!strcmp (arg, "--json")) {
            args->json = true;
            continue;
        }
        if (!strcmp (arg, "--wait")) {
            args->wait = true;
            continue;
        }
        if (!strcmp (arg, "--allow-degenerate")) {
            args->allow_degenerate = true;
            continue;
        }
        const char *value = NULL;
        int set = s_value (argc, argv, &i, arg, "--set", &value);
        if (set < 0)
            return KF_CTL_EXIT_USAGE;
        if (!strcmp (arg, "--no-memory")) {   /* the same as --set memory=false */
            set = 1;
            value = "memory=false";
        }
        if (set == 1) {
            if (args->n_sets == (int) (sizeof args->sets / sizeof args->sets[0])) {
                fprintf (stderr, "kfctl: --set: at most 16 of them (use --config FILE)\n");
                return KF_CTL_EXIT_USAGE;
            }
            args->sets[args->n_sets++] = value;
            continue;
        }
        struct {
            const char *name;
            const char **slot;
        } valued[] = {
            { "--endpoint", &args->endpoint },
            { "--status-endpoint", &args->status_endpoint },
            { "--event-endpoint", &args->event_endpoint },
            { "--timeout", &timeout },
            { "--target", &args->target },
            { "--generations", &gens },
            { "--population", &pop },
            { "--seed", &seed },
            { "--model", &args->model },
            { "--first-model", &args->first_model },
            { "--budget-tokens", &budget_tokens },
            { "--budget-usd", &budget_usd },
            { "--tune", &tune },
            { "--config", &args->config_file },
            { "--name", &args->task_name },
            { "--op", &args->op },
            { "--output", &args->output },
            { "-o", &args->output },
        };
        int hit = 0;
        for (size_t k = 0; k < sizeof valued / sizeof valued[0] && !hit; k++) {
            hit = s_value (argc, argv, &i, arg, valued[k].name, &value);
            if (hit == 1)
                *valued[k].slot = value;
        }
        if (hit < 0)
            return KF_CTL_EXIT_USAGE;
        if (!hit) {
            fprintf (stderr, "kfctl: unknown option '%s' (kfctl --help)\n",
                     arg);
            return KF_CTL_EXIT_USAGE;
        }
    }
    if (!args->command)
        return 0;
    for (size_t i = 0; i < S_N_COMMANDS; i++)
        if (!strcmp (args->command, s_commands[i].name))
            *cmd_p = &s_commands[i];
    const s_command_t *cmd = *cmd_p;
    if (!cmd) {
        fprintf (stderr, "kfctl: unknown command '%s' (kfctl --help)\n",
                 args->command);
        return KF_CTL_EXIT_USAGE;
    }
    if (args->help)
        return 0;
    if (!(cmd->options & S_OPT_SUBMIT)
        && (args->target || gens || pop || seed || args->wait || args->model
            || args->first_model || budget_tokens || budget_usd || tune
            || args->task_name || args->op || args->allow_degenerate
            || args->config_file || args->n_sets)) {
        fprintf (stderr, "kfctl: %s: --target, --generations, --population, "
                 "--seed, --model, --first-model, --budget-*, --name, --op,"
                 " --allow-degenerate, --config, --set and --wait belong to submit\n",
                 cmd->name);
        return KF_CTL_EXIT_USAGE;
    }
    if (!(cmd->options & S_OPT_OUTPUT) && args->output) {
        fprintf (stderr, "kfctl: %s: -o/--output belongs to best and report\n",
                 cmd->name);
        return KF_CTL_EXIT_USAGE;
    }
    if (args->nargs != cmd->nargs) {
        fprintf (stderr, "kfctl: %s: wrong number of arguments\nusage: %s\n",
                 cmd->name, cmd->usage);
        return KF_CTL_EXIT_USAGE;
    }
    if (timeout) {
        char *end = NULL;
        errno = 0;
        double seconds = strtod (timeout, &end);
        if (errno || !*timeout || *end || !(seconds >= 0.1 && seconds <= 3600)) {
            fprintf (stderr, "kfctl: --timeout: '%s' is not a number of "
                     "seconds between 0.1 and 3600\n", timeout);
            return KF_CTL_EXIT_USAGE;
        }
        args->timeout_ms = (int) (seconds * 1000);
    }
    if (gens) {
        if (s_parse_int (gens, 1, 100000, &args->generations)) {
            fprintf (stderr, "kfctl: --generations: '%s' is not an integer "
                     "in 1..100000\n", gens);
            return KF_CTL_EXIT_USAGE;
        }
        args->has_generations = true;
    }
    if (pop) {
        if (s_parse_int (pop, 1, 10000, &args->population)) {
            fprintf (stderr, "kfctl: --population: '%s' is not an integer "
                     "in 1..10000\n", pop);
            return KF_CTL_EXIT_USAGE;
        }
        args->has_population = true;
    }
    struct {
        const char *name, *text;
        double *slot;
    } budgets[] = { { "--budget-tokens", budget_tokens, &args->budget_tokens },
                    { "--budget-usd", budget_usd, &args->budget_usd } };
    for (size_t k = 0; k < 2; k++) {
        if (!budgets[k].text)
            continue;
        char *end = NULL;
        errno = 0;
        double v = strtod (budgets[k].text, &end);
        if (errno || end == budgets[k].text || *end || !(v > 0)) {
            fprintf (stderr, "kfctl: %s: '%s' is not a positive number\n", budgets[k].name,
                     budgets[k].text);
            return KF_CTL_EXIT_USAGE;
        }
        *budgets[k].slot = v;
    }
    if (tune && s_parse_int (tune, 1, 16, &args->tune)) {
        fprintf (stderr, "kfctl: --tune: '%s' is not an integer in 1..16\n", tune);
        return KF_CTL_EXIT_USAGE;
    }
    if (seed) {
        if (s_parse_int (seed, 0, LLONG_MAX, &args->seed)) {
            fprintf (stderr, "kfctl: --seed: '%s' is not a non-negative "
                     "integer\n", seed);
            return KF_CTL_EXIT_USAGE;
        }
        args->has_seed = true;
    }
    return 0;
}

int
main (int argc, char **argv)
{
    kf_log_init ("kfctl", false);
    s_args_t args;
    const s_command_t *cmd = NULL;
    int code = s_parse (argc, argv, &args, &cmd);
    if (code)
        return code;
    if (!cmd) {
        s_main_help (args.help ? stdout : stderr);
        return args.help ? KF_CTL_EXIT_OK : KF_CTL_EXIT_USAGE;
    }
    if (args.help) {
        s_command_help (cmd);
        return KF_CTL_EXIT_OK;
    }
    kf_ctl_catch_signals ();
    kf_ctl_endpoints_t ep;
    kf_ctl_endpoints_resolve (&ep, args.endpoint, args.status_endpoint,
                              args.event_endpoint);
    code = cmd->handler (&args, &ep);
    kf_ctl_endpoints_clear (&ep);
    /* Sockets are all closed by now; shutting czmq down here rather than
     * at exit keeps its context out of the leak report. */
    zsys_shutdown ();
    if (code == KF_CTL_EXIT_INTERRUPTED)
        fprintf (stderr, "kfctl: interrupted\n");
    return code;
}
