/*  kfctl_profile_model.c - `kfctl profile-model MODEL.py [--top N]
 *  [--out DIR] [--submit N]` (docs/kfctl.md, "profile-model").
 *
 *  From a whole model to tasks: the model runs under torch.profiler, its
 *  operators are ranked by self time (each one's share of the total is
 *  the most that replacing it could save, Amdahl's bound), and each of
 *  the top N becomes a KernelBench-format problem that calls that aten
 *  operator on tensors of the shapes and dtypes the model gave it. The
 *  profiling is kfctl/py/profile_model.py, embedded here.
 *
 *  It runs on an exec worker of the target (--target, default host), as
 *  a `model_profile` job (exec-worker/kf_model_profile.c) that kfctl
 *  queues with PROFILE_MODEL and follows with PROFILE_STATE: the model is
 *  profiled where the kernels will run, with the torch found there. With
 *  --local it runs on this machine instead, with the Python the exec
 *  worker would pick (kfctl_python.h) and the user's environment: the
 *  user's own file, on the user's own machine, unsandboxed. The
 *  profiler is common/kf_profile_model.py, embedded in both. With
 *  --submit the problems go to the coordinator as one suite
 *  (kfctl_suite.h).
 */
#include "kf_file.h"
#include "kf_json.h"
#include "kfctl_client.h"
#include "kfctl_cmd.h"
#include "kfctl_export.h"
#include "kfctl_python.h"
#include "kfctl_suite.h"
#include "kf_subproc.h"
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <libgen.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define s_say(code, ...) kf_ctl_fail ("profile-model", (code), __VA_ARGS__)

extern const char kf_profile_model_py[];

#define S_MODEL_MAX (1 << 20)
#define S_RESULT_MAX (64 << 20)
#define S_TOP_MAX 50

/* Whether TEXT (SIZE bytes) looks like a KernelBench level-3 file. */
static const char *
s_model_refusal (const char *text, size_t size)
{
    if (memchr (text, 0, size))
        return "it holds NUL bytes: not a Python source";
    if (!strstr (text, "class Model"))
        return "no 'class Model' in it";
    if (!strstr (text, "def get_inputs("))
        return "no 'def get_inputs()' in it";
    if (!strstr (text, "def get_init_inputs("))
        return "no 'def get_init_inputs()' in it";
    return NULL;
}

/* "01_addmm.py" for rank 1 of aten::addmm. */
static void
s_problem_name (int rank, const char *op, char *buf, size_t size)
{
    const char *colon = strrchr (op, ':');
    const char *base = colon ? colon + 1 : op;
    size_t n = (size_t) snprintf (buf, size, "%02d_", rank);
    for (const char *p = base; *p && n + 4 < size && n < 64; p++)
        buf[n++] = isalnum ((unsigned char) *p) ? *p : '_';
    snprintf (buf + n, size - n, ".py");
}

/* "[512] [64,256] f32" from an operator's shapes and dtypes. */
static void
s_inputs_text (json_t *op, char *buf, size_t size)
{
    size_t n = 0, i, j;
    json_t *shape, *d;
    buf[0] = 0;
    json_array_foreach (json_object_get (op, "shapes"), i, shape) {
        n += (size_t) snprintf (buf + n, n < size ? size - n : 0, "%s[", i ? " " : "");
        json_array_foreach (shape, j, d)
            n += (size_t) snprintf (buf + n, n < size ? size - n : 0, "%s%lld", j ? "," : "",
                                    (long long) json_integer_value (d));
        const char *dtype = json_string_value (json_array_get (json_object_get (op, "dtypes"), i));
        n += (size_t) snprintf (buf + n, n < size ? size - n : 0, "]%s%s",
                                dtype && strcmp (dtype, "float32") ? ":" : "",
                                dtype && strcmp (dtype, "float32") ? dtype : "");
    }
    if (n >= size && size > 4)
        strcpy (buf + size - 4, "...");
}

/* Runs the profiler on MODEL (an absolute path). Returns the result
 * object (caller's), or NULL after saying why. */
static json_t *
s_profile (const char *python, const char *model, const char *name, int top)
{
    char tmpl[] = "/tmp/kfctl-profile.XXXXXX";
    const char *tmpdir = getenv ("TMPDIR");
    char dirbuf[PATH_MAX];
    snprintf (dirbuf, sizeof dirbuf, "%s/kfctl-profile.XXXXXX", tmpdir && *tmpdir ? tmpdir : "/tmp");
    char *dir = mkdtemp (strlen (dirbuf) < sizeof dirbuf - 1 ? dirbuf : tmpl);
    if (!dir) {
        s_say ("error", "no temporary folder: %s\n", strerror (errno));
        return NULL;
    }
    json_t *result = NULL;
    char topbuf[16], runner[PATH_MAX + 32], out[PATH_MAX + 32];
    snprintf (topbuf, sizeof topbuf, "%d", top);
    snprintf (runner, sizeof runner, "%s/kf_profile_model.py", dir);
    snprintf (out, sizeof out, "%s/result.json", dir);
    if (kf_file_write (dir, "kf_profile_model.py", kf_profile_model_py,
                       strlen (kf_profile_model_py))) {
        s_say ("error", "cannot write %s: %s\n", runner, strerror (errno));
        kf_subproc_rmtree (dir);
        return NULL;
    }
    char *argv[] = { (char *) python, "-B", "-s", runner, (char *) model, out, topbuf,
                     (char *) name, NULL };
    char *output = NULL;
    int rc = kf_ctl_python_run (argv, dir, 600, &output);
    size_t size = 0;
    char *text = kf_file_read (out, S_RESULT_MAX, &size);
    json_error_t jerr;
    json_t *r = text ? json_loadb (text, size, 0, &jerr) : NULL;
    if (json_is_object (r) && json_is_string (json_object_get (r, "error"))) {
        s_say ("error", "the model failed in %s\n%s",
                 kf_jstr (r, "error"), kf_jstr (r, "traceback"));
    }
    else if (rc == 0 && json_is_object (r) && json_is_array (json_object_get (r, "operators")))
        result = json_incref (r);
    else {
        size_t len = output ? strlen (output) : 0;
        s_say ("error", "%s %s (exit %d)%s%s\n",
                 rc == 124 ? "the profile took over 600 s:" : "the profiler ended without a result:",
                 python, rc, len ? "; last output:\n" : "",
                 output ? output + (len > 2000 ? len - 2000 : 0) : "");
    }
    json_decref (r);
    free (text);
    free (output);
    kf_subproc_rmtree (dir);
    return result;
}

/* Profiles MODEL's TEXT on an exec worker of ARGS->target: a
 * model_profile job, followed until it ends. Returns the result object
 * (caller's), or NULL with *CODE set after saying why. */
static json_t *
s_profile_remote (kf_ctl_args_t *args, kf_ctl_endpoints_t *ep, const char *text,
                  const char *name, int top, int *code)
{
    if (!ep->client) {
        *code = kf_ctl_no_endpoint ("client");
        fprintf (stderr, "kfctl: profile-model: or profile it here with --local\n");
        return NULL;
    }
    json_t *body = json_pack ("{s:s, s:i, s:s, s:s}", "source", text, "top", top, "name", name,
                              "target", args->target ? args->target : "host");
    kf_msg_t *reply = NULL;
    *code = kf_ctl_call (ep->client, args, "PROFILE_MODEL", body, "PROFILE_QUEUED", &reply);
    if (*code)
        return NULL;
    json_int_t job = kf_msg_int (reply, "job_id", 0);
    kf_msg_destroy (&reply);
    if (!args->json)
        fprintf (stderr, "profiling %s on an exec worker (target %s, job %lld)\n", name,
                 args->target ? args->target : "host", (long long) job);
    /* The worker's limit is 600 s; the lease (and so a retry after a lost
     * worker) 900 s. Past 1800 s something is wrong. */
    int64_t deadline = kf_ctl_now_ms () + 1800 * 1000;
    bool said = false;
    json_t *result = NULL;
    while (!result) {
        if (kf_ctl_wait_readable (NULL, KF_CTL_POLL_MS) < 0 || kf_ctl_interrupted) {
            *code = KF_CTL_EXIT_INTERRUPTED;
            fprintf (stderr, "kfctl: profile-model: job %lld goes on without kfctl\n",
                     (long long) job);
            return NULL;
        }
        *code = kf_ctl_call (ep->client, args, "PROFILE_STATE",
                             json_pack ("{s:I}", "job_id", job), "PROFILE_STATE", &reply);
        if (*code)
            return NULL;
        const char *state = kf_jstr (reply->body, "state");
        if (!strcmp (state, "done") && json_is_object (json_object_get (reply->body, "result")))
            result = json_incref (json_object_get (reply->body, "result"));
        else if (!strcmp (state, "failed")) {
            s_say ("error", "job %lld failed: %s\n", (long long) job,
                   kf_jstr (reply->body, "reason"));
            *code = KF_CTL_EXIT_ERROR;
        }
        else if (kf_ctl_now_ms () > deadline) {
            s_say ("error", "job %lld still %s after 1800 s\n", (long long) job, state);
            *code = KF_CTL_EXIT_ERROR;
        }
        else if (!said && !strcmp (state, "queued") && !args->json) {
            fprintf (stderr, "waiting for an exec worker of target %s to take it\n",
                     args->target ? args->target : "host");
            said = true;
        }
        kf_msg_destroy (&reply);
        if (*code)
            return NULL;
    }
    if (!json_is_array (json_object_get (result, "operators"))) {
        s_say ("error", "job %lld: a result without operators\n", (long long) job);
        json_decref (result);
        *code = KF_CTL_EXIT_ERROR;
        return NULL;
    }
    return result;
}

/* The ranking, as a table. */
static void
s_print (json_t *result, const char *model, const char *dir)
{
    double total = kf_jnum (result, "total_us", 0);
    printf ("%s on %s (torch %s): %.3f ms a forward, operators' self time %.3f ms "
            "(%lld calls profiled)\n", model, kf_jstr (result, "device"),
            kf_jstr (result, "torch_version"), kf_jnum (result, "wall_us", 0) / 1000,
            total / 1000, (long long) kf_jint (result, "profiled_calls"));
    printf ("%-4s %-28s %9s %6s %5s %7s  %s\n", "rank", "operator", "self ms", "share",
            "calls", "at most", "inputs");
    size_t i;
    json_t *op;
    int rank = 0;
    json_array_foreach (json_object_get (result, "operators"), i, op) {
        double share = kf_jnum (op, "share", 0);
        char inputs[200], bound[16];
        s_inputs_text (op, inputs, sizeof inputs);
        if (share < 0.9999)
            snprintf (bound, sizeof bound, "%.2fx", 1 / (1 - share));
        else
            snprintf (bound, sizeof bound, "-");
        if (json_object_get (op, "skipped")) {
            printf ("%-4s %-28s %9.3f %5.1f%% %5lld %7s  %s (not written: %s)\n", "-",
                    kf_jstr (op, "name"), kf_jnum (op, "self_us", 0) / 1000, 100 * share,
                    (long long) kf_jint (op, "calls"), bound, inputs, kf_jstr (op, "skipped"));
            continue;
        }
        printf ("%-4d %-28s %9.3f %5.1f%% %5lld %7s  %s\n", ++rank, kf_jstr (op, "name"),
                kf_jnum (op, "self_us", 0) / 1000, 100 * share,
                (long long) kf_jint (op, "calls"), bound, inputs);
    }
    printf ("'at most': the model's speedup were that operator free (Amdahl). "
            "%d problem file%s in %s\n", rank, rank == 1 ? "" : "s", dir);
}

int
kf_ctl_cmd_profile_model (kf_ctl_args_t *args, kf_ctl_endpoints_t *ep)
{
    const char *model = args->args[0];
    long long top = 5, submit = 0;
    char why[600];
    if (args->candidate || args->torch) {
        s_say ("usage", "--candidate and --torch belong to export\n");
        return KF_CTL_EXIT_USAGE;
    }
    if (args->top && kf_ctl_parse_int (args->top, 1, S_TOP_MAX, &top)) {
        s_say ("usage", "--top: '%s' is not an integer in 1..%d\n",
                 args->top, S_TOP_MAX);
        return KF_CTL_EXIT_USAGE;
    }
    if (args->submit_top && kf_ctl_parse_int (args->submit_top, 1, top, &submit)) {
        s_say ("usage", "--submit: '%s' is not an integer in 1..%lld "
                 "(the --top operators)\n", args->submit_top, top);
        return KF_CTL_EXIT_USAGE;
    }
    char real[PATH_MAX], version[64], tried[1024];
    if (!realpath (model, real)) {
        s_say ("usage", "%s: %s\n", model, strerror (errno));
        return KF_CTL_EXIT_USAGE;
    }
    struct stat st;
    if (stat (real, &st) == 0 && S_ISREG (st.st_mode) && st.st_size > S_MODEL_MAX) {
        s_say ("usage", "%s is larger than 1 MiB\n", model);
        return KF_CTL_EXIT_USAGE;
    }
    size_t size = 0;
    errno = 0;
    char *text = kf_file_read (real, S_MODEL_MAX, &size);
    if (!text) {
        s_say ("usage", "cannot read %s: %s\n", model,
                 errno ? strerror (errno) : "not a regular file");
        return KF_CTL_EXIT_USAGE;
    }
    const char *bad = s_model_refusal (text, size);
    if (bad) {
        s_say ("usage", "%s is not a KernelBench level-3 model: %s\n",
                 model, bad);
        free (text);
        return KF_CTL_EXIT_USAGE;
    }
    /* The default folder: MODEL-ops beside the model. */
    char dir[PATH_MAX];
    if (args->output)
        snprintf (dir, sizeof dir, "%s", args->output);
    else {
        size_t n = strlen (model);
        int stem = (int) (n > 3 && !strcmp (model + n - 3, ".py") ? n - 3 : n);
        snprintf (dir, sizeof dir, "%.*s-ops", stem, model);
    }
    if (kf_ctl_export_dir_ok (dir, args->force, why, sizeof why)) {
        s_say ("usage", "%s\n", why);
        free (text);
        return KF_CTL_EXIT_USAGE;
    }
    char *copy = strdup (model), name[128];
    snprintf (name, sizeof name, "%.100s", copy ? basename (copy) : "model.py");
    free (copy);
    int code = KF_CTL_EXIT_OK;
    json_t *result = NULL;
    if (!args->local)
        result = s_profile_remote (args, ep, text, name, (int) top, &code);
    else {
        char *python = kf_ctl_python_find (version, sizeof version, tried, sizeof tried);
        if (!python)
            s_say ("error", "no Python with torch found here (tried: %s); set KF_PYTHON\n",
                   tried);
        result = python ? s_profile (python, real, name, (int) top) : NULL;
        code = result ? KF_CTL_EXIT_OK : KF_CTL_EXIT_ERROR;
        free (python);
    }
    free (text);
    if (!result)
        return code;
    if (mkdir (dir, 0755) && errno != EEXIST) {
        s_say ("error", "cannot make %s: %s\n", dir, strerror (errno));
        code = KF_CTL_EXIT_ERROR;
    }
    size_t i;
    json_t *op;
    int rank = 0;
    json_t *paths = json_array ();
    json_array_foreach (json_object_get (result, "operators"), i, op) {
        if (code || json_object_get (op, "skipped"))
            continue;
        char name[96], path[PATH_MAX + 100];
        s_problem_name (++rank, kf_jstr (op, "name"), name, sizeof name);
        snprintf (path, sizeof path, "%s/%s", dir, name);
        const char *src = kf_jstr (op, "source");
        if (kf_file_replace (dir, name, src, strlen (src))) {
            s_say ("error", "cannot write %s: %s\n", path,
                     strerror (errno));
            code = KF_CTL_EXIT_ERROR;
            continue;
        }
        json_object_set_new (op, "problem", json_string (path));
        json_object_set_new (op, "rank", json_integer (rank));
        json_object_del (op, "source");
        json_array_append_new (paths, json_string (path));
    }
    json_object_set_new (result, "model", json_string (model));
    json_object_set_new (result, "dir", json_string (dir));
    if (!code && args->json && !submit)
        kf_ctl_print_json (result);
    else if (!code && !args->json)
        s_print (result, model, dir);
    if (!code && submit) {
        size_t n = json_array_size (paths) < (size_t) submit ? json_array_size (paths)
                                                             : (size_t) submit;
        const char *list[S_TOP_MAX];
        for (size_t k = 0; k < n; k++)
            list[k] = json_string_value (json_array_get (paths, k));
        char *base = strdup (model), suite[128];
        snprintf (suite, sizeof suite, "%.100s", basename (base));
        free (base);
        if (n == 0) {
            s_say ("error", "no problem to submit\n");
            code = KF_CTL_EXIT_ERROR;
        }
        else {
            long long suite_id = 0;
            fflush (stdout);
            code = kf_ctl_suite_submit_files (args, ep, list, n, suite, &suite_id);
        }
    }
    json_decref (paths);
    json_decref (result);
    return code;
}
