/*  kfctl_submit.c - kfctl submit: the task (a task file, or a PyTorch
 *  problem in the KernelBench format made into one), the run config the
 *  user wrote (--config FILE, --set KEY=VALUE, submit's own flags), the
 *  SUBMIT request, and with --wait the run followed to its end.
 */
#include "kf_str.h"
#include "kf_task.h"
#include "kfctl_cmd.h"
#include "kfctl_fields.h"
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* host, cuda, level-zero, opencl, optionally narrowed by ":ARCH"; cuda arches
 * must read sm_NN so a typo fails here rather than as an unroutable job. */
static int
s_target_ok (const char *target)
{
    static const char *backends[] = { "host", "cuda", "level-zero", "opencl" };
    const char *colon = strchr (target, ':');
    size_t blen = colon ? (size_t) (colon - target) : strlen (target);
    int which = -1;
    for (int i = 0; i < 4; i++)
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
s_problem_task (const kf_ctl_args_t *args, const char *path, char *text, size_t size, char **err)
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
    /* The file as the user named it, for the messages about the problem
     * (a traceback names the reference runner's problem.py; kf_rename.h);
     * a name of control characters is left out rather than refused. */
    bool printable = strlen (path) <= 1024;
    for (const char *c = path; printable && *c; c++)
        printable = (unsigned char) *c >= 0x20 && *c != 0x7f;
    if (task && printable)
        json_object_set_new (json_object_get (task, "reference"), "path", json_string (path));
    char *why = NULL;
    if (!task || kf_task_validate (task, &why)) {
        *err = kf_strdupf ("%s: %s", path, why ? why : "out of memory");
        free (why);
        json_decref (task);
        return NULL;
    }
    return task;
}

json_t *
kf_ctl_submit_task (const kf_ctl_args_t *args, const char *path, char **err)
{
    /* A task folder stands for its task.json; any other folder is no task
     * (fopen would take it and the JSON parser call it empty). */
    struct stat st;
    if (stat (path, &st) == 0 && S_ISDIR (st.st_mode)) {
        char *file = kf_strdupf ("%s%stask.json", path,
                                 path[strlen (path) - 1] == '/' ? "" : "/");
        json_t *task = NULL;
        if (file && access (file, F_OK) == 0)
            task = kf_ctl_submit_task (args, file, err);
        else
            kf_fail (err, "%s is a folder without a task.json: give a task file, a task"
                     " folder or a PyTorch problem (.py)", path);
        free (file);
        return task;
    }
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
/* The run config, and the command                                      */

/* The run config the user wrote (docs/search.md): the JSON object of
 * --config FILE, then each --set KEY=VALUE on top (VALUE read as JSON,
 * else taken as a string; KEY.MEMBER sets one member of an object, as in
 * selection.curiosity=1). The coordinator checks the keys; submit's own
 * flags go on top of both. NULL with *ERR when the file or a --set is
 * unreadable. */
static json_t *
s_run_config (const kf_ctl_args_t *args, char **err)
{
    json_t *config = json_object ();
    struct stat st;
    if (args->config_file && stat (args->config_file, &st) == 0 && S_ISDIR (st.st_mode)) {
        kf_fail (err, "--config %s is a folder: give a JSON file of run settings",
                 args->config_file);
        json_decref (config);
        return NULL;
    }
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

/* "submitted run 12: up to 14 candidates (3 generations x 4, then 2
 * tuning rounds of up to 1)" on stderr, from the SUBMITTED body. */
static void
s_say_plan (json_t *body, long long run_id)
{
    long long total = kf_ctl_int (body, "candidates", -1);
    if (total < 0) {
        fprintf (stderr, "submitted run %lld\n", run_id);
        return;
    }
    long long rounds = kf_ctl_int (body, "tuning_rounds", 0);
    fprintf (stderr, "submitted run %lld: up to %lld candidates (%lld generation%s x %lld",
             run_id, total, kf_ctl_int (body, "generations", 0),
             kf_ctl_int (body, "generations", 0) == 1 ? "" : "s",
             kf_ctl_int (body, "population", 0));
    if (rounds > 0)
        fprintf (stderr, ", then %lld tuning round%s of up to %lld", rounds,
                 rounds == 1 ? "" : "s", kf_ctl_int (body, "tuning_candidates", 0));
    fprintf (stderr, ")\n");
    size_t i;
    json_t *w;
    json_array_foreach (json_object_get (body, "warnings"), i, w)
        if (json_is_string (w))
            fprintf (stderr, "warning: %s\n", json_string_value (w));
    fflush (stderr);
}

json_t *
kf_ctl_submit_config (const kf_ctl_args_t *args, char **err)
{
    if (args->target && s_target_ok (args->target) != 0) {
        kf_fail (err, "--target: unknown target '%s' (host, cuda, level-zero, opencl,"
                 " optionally narrowed as cuda:sm_90)", args->target);
        return NULL;
    }
    /* Only what the user chose: the coordinator owns the defaults. */
    json_t *config = s_run_config (args, err);
    if (!config)
        return NULL;
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
    return config;
}

/* A task whose reference or starting kernel is written for a device
 * must not quietly become a host run when no target was chosen: CUDA
 * picks the cuda target (said on stderr), OpenCL and SYCL, which two
 * targets run, ask for --target. Returns 0, or -1 with *ERR. (Suites
 * call it for each problem, kfctl_suite.c.) */
int
kf_ctl_submit_target (json_t *task, json_t *config, const char *path, char **err)
{
    if (json_object_get (config, "target"))
        return 0;
    const char *found = NULL;
    static const char *parts[] = { "reference", "initial" };
    for (int i = 0; i < 2 && !found; i++) {
        const char *lang = json_string_value (
            json_object_get (json_object_get (task, parts[i]), "language"));
        if (lang && (!strcmp (lang, "cuda") || !strcmp (lang, "opencl")
                     || !strcmp (lang, "sycl")))
            found = lang;
    }
    if (!found)
        return 0;
    if (strcmp (found, "cuda"))
        return kf_fail (err, "%s is written in %s: choose where it runs with --target"
                        " opencl or --target level-zero", path, found);
    json_object_set_new (config, "target", json_string ("cuda"));
    fprintf (stderr, "kfctl: %s is written in CUDA: target cuda (--target to choose"
             " another)\n", path);
    return 0;
}

int
kf_ctl_cmd_submit (kf_ctl_args_t *args, kf_ctl_endpoints_t *ep)
{
    char *err = NULL;
    json_t *config = kf_ctl_submit_config (args, &err);
    json_t *task = config ? kf_ctl_submit_task (args, args->args[0], &err) : NULL;
    if (task && kf_ctl_submit_target (task, config, args->args[0], &err)) {
        json_decref (task);
        task = NULL;
    }
    if (!task) {
        kf_ctl_usage ("%s", err ? err : "bad task or run config");
        free (err);
        json_decref (config);
        return KF_CTL_EXIT_USAGE;
    }
    if (!ep->client) {
        json_decref (task);
        json_decref (config);
        return kf_ctl_no_endpoint ("client");
    }
    json_t *body = json_object ();
    json_object_set_new (body, "task", task);
    json_object_set_new (body, "config", config);

    kf_msg_t *reply = NULL;
    int code = kf_ctl_call (ep->client, args, "SUBMIT", body, "SUBMITTED", &reply);
    if (code)
        return code;
    long long run_id = (long long) kf_msg_int (reply, "run_id", -1);
    /* The run id first, on stderr too, so a pipe or an interrupted wait
     * still tells which run it was; and what the run will make. */
    if (!args->json || args->wait)
        s_say_plan (reply->body, run_id);
    if (!args->wait) {
        if (args->json)
            kf_ctl_print_json (reply->body);
        else
            printf ("%lld\n", run_id);
        kf_msg_destroy (&reply);
        return KF_CTL_EXIT_OK;
    }
    kf_msg_destroy (&reply);
    json_t *run = NULL;
    code = kf_ctl_follow (args, ep, run_id, false, &run);
    if (code)
        return code;
    json_t *result = NULL;
    if (args->json) {
        result = json_object ();
        json_object_set_new (result, "run_id", json_integer (run_id));
        static const char *keys[] = { "status", "best_speedup", "first_speedup",
                                      "best_candidate_id", "reason" };
        for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
            json_t *v = json_object_get (run, keys[i]);
            json_object_set (result, keys[i], v ? v : json_null ());
        }
    }
    return kf_ctl_run_ended (args, run, run_id, result);
}
