/*  kfctl_suite.c - kfctl suite submit|show|list and report --suite: many
 *  problems submitted as the runs of one suite, followed together, and
 *  shown with KernelBench's figures (kfctl_suite_stats.c computes them,
 *  kfctl_html_suite.c draws the page).
 *
 *  The suite is made by the SUBMIT of its first problem (with the paths
 *  left out and why), and every later SUBMIT names it, so the coordinator
 *  never holds a suite without a run and a restart keeps it like any run.
 */
#include "kf_str.h"
#include "kf_suggest.h"
#include "kfctl_cmd.h"
#include "kfctl_fields.h"
#include "kfctl_print.h"
#include "kfctl_suite.h"
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The most problems one suite takes (KernelBench's level 1 has 100). */
#define S_MAX_PROBLEMS 1000
/* Entries of one folder looked at, at most. */
#define S_MAX_ENTRIES 10000

/* ------------------------------------------------------------------ */
/* Finding the problems                                                 */

static bool
s_ends (const char *name, const char *suffix)
{
    size_t n = strlen (name), k = strlen (suffix);
    return n > k && !strcmp (name + n - k, suffix);
}

/* Whether TEXT can travel as a JSON string (UTF-8). */
static bool
s_utf8 (const char *text)
{
    json_t *t = json_string (text);
    json_decref (t);
    return t != NULL;
}

/* PATH with every byte past ASCII as '?', for a name that is no UTF-8. */
static char *
s_ascii (const char *path)
{
    char *copy = strdup (path);
    for (char *c = copy; c && *c; c++)
        if ((unsigned char) *c >= 0x80)
            *c = '?';
    return copy;
}

static void
s_skip (json_t *skipped, const char *path, const char *reason)
{
    char *shown = s_utf8 (path) ? strdup (path) : s_ascii (path);
    char *why = s_utf8 (reason) ? strdup (reason) : s_ascii (reason);
    if (shown && why)
        json_array_append_new (skipped, json_pack ("{s:s, s:s}", "path", shown, "reason", why));
    free (shown);
    free (why);
}

/* Whether DIR holds a task.json (a native task folder). */
static bool
s_task_folder (const char *dir)
{
    char *file = kf_strdupf ("%s/task.json", dir);
    struct stat st;
    bool yes = file && stat (file, &st) == 0 && S_ISREG (st.st_mode);
    free (file);
    return yes;
}

/* One path to look at: a problem file or task folder goes to PROBLEMS as
 * {path, file} (FILE: what is read), anything else to SKIPPED with its
 * reason. IN_DIR: PATH was found in a folder given, not named by the
 * user, so a nested folder without a task is skipped, not scanned. */
static void s_scan (const char *path, bool in_dir, json_t *problems, json_t *skipped);

static int
s_cmp (const void *a, const void *b)
{
    return strcmp (*(char *const *) a, *(char *const *) b);
}

static void
s_scan_dir (const char *path, json_t *problems, json_t *skipped)
{
    DIR *d = opendir (path);
    if (!d) {
        s_skip (skipped, path, strerror (errno));
        return;
    }
    char **names = NULL;
    size_t n = 0, cap = 0;
    struct dirent *e;
    while ((e = readdir (d)) && n < S_MAX_ENTRIES) {
        if (e->d_name[0] == '.')
            continue;   /* ., .., hidden files and editors' leftovers */
        if (n == cap) {
            cap = cap ? cap * 2 : 64;
            char **more = realloc (names, cap * sizeof *names);
            if (!more)
                break;
            names = more;
        }
        names[n] = strdup (e->d_name);
        if (names[n])
            n++;
    }
    if (n == S_MAX_ENTRIES && readdir (d))
        s_skip (skipped, path, "more than 10000 entries: only the first 10000 read were looked at");
    closedir (d);
    if (n)
        qsort (names, n, sizeof *names, s_cmp);
    size_t before = json_array_size (problems);
    for (size_t i = 0; i < n; i++) {
        char *child = kf_strdupf ("%s%s%s", path, s_ends (path, "/") ? "" : "/", names[i]);
        if (child)
            s_scan (child, true, problems, skipped);
        free (child);
        free (names[i]);
    }
    free (names);
    if (json_array_size (problems) == before)
        s_skip (skipped, path, "no problem in this folder (PyTorch .py files, task .json files"
                " or task folders holding task.json)");
}

static void
s_scan (const char *path, bool in_dir, json_t *problems, json_t *skipped)
{
    struct stat st;
    if (!s_utf8 (path)) {
        s_skip (skipped, path, "its name is not UTF-8 text");
        return;
    }
    if (stat (path, &st)) {
        s_skip (skipped, path, strerror (errno));
        return;
    }
    if (S_ISDIR (st.st_mode)) {
        if (s_task_folder (path)) {
            char *file = kf_strdupf ("%s%stask.json", path, s_ends (path, "/") ? "" : "/");
            json_array_append_new (problems, json_pack ("{s:s, s:s}", "path", path, "file",
                                                        file ? file : path));
            free (file);
        }
        else if (in_dir)
            s_skip (skipped, path, "a folder without task.json (only the folders given are"
                    " scanned)");
        else
            s_scan_dir (path, problems, skipped);
        return;
    }
    if (!S_ISREG (st.st_mode))
        s_skip (skipped, path, "not a regular file");
    else if (in_dir && !s_ends (path, ".py") && !s_ends (path, ".json"))
        s_skip (skipped, path, "not a problem: neither a .py problem nor a .json task file");
    else
        json_array_append_new (problems, json_pack ("{s:s, s:s}", "path", path, "file", path));
}

/* Reads each problem's task and run config (CONFIG, with the target its
 * language needs when none was chosen) into {path, task, config}; those
 * that fail move to SKIPPED with the reason (without the path it starts
 * with). */
static json_t *
s_load (const kf_ctl_args_t *args, json_t *config, json_t *found, json_t *skipped)
{
    kf_ctl_args_t one = *args;
    one.task_name = NULL;   /* --name names the suite; a problem is its file's stem */
    json_t *out = json_array ();
    size_t i;
    json_t *p;
    json_array_foreach (found, i, p) {
        const char *path = json_string_value (json_object_get (p, "path"));
        const char *file = json_string_value (json_object_get (p, "file"));
        char *err = NULL;
        json_t *task = kf_ctl_submit_task (&one, file, &err);
        json_t *own = task ? json_deep_copy (config) : NULL;
        if (task && (!own || kf_ctl_submit_target (task, own, path, &err))) {
            json_decref (task);
            task = NULL;
        }
        if (!task) {
            json_decref (own);
            const char *why = err ? err : "cannot be read";
            size_t n = strlen (file);
            if (!strncmp (why, file, n) && !strncmp (why + n, ": ", 2))
                why += n + 2;
            s_skip (skipped, path, why);
            free (err);
            continue;
        }
        json_array_append_new (out, json_pack ("{s:s, s:o, s:o}", "path", path, "task", task,
                                               "config", own));
    }
    return out;
}

/* ------------------------------------------------------------------ */
/* Submitting and following                                             */

static int s_show_suite (kf_ctl_args_t *args, kf_ctl_endpoints_t *ep, long long suite_id,
                         json_t **body_p);

/* Polls the suite until no run of it is running, saying how far it got
 * on stderr when that is a terminal. Returns 0, or an exit code. */
static int
s_wait (kf_ctl_args_t *args, kf_ctl_endpoints_t *ep, long long suite_id)
{
    bool tty = isatty (STDERR_FILENO);
    for (;;) {
        json_t *body = NULL;
        int code = s_show_suite (args, ep, suite_id, &body);
        if (code)
            return code;
        json_t *runs = json_object_get (body, "runs");
        size_t running = 0, i;
        json_t *run;
        json_array_foreach (runs, i, run)
            running += !strcmp (kf_ctl_str (run, "status"), "running");
        json_decref (body);
        if (tty)
            fprintf (stderr, "\rsuite %lld: %zu of %zu runs ended ", suite_id,
                     json_array_size (runs) - running, json_array_size (runs));
        if (!running) {
            if (tty)
                fputc ('\n', stderr);
            return 0;
        }
        if (kf_ctl_wait_readable (NULL, KF_CTL_POLL_MS) < 0)
            return KF_CTL_EXIT_INTERRUPTED;
    }
}

int
kf_ctl_suite_submit_files (kf_ctl_args_t *args, kf_ctl_endpoints_t *ep,
                           const char *const *paths, size_t n, const char *name,
                           long long *suite_id_p)
{
    if (suite_id_p)
        *suite_id_p = 0;
    char stem[101] = "suite";
    if (!name && n > 0) {
        /* The first path's last part: `suite submit KernelBench/level1/` is "level1". */
        size_t len = strlen (paths[0]);
        while (len > 1 && paths[0][len - 1] == '/')
            len--;
        const char *base = paths[0] + len;
        while (base > paths[0] && base[-1] != '/')
            base--;
        if (paths[0] + len > base)
            snprintf (stem, sizeof stem, "%.*s", (int) (paths[0] + len - base), base);
    }
    if (!name)
        name = stem;
    if (!*name || strlen (name) > 200) {
        kf_ctl_usage ("suite: --name must have 1..200 characters");
        return KF_CTL_EXIT_USAGE;
    }
    char *err = NULL;
    json_t *config = kf_ctl_submit_config (args, &err);
    if (!config) {
        kf_ctl_usage ("%s", err ? err : "bad run config");
        free (err);
        return KF_CTL_EXIT_USAGE;
    }
    json_t *found = json_array (), *skipped = json_array ();
    for (size_t i = 0; i < n; i++)
        s_scan (paths[i], false, found, skipped);
    json_t *problems = s_load (args, config, found, skipped);
    json_decref (found);
    size_t i;
    json_t *s;
    json_array_foreach (skipped, i, s)
        fprintf (stderr, "kfctl: skipped %s: %s\n", kf_ctl_str (s, "path"),
                 kf_ctl_str (s, "reason"));
    int code = KF_CTL_EXIT_OK;
    if (json_array_size (problems) == 0 || json_array_size (problems) > S_MAX_PROBLEMS) {
        kf_ctl_usage ("suite: %s (%zu found, %zu skipped; at most %d in a suite)",
                      json_array_size (problems) ? "too many problems" : "no problem to submit",
                      json_array_size (problems), json_array_size (skipped), S_MAX_PROBLEMS);
        code = KF_CTL_EXIT_USAGE;
    }
    else if (!ep->client)
        code = kf_ctl_no_endpoint ("client");
    long long suite_id = 0;
    json_t *runs = json_array (), *refused = json_array ();
    /* Later refusals go to stderr only: with --json, stdout keeps the one
     * object that says what was submitted. */
    kf_ctl_args_t quiet = *args;
    quiet.json = false;
    json_t *p;
    json_array_foreach (problems, i, p) {
        if (code)
            break;
        const char *path = kf_ctl_str (p, "path");
        json_t *body = json_pack ("{s:O, s:O, s:s}", "task", json_object_get (p, "task"),
                                  "config", json_object_get (p, "config"), "problem", path);
        if (suite_id)
            json_object_set_new (body, "suite_id", json_integer (suite_id));
        else
            json_object_set_new (body, "suite", json_pack ("{s:s, s:O}", "name",
                                                           name, "skipped",
                                                           skipped));
        kf_msg_t *reply = NULL;
        int rc = kf_ctl_call (ep->client, suite_id ? &quiet : args, "SUBMIT", body,
                              "SUBMITTED", &reply);
        if (rc && !suite_id) {
            code = rc;   /* the first is refused: the config is, or no suite exists */
            break;
        }
        if (rc == KF_CTL_EXIT_UNREACHABLE || rc == KF_CTL_EXIT_INTERRUPTED) {
            fprintf (stderr, "kfctl: suite %lld: %s and the problems after it were not"
                     " submitted\n", suite_id, path);
            code = rc;
            break;
        }
        if (rc) {
            fprintf (stderr, "kfctl: suite %lld: %s refused (above); the others go on\n",
                     suite_id, path);
            json_array_append_new (refused, json_pack ("{s:s}", "path", path));
            continue;
        }
        long long run_id = kf_msg_int (reply, "run_id", 0);
        if (!suite_id && (suite_id = kf_msg_int (reply, "suite_id", 0)) <= 0) {
            /* A coordinator without suites took it as a plain run: stop there. */
            fprintf (stderr, "kfctl: suite: the coordinator made run %lld but no suite (a"
                     " version without suites?)\n", run_id);
            kf_msg_destroy (&reply);
            code = KF_CTL_EXIT_ERROR;
            break;
        }
        json_array_append_new (runs, json_pack ("{s:s, s:I, s:I}", "path", path, "run_id",
                                                (json_int_t) run_id, "candidates",
                                                kf_msg_int (reply, "candidates", 0)));
        fprintf (stderr, "suite %lld: run %lld for %s\n", suite_id, run_id, path);
        size_t k;
        json_t *w;
        json_array_foreach (json_object_get (reply->body, "warnings"), k, w)
            if (json_is_string (w))   /* e.g. no worker can take its jobs */
                fprintf (stderr, "warning: run %lld: %s\n", run_id, json_string_value (w));
        kf_msg_destroy (&reply);
    }
    if (!code) {
        if (suite_id_p)
            *suite_id_p = suite_id;
        fprintf (stderr, "submitted suite %lld: %zu run%s, %zu skipped%s\n", suite_id,
                 json_array_size (runs), json_array_size (runs) == 1 ? "" : "s",
                 json_array_size (skipped),
                 json_array_size (refused) ? ", some refused by the coordinator" : "");
        if (args->wait)
            code = s_wait (args, ep, suite_id);
        if (!code && args->wait)
            code = s_show_suite (args, ep, suite_id, NULL);
        else if (!code && args->json) {
            json_t *out = json_pack ("{s:I, s:O, s:O, s:O}", "suite_id", (json_int_t) suite_id,
                                     "runs", runs, "skipped", skipped, "refused", refused);
            kf_ctl_print_json (out);
            json_decref (out);
        }
        else if (!code)
            printf ("%lld\n", suite_id);
        if (!code && json_array_size (refused))
            code = KF_CTL_EXIT_ERROR;
    }
    json_decref (runs);
    json_decref (refused);
    json_decref (problems);
    json_decref (skipped);
    json_decref (config);
    return code;
}

/* ------------------------------------------------------------------ */
/* Showing                                                              */

/* "2.31x", or "-" when V < 0. */
static const char *
s_x (double v, char *buf, size_t size)
{
    if (v < 0)
        snprintf (buf, size, "-");
    else
        snprintf (buf, size, "%.2fx", v);
    return buf;
}

static void
s_print_figures (FILE *out, json_t *figures)
{
    long long n = kf_ctl_int (figures, "problems", 0);
    fprintf (out, "\n%lld of %lld problem%s correct", kf_ctl_int (figures, "correct", 0), n,
             n == 1 ? "" : "s");
    long long running = kf_ctl_int (figures, "running", 0);
    if (running)
        fprintf (out, "; %lld run%s still running: the figures are so far", running,
                 running == 1 ? "" : "s");
    fprintf (out, "\n%-18s %7s %7s %8s %7s %8s\n", "BASELINE", "fast_0", "fast_1", "fast_1.5",
             "fast_2", "geomean");
    static const char *keys[] = { "fast_0", "fast_1", "fast_1.5", "fast_2" };
    for (int b = 0; b < KF_CTL_SUITE_N_BASELINES; b++) {
        json_t *obj = json_object_get (figures, kf_ctl_suite_baseline_name (b));
        const char *title = b == KF_CTL_SUITE_EAGER ? "PyTorch eager" : "torch.compile";
        long long with = kf_ctl_int (obj, "with_baseline", 0);
        if (!with) {
            fprintf (out, "%-18s n/a: no problem has this baseline%s\n", title,
                     b == KF_CTL_SUITE_EAGER ? " (native tasks are timed against their own"
                     " reference, not PyTorch)" : "");
            continue;
        }
        fprintf (out, "%-18s", title);
        for (size_t k = 0; k < 4; k++) {
            double v = 0;
            if (kf_ctl_real (obj, keys[k], &v))
                fprintf (out, " %*.2f", k == 2 ? 8 : 7, v);
            else
                fprintf (out, " %*s", k == 2 ? 8 : 7, "n/a");
        }
        double g = -1;
        char buf[32];
        if (!kf_ctl_real (obj, "geomean", &g))
            g = -1;
        fprintf (out, " %8s", g < 0 ? "n/a" : s_x (g, buf, sizeof buf));
        if (with < n)
            fprintf (out, "  (%lld of %lld problems have it)", with, n);
        fputc ('\n', out);
    }
    fprintf (out, "fast_p: the share of all problems correct and more than p times faster"
             " than the baseline; geomean over the correct ones\n");
}

/* The per-problem rows of the --json output: what the table shows. */
static json_t *
s_problems_json (json_t *runs)
{
    json_t *out = json_array ();
    size_t i;
    json_t *run;
    json_array_foreach (runs, i, run) {
        kf_ctl_suite_problem_t p;
        kf_ctl_suite_problem_of (run, &p);
        /* O?: a field another version leaves out is null, not a lost row. */
        json_t *row = json_pack ("{s:O?, s:O?, s:O?, s:O?, s:b, s:O?, s:O?, s:O?, s:O?, s:O?,"
                                 " s:O?}",
                                 "run_id", json_object_get (run, "id"), "problem",
                                 json_object_get (run, "suite_problem"), "task_name",
                                 json_object_get (run, "task_name"), "status",
                                 json_object_get (run, "status"), "correct", p.correct,
                                 "best_speedup", json_object_get (run, "best_speedup"),
                                 "ref_eager_ns", json_object_get (run, "ref_eager_ns"),
                                 "ref_compiled_ns", json_object_get (run, "ref_compiled_ns"),
                                 "candidates", json_object_get (run, "done"), "total",
                                 json_object_get (run, "total"), "reason",
                                 json_object_get (run, "reason"));
        if (!row)
            continue;
        for (int b = 0; b < KF_CTL_SUITE_N_BASELINES; b++) {
            char key[32];
            snprintf (key, sizeof key, "speedup_%s", kf_ctl_suite_baseline_name (b));
            json_object_set_new (row, key, p.correct && p.speedup[b] >= 0
                                               ? json_real (p.speedup[b]) : json_null ());
        }
        json_array_append_new (out, row);
    }
    return out;
}

static void
s_print_suite (FILE *out, json_t *body, json_t *figures)
{
    json_t *suite = json_object_get (body, "suite");
    json_t *runs = json_object_get (body, "runs");
    fprintf (out, "suite %lld \"%s\", created %s: %zu problem%s\n", kf_ctl_int (suite, "id", 0),
             kf_ctl_str (suite, "name"), kf_ctl_str (suite, "created_at"),
             json_array_size (runs), json_array_size (runs) == 1 ? "" : "s");
    fprintf (out, "%6s  %-28s %-9s %-7s %9s %9s %10s %11s\n", "RUN", "PROBLEM", "STATUS",
             "CORRECT", "SPEEDUP", "VS EAGER", "VS COMPILE", "CANDIDATES");
    size_t i;
    json_t *run;
    json_array_foreach (runs, i, run) {
        kf_ctl_suite_problem_t p;
        kf_ctl_suite_problem_of (run, &p);
        double best = -1;
        if (!p.correct || !kf_ctl_real (run, "best_speedup", &best))
            best = -1;
        const char *problem = kf_ctl_str (run, "suite_problem");
        size_t len = strlen (problem);
        char a[32], b[32], c[32], spent[48];
        snprintf (spent, sizeof spent, "%lld/%lld", kf_ctl_int (run, "done", 0),
                  kf_ctl_int (run, "total", 0));
        fprintf (out, "%6lld  %-28s %-9s %-7s %9s %9s %10s %11s\n", kf_ctl_int (run, "id", 0),
                 len > 28 ? problem + len - 28 : problem, kf_ctl_str (run, "status"),
                 p.correct ? "yes" : "no", s_x (best, a, sizeof a),
                 s_x (p.correct ? p.speedup[KF_CTL_SUITE_EAGER] : -1, b, sizeof b),
                 s_x (p.correct ? p.speedup[KF_CTL_SUITE_COMPILED] : -1, c, sizeof c), spent);
    }
    json_array_foreach (runs, i, run)
        if (json_is_string (json_object_get (run, "reason"))
            && strcmp (kf_ctl_str (run, "status"), "done"))
            fprintf (out, "run %lld %s: %s\n", kf_ctl_int (run, "id", 0),
                     kf_ctl_str (run, "status"), kf_ctl_str (run, "reason"));
    json_t *s;
    json_array_foreach (json_object_get (suite, "skipped"), i, s)
        fprintf (out, "skipped %s: %s\n", kf_ctl_str (s, "path"), kf_ctl_str (s, "reason"));
    fprintf (out, "SPEEDUP is each run's own figure (a PyTorch problem's against eager, a"
             " native task's against its reference)\n");
    s_print_figures (out, figures);
}

/* Asks for the suite. BODY_P: the reply body goes there (caller's) and
 * nothing is printed; else it is printed. Errors are said as every
 * request's are (under --json also on stdout). */
static int
s_show_suite (kf_ctl_args_t *args, kf_ctl_endpoints_t *ep, long long suite_id,
              json_t **body_p)
{
    if (!ep->client)
        return kf_ctl_no_endpoint ("client");
    kf_msg_t *reply = NULL;
    int code = kf_ctl_call (ep->client, args, "SUITE",
                            json_pack ("{s:I}", "suite_id", (json_int_t) suite_id), "SUITE",
                            &reply);
    if (code)
        return code;
    if (body_p) {
        *body_p = json_incref (reply->body);
        kf_msg_destroy (&reply);
        return 0;
    }
    json_t *runs = json_object_get (reply->body, "runs");
    json_t *figures = kf_ctl_suite_figures (runs);
    if (args->json) {
        json_t *out = json_pack ("{s:O?, s:o, s:O}", "suite", json_object_get (reply->body,
                                                                                "suite"),
                                 "problems", s_problems_json (runs), "figures", figures);
        kf_ctl_print_json (out);
        json_decref (out);
    }
    else
        s_print_suite (stdout, reply->body, figures);
    json_decref (figures);
    size_t i;
    json_t *run;
    json_array_foreach (runs, i, run)
        if (strcmp (kf_ctl_str (run, "status"), "done"))
            code = KF_CTL_EXIT_ERROR;   /* with --wait: not every run ended done */
    kf_msg_destroy (&reply);
    return args->wait ? code : 0;
}

static void
s_print_list (FILE *out, json_t *suites)
{
    if (!json_array_size (suites)) {
        fprintf (out, "no suites yet (kfctl suite submit DIR|FILE...)\n");
        return;
    }
    fprintf (out, "%6s  %-24s %5s %8s %5s %7s %10s %8s  %s\n", "ID", "NAME", "RUNS", "RUNNING",
             "DONE", "FAILED", "CANCELLED", "CORRECT", "CREATED");
    size_t i;
    json_t *s;
    json_array_foreach (suites, i, s)
        fprintf (out, "%6lld  %-24.24s %5lld %8lld %5lld %7lld %10lld %8lld  %s\n",
                 kf_ctl_int (s, "id", 0), kf_ctl_str (s, "name"), kf_ctl_int (s, "runs", 0),
                 kf_ctl_int (s, "running", 0), kf_ctl_int (s, "done", 0),
                 kf_ctl_int (s, "failed", 0), kf_ctl_int (s, "cancelled", 0),
                 kf_ctl_int (s, "correct", 0), kf_ctl_str (s, "created_at"));
}

/* ID as a suite id, or a usage message. */
static int
s_suite_id (const char *what, const char *text, long long *id)
{
    if (text && kf_ctl_parse_int (text, 1, LLONG_MAX, id) == 0)
        return 0;
    kf_ctl_usage ("%s: ID must be a suite id (a positive integer), not '%s'", what,
                  text ? text : "");
    return KF_CTL_EXIT_USAGE;
}

int
kf_ctl_cmd_suite (kf_ctl_args_t *args, kf_ctl_endpoints_t *ep)
{
    const char *sub = args->args[0];
    bool submit = !strcmp (sub, "submit");
    if (!submit && (args->target || args->has_generations || args->has_population
                    || args->has_seed || args->model || args->first_model || args->tune
                    || args->budget_tokens > 0 || args->budget_usd > 0 || args->task_name
                    || args->op || args->allow_degenerate || args->config_file
                    || args->n_sets || args->wait)) {
        kf_ctl_usage ("suite %s: submit's options belong to suite submit", sub);
        return KF_CTL_EXIT_USAGE;
    }
    if (submit) {
        if (args->nargs < 2) {
            kf_ctl_usage ("suite submit: give at least one DIR or FILE");
            return KF_CTL_EXIT_USAGE;
        }
        return kf_ctl_suite_submit_files (args, ep, args->args + 1, (size_t) args->nargs - 1,
                                          args->task_name, NULL);
    }
    if (!strcmp (sub, "show")) {
        long long id = 0;
        if (args->nargs != 2) {
            kf_ctl_usage ("suite show: give one suite ID");
            return KF_CTL_EXIT_USAGE;
        }
        int code = s_suite_id ("suite show", args->args[1], &id);
        return code ? code : s_show_suite (args, ep, id, NULL);
    }
    if (!strcmp (sub, "list")) {
        if (args->nargs != 1) {
            kf_ctl_usage ("suite list takes no arguments");
            return KF_CTL_EXIT_USAGE;
        }
        return kf_ctl_query (args, ep->client, "client", "SUITES", "suites", s_print_list);
    }
    static const char *subs[] = { "submit", "show", "list" };
    const char *near = kf_suggest (sub, subs, 3);
    if (near)
        kf_ctl_usage ("suite: unknown subcommand '%s'; did you mean '%s'? (submit, show or"
                      " list)", sub, near);
    else
        kf_ctl_usage ("suite: unknown subcommand '%s' (submit, show or list)", sub);
    return KF_CTL_EXIT_USAGE;
}

int
kf_ctl_report_suite (kf_ctl_args_t *args, kf_ctl_endpoints_t *ep)
{
    long long id = 0;
    int code = s_suite_id ("report --suite", args->suite, &id);
    if (code)
        return code;
    if (!args->output || !s_ends (args->output, ".html")) {
        kf_ctl_usage ("report --suite: -o FILE.html is needed (a suite's report is a page)");
        return KF_CTL_EXIT_USAGE;
    }
    json_t *body = NULL;
    code = s_show_suite (args, ep, id, &body);
    if (code)
        return code;
    json_t *figures = kf_ctl_suite_figures (json_object_get (body, "runs"));
    char *err = NULL;
    int rc = figures ? kf_ctl_html_suite (body, figures, args->output, &err) : -1;
    json_decref (figures);
    json_decref (body);
    if (rc) {
        fprintf (stderr, "kfctl: report: %s\n", err ? err : "out of memory");
        free (err);
        return KF_CTL_EXIT_ERROR;
    }
    kf_ctl_print_html_written (args, "suite_id", id);
    return KF_CTL_EXIT_OK;
}
