/*  kfctl_validate.c - `kfctl validate TASK|PROBLEM.py [--target T]
 *  [--json]` (docs/kfctl.md, "validate"): the task's reference built and
 *  run once on this machine, before anything is queued.
 *
 *  A task whose reference does not build, refuses its shapes or dtypes,
 *  or crashes would otherwise be found by the cluster, after a submit,
 *  as a failed run. Here the same code finds it: kfctl loads the task as
 *  submit does (kf_ctl_submit_task), then runs the workers' standalone
 *  modes, found beside kfctl or on PATH: `kf-compile-worker --build
 *  --reference` (the compile handler and toolchains a compile worker
 *  uses) and `kf-exec-worker --eval` with the reference probe a
 *  coordinator sends at submission (a native task) or the reference job
 *  of a PyTorch problem. Nothing is copied from either worker; kfctl only
 *  reads the JSON they print and says it in a user's words: the shapes
 *  and dtypes, the time per call, degenerate outputs, and a refusal
 *  (kf_refusal, docs/kernel-contract.md) or compiler error with the
 *  user's own file name.
 */
#include "kf_file.h"
#include "kf_json.h"
#include "kf_rename.h"
#include "kf_str.h"
#include "kf_subproc.h"
#include "kfctl_cmd.h"
#include "kfctl_python.h"
#include "kfctl_text.h"
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <libgen.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define s_say(code, ...) kf_ctl_fail ("validate", (code), __VA_ARGS__)

/* The workers' own limits apply inside; these only bound a wedged one. */
#define S_BUILD_LIMIT_S 600
#define S_RUN_LIMIT_S 900
/* Lines of a compiler log or traceback shown; the rest is counted. */
#define S_LOG_LINES 30

/* A task that fails validation: MESSAGE on stderr, and STAGE and the
 * message in REPORT (what --json prints, one object either way). */
static void __attribute__ ((format (printf, 3, 4)))
s_failed (json_t *report, const char *stage, const char *fmt, ...)
{
    char text[8192];
    va_list ap;
    va_start (ap, fmt);
    vsnprintf (text, sizeof text, fmt, ap);
    va_end (ap);
    fprintf (stderr, "kfctl: validate: %s\n", text);
    json_object_set_new (report, "stage", json_string (stage));
    json_object_set_new (report, "error", json_string (text));
}

/* The program NAME beside this kfctl, else NAME itself (found on PATH). */
static char *
s_worker (const char *name)
{
    char self[PATH_MAX];
    ssize_t n = readlink ("/proc/self/exe", self, sizeof self - 1);
    if (n > 0) {
        self[n] = 0;
        char *path = kf_strdupf ("%s/%s", dirname (self), name);
        if (path && access (path, X_OK) == 0)
            return path;
        free (path);
    }
    return strdup (name);
}

/* Runs WORKER with ARGS (NULL-ended) in DIR, its stdout into DIR/OUT.
 * Returns the JSON it printed (caller's) or NULL, *RC its exit code and
 * *LOG what it said on stderr (caller frees). */
static json_t *
s_run_worker (const char *worker, const char *const *args, const char *dir, const char *out,
              double limit_s, int *rc, char **log)
{
    char *argv[24];
    int n = 0;
    argv[n++] = "/bin/sh";
    argv[n++] = "-c";
    char script[64];
    snprintf (script, sizeof script, "exec \"$0\" \"$@\" >%s", out);
    argv[n++] = script;
    char *path = s_worker (worker);
    argv[n++] = path;
    for (int i = 0; args[i] && n < 23; i++)
        argv[n++] = (char *) args[i];
    argv[n] = NULL;
    *rc = kf_ctl_python_run (argv, dir, limit_s, log);
    free (path);
    char *file = kf_strdupf ("%s/%s", dir, out);
    json_t *reply = file ? json_load_file (file, 0, NULL) : NULL;
    free (file);
    return reply;
}

/* The name the user's reference file had ("reference.c"), from the task
 * file's reference.file, or NULL (a PyTorch problem, an inline source). */
static char *
s_reference_file (const char *path)
{
    struct stat st;
    char *file = stat (path, &st) == 0 && S_ISDIR (st.st_mode)
                     ? kf_strdupf ("%s/task.json", path) : strdup (path);
    json_t *raw = file ? json_load_file (file, 0, NULL) : NULL;
    free (file);
    const char *name = json_string_value (
        json_object_get (json_object_get (raw, "reference"), "file"));
    char *copy = name ? strdup (name) : NULL;
    char *base = copy ? strdup (basename (copy)) : NULL;
    free (copy);
    json_decref (raw);
    return base;
}

/* Each tensor spec of LIST as "name dtype [d0, d1]" lines on OUT. */
static void
s_print_specs (FILE *out, const char *title, json_t *list)
{
    size_t i;
    json_t *t;
    json_array_foreach (list, i, t) {
        char shape[256];
        kf_ctl_text_shape (json_object_get (t, "shape"), shape, sizeof shape);
        fprintf (out, "  %-8s %-12s %-5s %s\n", i ? "" : title, kf_jstr (t, "name"),
                kf_jstr (t, "dtype"), shape);
    }
}

/* Writes JOB (taken), WHAT's job, as DIR/FILE for the exec worker, and
 * BACKEND (S_BACKEND bytes) the backend it runs on: TARGET's
 * part before ':'. Returns 0, or an exit code after saying what failed. */
#define S_BACKEND 32
static int
s_job_file (json_t *job, const char *what, const char *dir, const char *file,
            const char *target, char *backend)
{
    char *text = job ? json_dumps (job, 0) : NULL;
    json_decref (job);
    bool failed = !text || kf_file_write (dir, file, text, strlen (text));
    free (text);
    if (failed) {
        s_say ("error", "cannot write %s in %s\n", what, dir);
        return KF_CTL_EXIT_ERROR;
    }
    snprintf (backend, S_BACKEND, "%.*s", (int) strcspn (target, ":"), target);
    return 0;
}

/* A native task's reference: built, then probed. Fills REPORT; returns
 * an exit code after saying what failed. */
static int
s_native (json_t *task, const char *path, const char *target, const char *dir, json_t *report)
{
    json_t *ref = json_object_get (task, "reference");
    const char *lang = kf_jstr (ref, "language");
    const char *source = kf_jstr (ref, "source");
    char *user = s_reference_file (path);
    const char *own = kf_rename_worker_name (lang);
    char mine[96];
    snprintf (mine, sizeof mine, "%.90s", user ? user : own);
    free (user);
    /* The messages name the file as the user did (the task's reference
     * path: "examples/tasks/x/reference.c"). */
    const char *named_as = *kf_jstr (ref, "path") ? kf_jstr (ref, "path") : mine;
    if (kf_file_write (dir, mine, source, strlen (source))) {
        s_say ("error", "cannot write %s/%s: %s\n", dir, mine, strerror (errno));
        return KF_CTL_EXIT_ERROR;
    }
    json_object_set_new (report, "reference_file", json_string (mine));
    json_object_set (report, "inputs", json_object_get (task, "inputs"));
    json_object_set (report, "outputs", json_object_get (task, "outputs"));
    int rc;
    char *log = NULL;
    const char *build[] = { "--cache-dir", "off", "--build", mine, "--reference",
                            "--language", lang, "--target", target, "-o", "reference.so",
                            NULL };
    json_t *built = s_run_worker ("kf-compile-worker", build, dir, "build.json",
                                  S_BUILD_LIMIT_S, &rc, &log);
    json_t *result = json_object_get (built, "result");
    int code = KF_CTL_EXIT_OK;
    if (!json_is_true (json_object_get (result, "compiled"))) {
        /* The compiler's words, with the user's file name in them. */
        const char *why = kf_jstr (result, "log");
        if (!*why)
            why = kf_jstr (built, "error");
        if (!*why)
            why = log && *log ? log : "kf-compile-worker printed nothing";
        char *named = kf_rename_file (why, own, named_as);
        char *cut = kf_ctl_text_lines (named ? named : why, S_LOG_LINES, false);
        s_failed (report, "build", "the reference (%s) does not build (%s):\n%s", named_as,
                  kf_jstr (result, "toolchain")[0] ? kf_jstr (result, "toolchain") : lang,
                  cut ? cut : why);
        free (named);
        free (cut);
        code = KF_CTL_EXIT_ERROR;
    }
    else {
        json_object_set_new (report, "toolchain", json_string (kf_jstr (result, "toolchain")));
        json_object_set_new (report, "build_s", json_real (kf_jnum (result, "wall_s", 0)));
    }
    json_decref (built);
    free (log);
    log = NULL;
    if (code)
        return code;

    json_t *job = json_pack ("{s:s, s:{s:O, s:b, s:i}, s:[s]}", "kind", "evaluate", "payload",
                             "task", task, "probe", 1, "seed", 1, "frames", "reference.so");
    char backend[S_BACKEND];
    if (s_job_file (job, "the probe's job", dir, "probe.json", target, backend))
        return KF_CTL_EXIT_ERROR;
    const char *eval[] = { "--backend", backend, "--eval", "probe.json", NULL };
    json_t *probed = s_run_worker ("kf-exec-worker", eval, dir, "probed.json", S_RUN_LIMIT_S,
                                   &rc, &log);
    result = json_object_get (probed, "result");
    if (!json_is_true (json_object_get (probed, "ok"))) {
        const char *why = kf_jstr (probed, "error");
        if (!*why)
            why = log && *log ? log : "kf-exec-worker printed nothing";
        /* "reference failed: reference refused on set 0: ..." said once. */
        static const char failed[] = "reference failed: ", refused[] = "reference refused on ";
        if (!strncmp (why, failed, sizeof failed - 1))
            why += sizeof failed - 1;
        char *shown = kf_ctl_text_lines (why, S_LOG_LINES, false);
        const char *text = shown ? shown : why;
        if (!strncmp (text, refused, sizeof refused - 1))
            s_failed (report, "run", "the reference (%s) refused on %s", named_as,
                      text + sizeof refused - 1);
        else
            s_failed (report, "run", "the reference (%s) does not run: %s", named_as, text);
        free (shown);
        code = KF_CTL_EXIT_ERROR;
    }
    else {
        json_object_set_new (report, "reference_ms", json_real (kf_jnum (result, "reference_ms", 0)));
        json_object_set_new (report, "sets", json_integer (kf_jint (result, "sets")));
        json_object_set_new (report, "cases", json_integer (kf_jint (result, "cases")));
        json_object_set (report, "degenerate", json_object_get (result, "degenerate"));
    }
    json_decref (probed);
    free (log);
    return code;
}

/* A PyTorch problem: its reference job, eager only. */
static int
s_pytorch (json_t *task, const char *path, const char *target, const char *dir, json_t *report)
{
    char *copy = strdup (path), name[96];
    snprintf (name, sizeof name, "%.90s", copy ? basename (copy) : "problem.py");
    free (copy);
    json_object_set_new (report, "reference_file", json_string (name));
    json_t *job = json_pack ("{s:s, s:{s:O, s:b}}", "kind", "reference", "payload", "source",
                             json_object_get (json_object_get (task, "reference"), "source"),
                             "compile", 0);
    if (job && strncmp (target, "cuda", 4) == 0)
        json_object_set_new (json_object_get (job, "payload"), "device", json_string ("cuda"));
    char backend[S_BACKEND];
    if (s_job_file (job, "the reference job", dir, "reference.json", target, backend))
        return KF_CTL_EXIT_ERROR;
    const char *eval[] = { "--backend", backend, "--eval", "reference.json",
                           "--reference-cache-dir", "cache", NULL };
    int rc;
    char *log = NULL;
    json_t *ran = s_run_worker ("kf-exec-worker", eval, dir, "ran.json", S_RUN_LIMIT_S, &rc,
                                &log);
    json_t *result = json_object_get (ran, "result");
    int code = KF_CTL_EXIT_OK;
    if (!json_is_true (json_object_get (ran, "ok"))) {
        const char *why = kf_jstr (ran, "error");
        if (!*why)
            why = log && *log ? log : "kf-exec-worker printed nothing";
        /* The headline ("problem raised in forward: ValueError: ...") and
         * the traceback's last lines, where the problem's frames are. */
        const char *user = kf_jstr (json_object_get (task, "reference"), "path");
        char *named = *user ? kf_rename_reference (task, why)
                            : kf_rename_file (why, kf_rename_worker_name ("pytorch"), name);
        const char *all = named ? named : why;
        size_t head = strcspn (all, "\n");
        char *tail = all[head] ? kf_ctl_text_lines (all + head + 1, S_LOG_LINES, true) : NULL;
        char *shown = tail ? kf_strdupf ("%.*s\n%s", (int) head, all, tail)
                           : kf_ctl_text_lines (all, S_LOG_LINES, true);
        free (tail);
        s_failed (report, "run", "the problem (%s) does not run: %s", *user ? user : name,
                  shown ? shown : why);
        free (named);
        free (shown);
        code = KF_CTL_EXIT_ERROR;
    }
    else {
        json_t *in = json_array (), *out = json_array ();
        size_t i;
        json_t *t;
        json_array_foreach (json_object_get (result, "tensors"), i, t) {
            const char *role = kf_jstr (t, "role");
            if (kf_jint (t, "set") != 0 || !json_is_integer (json_object_get (t, "set")))
                continue;
            json_t *spec = json_pack ("{s:s, s:s, s:O}", "name", kf_jstr (t, "name"), "dtype",
                                      kf_jstr (t, "dtype"), "shape", json_object_get (t, "shape"));
            json_array_append_new (!strcmp (role, "input") ? in : out, spec);
        }
        json_t *eager = json_object_get (json_object_get (result, "timing"), "eager");
        json_object_set_new (report, "reference_ms",
                             json_real (kf_jnum (eager, "median_ns", 0) / 1e6));
        json_object_set_new (report, "sets", json_integer (kf_jint (result, "sets")));
        json_object_set (report, "degenerate", json_object_get (result, "degenerate"));
        json_object_set_new (report, "inputs", in);
        json_object_set_new (report, "outputs", out);
        json_object_set_new (report, "torch", json_string (kf_jstr (result, "torch_version")));
    }
    json_decref (ran);
    free (log);
    return code;
}

static void
s_print (json_t *r)
{
    printf ("%s: the reference %s %s\n", kf_jstr (r, "task"), kf_jstr (r, "reference_file"),
            json_object_get (r, "toolchain") ? "builds and runs" : "runs");
    printf ("  target   %s (%s)\n", kf_jstr (r, "target"),
            json_object_get (r, "torch") ? "PyTorch eager" : kf_jstr (r, "toolchain"));
    s_print_specs (stdout, "inputs", json_object_get (r, "inputs"));
    s_print_specs (stdout, "outputs", json_object_get (r, "outputs"));
    double ms = kf_jnum (r, "reference_ms", 0);
    printf ("  time     %.1f us per call (%s over %lld input sets)\n", ms * 1000,
            json_object_get (r, "torch") ? "median" : "mean", (long long) kf_jint (r, "sets"));
    json_t *degen = json_object_get (r, "degenerate");
    if (json_array_size (degen) == 0)
        printf ("  outputs  not degenerate\n");
    size_t i;
    json_t *d;
    json_array_foreach (degen, i, d)
        printf ("  degenerate: %s\n", json_string_value (d));
    if (json_array_size (degen))
        printf ("  (a submit fails this task unless --allow-degenerate)\n");
}

int
kf_ctl_cmd_validate (kf_ctl_args_t *args, kf_ctl_endpoints_t *ep)
{
    (void) ep;
    const char *path = args->args[0];
    char *err = NULL;
    json_t *task = kf_ctl_submit_task (args, path, &err);
    if (!task) {
        kf_ctl_usage ("%s\n", err ? err : "out of memory");
        free (err);
        return KF_CTL_EXIT_USAGE;
    }
    json_t *config = json_object ();
    if (args->target)
        json_object_set_new (config, "target", json_string (args->target));
    else if (kf_ctl_submit_target (task, config, path, &err)) {
        kf_ctl_usage ("%s\n", err);
        free (err);
        json_decref (config);
        json_decref (task);
        return KF_CTL_EXIT_USAGE;
    }
    const char *target = json_object_get (config, "target") ? kf_jstr (config, "target")
                                                            : "host";
    kf_subproc_limits_t limits;
    kf_subproc_limits_default (&limits);
    char *dir = kf_subproc_mkdtemp (&limits);
    if (!dir) {
        s_say ("error", "cannot make a temporary folder: %s\n", strerror (errno));
        json_decref (config);
        json_decref (task);
        return KF_CTL_EXIT_ERROR;
    }
    json_t *report = json_pack ("{s:s, s:s, s:s}", "task", kf_jstr (task, "name"), "path", path,
                                "target", target);
    const char *lang = kf_jstr (json_object_get (task, "reference"), "language");
    int code = !strcmp (lang, "pytorch") ? s_pytorch (task, path, target, dir, report)
                                         : s_native (task, path, target, dir, report);
    json_object_set_new (report, "ok", json_boolean (code == KF_CTL_EXIT_OK));
    /* A failure kfctl met itself (s_say) has printed its JSON already. */
    if (args->json && (code == KF_CTL_EXIT_OK || json_object_get (report, "stage")))
        kf_ctl_print_json (report);
    else if (code == KF_CTL_EXIT_OK)
        s_print (report);
    else if (json_object_get (report, "inputs")) {
        /* What the reference was given, beside why it failed. */
        fprintf (stderr, "the task gives it:\n");
        s_print_specs (stderr, "inputs", json_object_get (report, "inputs"));
        s_print_specs (stderr, "outputs", json_object_get (report, "outputs"));
    }
    kf_subproc_rmtree (dir);
    free (dir);
    json_decref (report);
    json_decref (config);
    json_decref (task);
    return code;
}
