/*  kfctl_export.c - `kfctl export RUN [--candidate ID] [--torch] -o DIR`
 *  (docs/kfctl.md, "export").
 *
 *  One EXPORT request (coordinator/kf_coord_export.c) brings the
 *  candidate's source, the task it was judged on, the tuning point whose
 *  figures counted and, for a PyTorch run, the reference's manifest. The
 *  source is written with that point's #defines in front (a tuned source
 *  built with its own defaults is another kernel than the one measured),
 *  beside kf_kernel.h and the build line the compile worker used
 *  (compile-worker/kf_toolchain_cc.c and kf_toolchain_nvcc.c: kfctl may
 *  not include them, so the flags are repeated here and the two are
 *  checked against each other by test_export).
 *
 *  With --torch the folder gets a Python package: export.json (which
 *  kernel input is which forward argument, parameter or buffer; shapes,
 *  dtypes, scalars, tolerance, build line), problem.py, and the static
 *  Python of kfctl/py/export_init.py and export_test.py, embedded at
 *  build time.
 */
#include "kfctl_export.h"
#include "kf_file.h"
#include "kf_json.h"
#include "kfctl_cmd.h"
#include "kfctl_print.h"
#include "kfctl_python.h"
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define s_say(code, ...) kf_ctl_fail ("export", (code), __VA_ARGS__)

extern const char kf_contract_text[];
extern const char kf_py_export_init[];
extern const char kf_py_export_test[];

static bool
s_identifier (const char *s)
{
    if (!s || !(isalpha ((unsigned char) *s) || *s == '_'))
        return false;
    for (; *s; s++)
        if (!(isalnum ((unsigned char) *s) || *s == '_'))
            return false;
    return true;
}

char *
kf_ctl_export_tuned_source (const char *source, size_t size, json_t *config,
                            const char *banner, char *why, size_t why_size)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream (&text, &len);
    if (!f) {
        snprintf (why, why_size, "out of memory");
        return NULL;
    }
    fprintf (f, "/* %s */\n", banner);
    const char *name;
    json_t *value;
    bool ok = true;
    if (json_is_object (config) && json_object_size (config) > 0) {
        fprintf (f, "/* The tuning point that was measured (kf-tune), in front of the\n"
                    " * source's own #ifndef defaults: */\n");
        json_object_foreach (config, name, value) {
            char v[64];
            if (json_is_integer (value))
                snprintf (v, sizeof v, "%lld", (long long) json_integer_value (value));
            else if (json_is_string (value) && s_identifier (json_string_value (value))
                     && strlen (json_string_value (value)) < sizeof v)
                snprintf (v, sizeof v, "%s", json_string_value (value));
            else
                ok = false;
            if (!ok || !s_identifier (name) || strlen (name) > 64) {
                snprintf (why, why_size, "the tuning point has a parameter that is not "
                          "NAME=integer or NAME=identifier ('%.64s')", name);
                ok = false;
                break;
            }
            fprintf (f, "#define %s %s\n", name, v);
        }
    }
    fprintf (f, "\n");
    fwrite (source, 1, size, f);
    if (size && source[size - 1] != '\n')
        fprintf (f, "\n");
    fclose (f);
    if (!ok) {
        free (text);
        return NULL;
    }
    return text;
}

int
kf_ctl_export_dir_ok (const char *dir, bool force, char *why, size_t why_size)
{
    struct stat st;
    if (stat (dir, &st) != 0) {
        if (errno == ENOENT)
            return 0;
        snprintf (why, why_size, "%s: %s", dir, strerror (errno));
        return -1;
    }
    if (!S_ISDIR (st.st_mode)) {
        snprintf (why, why_size, "%s exists and is not a folder", dir);
        return -1;
    }
    if (force)
        return 0;
    DIR *d = opendir (dir);
    if (!d) {
        snprintf (why, why_size, "%s: %s", dir, strerror (errno));
        return -1;
    }
    struct dirent *e;
    bool empty = true;
    while (empty && (e = readdir (d)))
        empty = !strcmp (e->d_name, ".") || !strcmp (e->d_name, "..");
    closedir (d);
    if (!empty) {
        snprintf (why, why_size, "%s is not empty: give --force to write into it "
                  "(files of the same name are replaced)", dir);
        return -1;
    }
    return 0;
}

/* mkdir -p PATH (0755). */
static int
s_mkdirs (const char *path)
{
    char buf[PATH_MAX];
    if (snprintf (buf, sizeof buf, "%s", path) >= (int) sizeof buf) {
        errno = ENAMETOOLONG;
        return -1;
    }
    for (char *p = buf + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = 0;
        if (mkdir (buf, 0755) && errno != EEXIST)
            return -1;
        *p = '/';
    }
    return mkdir (buf, 0755) && errno != EEXIST ? -1 : 0;
}

typedef struct {
    const char *dir;
    json_t *files;           /* paths written, in order */
    int failed;
} s_out_t;

static void
s_write (s_out_t *out, const char *sub, const char *name, const char *data, size_t size)
{
    if (out->failed)
        return;
    char dir[PATH_MAX + 256], path[PATH_MAX + 512];
    snprintf (dir, sizeof dir, "%s%s%s", out->dir, sub ? "/" : "", sub ? sub : "");
    snprintf (path, sizeof path, "%s/%s", dir, name);
    if (s_mkdirs (dir) || kf_file_replace (dir, name, data, size)) {
        s_say ("error", "cannot write %s: %s\n", path, strerror (errno));
        out->failed = 1;
        return;
    }
    json_array_append_new (out->files, json_string (path));
}

/* The build of a kernel of LANGUAGE for TARGET, as the compile worker's
 * toolchain runs it: {compiler, override, search, flags, libs, source}. */
static json_t *
s_build (const char *language, const char *target, json_t *task)
{
    if (!strcmp (language, "c"))
        return json_pack ("{s:s, s:s, s:[], s:[sssss], s:[s], s:s}", "compiler", "cc",
                          "override", "CC", "search", "flags", "-O3", "-march=native",
                          "-std=c11", "-shared", "-fPIC", "libs", "-lm", "source", "kernel.c");
    const char *arch = "sm_90";
    const char *colon = strchr (target, ':');
    if (colon && !strncmp (colon + 1, "sm_", 3) && strlen (colon + 1) < 16
        && strspn (colon + 4, "0123456789abf") == strlen (colon + 4))
        arch = colon + 1;
    char arch_flag[32];
    snprintf (arch_flag, sizeof arch_flag, "-arch=%s", arch);
    json_t *libs = json_array ();
    size_t i;
    json_t *lib;
    json_array_foreach (json_object_get (task, "libraries"), i, lib)
        if (s_identifier (json_string_value (lib))) {
            char l[80];
            snprintf (l, sizeof l, "-l%s", json_string_value (lib));
            json_array_append_new (libs, json_string (l));
        }
    return json_pack ("{s:s, s:s, s:[s], s:[sssssssss], s:o, s:s}", "compiler", "nvcc",
                      "override", "NVCC", "search", "/usr/local/cuda/bin", "flags", "-O3",
                      "-shared", "-cudart", "shared", "-Xcompiler", "-fPIC", "-Xlinker",
                      "--no-undefined", arch_flag, "libs", libs, "source", "kernel.cu");
}

/* BUILD as one shell line run in the folder that holds the source. */
static char *
s_build_line (json_t *build)
{
    char *line = NULL;
    size_t len = 0;
    FILE *f = open_memstream (&line, &len);
    if (!f)
        return NULL;
    fprintf (f, "%s", kf_jstr (build, "compiler"));
    size_t i;
    json_t *v;
    json_array_foreach (json_object_get (build, "flags"), i, v)
        fprintf (f, " %s", json_string_value (v));
    fprintf (f, " -I. -o libkernel.so %s", kf_jstr (build, "source"));
    json_array_foreach (json_object_get (build, "libs"), i, v)
        fprintf (f, " %s", json_string_value (v));
    fclose (f);
    return line;
}

/* export.json's "inputs", "outputs", "scalars" and "n_args" for a PyTorch
 * run: each kernel input of TASK traced to a forward argument (`in<k>`:
 * argument k), a parameter or a buffer (its dotted name, which the
 * derived task spells with '_'), from the reference's manifest (set 0 and
 * the module's own tensors). Returns 0, or -1 with WHY. */
static int
s_torch_map (json_t *task, json_t *tensors, json_t *scalars, json_t *out, char *why,
             size_t why_size)
{
    json_t *inputs = json_array (), *outputs = json_array (), *ctx = json_array ();
    json_object_set_new (out, "inputs", inputs);
    json_object_set_new (out, "outputs", outputs);
    json_object_set_new (out, "scalars", ctx);
    long long n_args = 0;
    size_t i, k;
    json_t *t, *m;
    json_array_foreach (tensors, k, m)
        if (!strcmp (kf_jstr (m, "role"), "input") && kf_jint (m, "index") + 1 > n_args)
            n_args = kf_jint (m, "index") + 1;
    json_array_foreach (scalars, k, m)
        if (!strcmp (kf_jstr (m, "role"), "input") && kf_jint (m, "index") + 1 > n_args)
            n_args = kf_jint (m, "index") + 1;
    json_object_set_new (out, "n_args", json_integer (n_args));
    json_array_foreach (json_object_get (task, "inputs"), i, t) {
        const char *name = kf_jstr (t, "name");
        json_t *entry = NULL;
        json_array_foreach (tensors, k, m) {
            const char *role = kf_jstr (m, "role");
            char derived[256];
            if (!strcmp (role, "input"))
                snprintf (derived, sizeof derived, "in%lld", (long long) kf_jint (m, "index"));
            else if (!strcmp (role, "param") || !strcmp (role, "buffer")) {
                snprintf (derived, sizeof derived, "%s", kf_jstr (m, "name"));
                for (char *p = derived; *p; p++)
                    *p = *p == '.' ? '_' : *p;
            }
            else
                continue;
            if (strcmp (derived, name))
                continue;
            if (!strcmp (role, "input"))
                entry = json_pack ("{s:s, s:s, s:I}", "name", name, "source", "arg", "index",
                                   (json_int_t) kf_jint (m, "index"));
            else
                entry = json_pack ("{s:s, s:s, s:s}", "name", name, "source",
                                   !strcmp (role, "param") ? "param" : "buffer", "path",
                                   kf_jstr (m, "name"));
            break;
        }
        if (!entry) {
            snprintf (why, why_size, "the kernel's input '%.64s' is neither a forward "
                      "argument nor a parameter or buffer of the reference's manifest", name);
            return -1;
        }
        json_object_set (entry, "dtype", json_object_get (t, "dtype"));
        json_object_set (entry, "shape", json_object_get (t, "shape"));
        json_array_append_new (inputs, entry);
    }
    json_array_foreach (json_object_get (task, "outputs"), i, t)
        json_array_append_new (outputs, json_pack ("{s:O, s:O, s:O}", "name",
                                                   json_object_get (t, "name"), "dtype",
                                                   json_object_get (t, "dtype"), "shape",
                                                   json_object_get (t, "shape")));
    const char *name;
    json_t *value;
    json_object_foreach (json_object_get (task, "scalars"), name, value) {
        int index = -1;
        char tail;
        const char *source = "const";
        if (sscanf (name, "init%d%c", &index, &tail) == 1 && index >= 0)
            source = "init";
        else if (sscanf (name, "in%d%c", &index, &tail) == 1 && index >= 0)
            source = "arg";
        json_array_append_new (ctx, json_pack ("{s:s, s:s, s:i, s:O}", "name", name, "source",
                                               source, "index", index, "value", value));
    }
    return 0;
}

/* The folder's README.md. */
static char *
s_readme (json_t *reply, json_t *build, const char *package, const char *python,
          bool torch)
{
    json_t *cand = json_object_get (reply, "candidate");
    json_t *task = json_object_get (reply, "task");
    char speedup[32], *line = s_build_line (build);
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream (&text, &len);
    if (!f) {
        free (line);
        return NULL;
    }
    const char *src = kf_jstr (build, "source");
    fprintf (f, "# %s: candidate %lld of run %lld\n\n", kf_jstr (task, "name"),
             (long long) kf_jint (cand, "id"), (long long) kf_jint (reply, "run_id"));
    fprintf (f, "Written by `kfctl export`. Target `%s`; measured speedup %s over the "
                "run's reference%s.\n\n", kf_jstr (reply, "target"),
             kf_ctl_speedup_text (json_object_get (cand, "speedup"), speedup, sizeof speedup),
             torch ? " (PyTorch eager)" : "");
    json_t *best = json_object_get (reply, "best_config");
    if (json_is_object (best) && json_object_size (best)) {
        fprintf (f, "The source is tuned: `%s` starts with the `#define`s of the tuning "
                    "point whose figures counted:", src);
        const char *k;
        json_t *v;
        json_object_foreach (best, k, v) {
            char *s = json_dumps (v, JSON_ENCODE_ANY);
            fprintf (f, " `%s=%s`", k, s ? (s[0] == '"' ? "(see source)" : s) : "?");
            free (s);
        }
        fprintf (f, ".\n\n");
    }
    const char *where = torch ? package : ".";
    fprintf (f, "## Build by hand\n\nIn `%s`, with the compiler and flags of the run's compile "
                "worker, built for the machine you build on:\n\n    %s\n\n", where,
             line ? line : "?");
    fprintf (f, "The kernel follows the kernel contract of `kf_kernel.h`: `kf_forward(in, "
                "n_in, out, n_out, ctx)` with the tensors in the order of the task below, "
                "contiguous, and the outputs preallocated. `-march=native` or `-arch` ties "
                "the object to the kind of machine it is built for (the search built host "
                "kernels for the instruction sets its exec hosts reported, `-march=x86-64` "
                "and one `-m` flag each, and timed them there).\n\n");
    if (torch) {
        fprintf (f, "## Use from PyTorch\n\nThe package `%s` wraps it as a `torch.nn.Module`: "
                    "`%s.Model` is the problem's own `Model` with `forward` computed by the "
                    "kernel, so it takes the same constructor arguments and `state_dict`. "
                    "The kernel is built on first use into `%s/build/` (set `%s` to choose "
                    "the compiler).\n\n",
                 package, package, package, kf_jstr (build, "override"));
        fprintf (f, "    cd THIS_FOLDER\n    %s -c 'import torch, %s as k; "
                    "m = k.Model().to(k.DEVICE); x = k.problem.get_inputs(); "
                    "print(m(*[t.to(k.DEVICE) for t in x]))'\n\n",
                 python, package);
        fprintf (f, "Check it against the problem's `Model` on fresh inputs:\n\n"
                    "    %s -m %s.test_kernel [--sets N] [--seed S]\n\n", python, package);
        fprintf (f, "Limits: the kernel was judged on the shapes and dtypes in "
                    "`%s/export.json` only, and `forward` refuses others; it computes the "
                    "forward pass only (no autograd); tensors must be on `%s`; a result "
                    "of several tensors comes back as a tuple in the problem's order.\n",
                 package, !strcmp (kf_jstr (reply, "language"), "cuda") ? "cuda" : "cpu");
    }
    else {
        fprintf (f, "## Tensors\n\n`task.json` holds the task: inputs (`in[]`, in order), "
                    "outputs (`out[]`), scalars (`ctx`, read with `kf_scalar`).\n");
    }
    fclose (f);
    free (line);
    return text;
}

/* A Python package name from the task's name: kf_ and its letters,
 * digits and underscores, lower case. */
static void
s_package (const char *task_name, char *buf, size_t size)
{
    size_t n = (size_t) snprintf (buf, size, "kf_");
    for (const char *p = task_name; *p && n + 1 < size && n < 48; p++)
        buf[n++] = isalnum ((unsigned char) *p) ? (char) tolower ((unsigned char) *p) : '_';
    buf[n] = 0;
    if (n == 3)
        snprintf (buf, size, "kf_kernel");
}

int
kf_ctl_cmd_export (kf_ctl_args_t *args, kf_ctl_endpoints_t *ep)
{
    long long run_id, cand_id = 0;
    char why[600];
    if (kf_ctl_parse_int (args->args[0], 1, LLONG_MAX, &run_id)) {
        s_say ("usage", "RUN must be a run id, not '%s'\n", args->args[0]);
        return KF_CTL_EXIT_USAGE;
    }
    if (args->candidate && kf_ctl_parse_int (args->candidate, 1, LLONG_MAX, &cand_id)) {
        s_say ("usage", "--candidate must be a candidate id, not '%s'\n",
                 args->candidate);
        return KF_CTL_EXIT_USAGE;
    }
    if (!args->output || !*args->output) {
        s_say ("usage", "say where with -o DIR\n");
        return KF_CTL_EXIT_USAGE;
    }
    if (kf_ctl_export_dir_ok (args->output, args->force, why, sizeof why)) {
        s_say ("usage", "%s\n", why);
        return KF_CTL_EXIT_USAGE;
    }
    if (!ep->client)
        return kf_ctl_no_endpoint ("client");
    json_t *body = json_pack ("{s:I}", "run_id", (json_int_t) run_id);
    if (cand_id)
        json_object_set_new (body, "candidate_id", json_integer (cand_id));
    kf_msg_t *reply = NULL;
    int code = kf_ctl_call (ep->client, args, "EXPORT", body, "EXPORTED", &reply);
    if (code)
        return code;
    json_t *r = reply->body;
    json_t *task = json_object_get (r, "task");
    json_t *cand = json_object_get (r, "candidate");
    zframe_t *frame = kf_msg_frame (reply, 0);
    const char *language = kf_jstr (r, "language");
    bool pytorch = !strcmp (kf_jstr (json_object_get (task, "reference"), "language"),
                            "pytorch");
    code = KF_CTL_EXIT_OK;
    if (!frame) {
        s_say ("error", "the reply carries no source\n");
        code = KF_CTL_EXIT_ERROR;
    }
    else if (args->torch && !pytorch) {
        s_say ("usage", "run %lld's task '%s' is a native task (its "
                 "reference is %s, not a PyTorch problem): --torch is for PyTorch problems; "
                 "leave it out to get the source, header and build line\n", run_id,
                 kf_jstr (task, "name"),
                 kf_jstr (json_object_get (task, "reference"), "language"));
        code = KF_CTL_EXIT_USAGE;
    }
    else if (strcmp (language, "c") && strcmp (language, "cuda")) {
        s_say ("error", "candidate %lld is %s; export writes C (host) and "
                 "CUDA kernels only\n", (long long) kf_jint (cand, "id"), language);
        code = KF_CTL_EXIT_ERROR;
    }
    json_t *build = code ? NULL : s_build (language, kf_jstr (r, "target"), task);
    json_t *info = json_pack ("{s:i, s:I, s:I, s:o, s:s, s:s, s:o, s:o, s:O}", "format", 1,
                              "run_id", (json_int_t) run_id, "candidate_id",
                              (json_int_t) kf_jint (cand, "id"), "speedup",
                              kf_jref (cand, "speedup"), "task_name", kf_jstr (task, "name"),
                              "target", kf_jstr (r, "target"), "tolerance",
                              kf_jref (task, "tolerance"), "tuning", kf_jref (r, "best_config"),
                              "build", build ? build : json_null ());
    json_object_set_new (info, "backend", json_string (!strcmp (language, "cuda") ? "cuda"
                                                                                   : "host"));
    if (!code && args->torch
        && s_torch_map (task, json_object_get (r, "tensors"), json_object_get (r, "scalars"),
                        info, why, sizeof why)) {
        s_say ("error", "%s\n", why);
        code = KF_CTL_EXIT_ERROR;
    }
    char banner[200];
    snprintf (banner, sizeof banner, "Exported by kfctl: run %lld, candidate %lld, task %.64s",
              run_id, (long long) kf_jint (cand, "id"), kf_jstr (task, "name"));
    char *source = code ? NULL
                        : kf_ctl_export_tuned_source ((const char *) zframe_data (frame),
                                                      zframe_size (frame),
                                                      json_object_get (r, "best_config"),
                                                      banner, why, sizeof why);
    if (!code && !source) {
        s_say ("error", "%s\n", why);
        code = KF_CTL_EXIT_ERROR;
    }
    char package[64] = "", version[64] = "", tried[1024] = "";
    char *python = NULL;
    s_out_t out = { args->output, json_array (), 0 };
    if (!code) {
        s_package (kf_jstr (task, "name"), package, sizeof package);
        const char *sub = args->torch ? package : NULL;
        const char *src = kf_jstr (build, "source");
        s_write (&out, sub, src, source, strlen (source));
        s_write (&out, sub, "kf_kernel.h", kf_contract_text, strlen (kf_contract_text));
        if (args->torch) {
            python = kf_ctl_python_find (version, sizeof version, tried, sizeof tried);
            const char *ps = kf_jstr (json_object_get (task, "reference"), "source");
            char *spec = json_dumps (info, JSON_INDENT (2) | JSON_PRESERVE_ORDER);
            s_write (&out, sub, "problem.py", ps, strlen (ps));
            s_write (&out, sub, "export.json", spec ? spec : "", spec ? strlen (spec) : 0);
            s_write (&out, sub, "__init__.py", kf_py_export_init, strlen (kf_py_export_init));
            s_write (&out, sub, "test_kernel.py", kf_py_export_test,
                     strlen (kf_py_export_test));
            free (spec);
        }
        else {
            char *spec = json_dumps (task, JSON_INDENT (2));
            s_write (&out, NULL, "task.json", spec ? spec : "", spec ? strlen (spec) : 0);
            free (spec);
        }
        char *readme = s_readme (r, build, package, python ? python : "python3", args->torch);
        s_write (&out, NULL, "README.md", readme ? readme : "", readme ? strlen (readme) : 0);
        free (readme);
        code = out.failed ? KF_CTL_EXIT_ERROR : KF_CTL_EXIT_OK;
    }
    if (!code && args->json) {
        json_t *o = json_pack ("{s:I, s:O, s:s, s:O, s:s?, s:s?, s:s?}", "run_id",
                               (json_int_t) run_id, "candidate_id", json_object_get (cand, "id"),
                               "dir", args->output, "files", out.files, "package",
                               args->torch ? package : NULL, "python", python,
                               "torch_version", python ? version : NULL);
        kf_ctl_print_json (o);
        json_decref (o);
    }
    else if (!code) {
        char speedup[32];
        printf ("exported candidate %lld of run %lld (speedup %s) to %s\n",
                (long long) kf_jint (cand, "id"), run_id,
                kf_ctl_speedup_text (json_object_get (cand, "speedup"), speedup, sizeof speedup),
                args->output);
        if (args->torch && python)
            printf ("check it:  cd %s && %s -m %s.test_kernel\n", args->output, python, package);
        else if (args->torch)
            printf ("no Python with torch found here (tried: %s); the package needs one\n",
                    tried);
        else
            printf ("build it:  see %s/README.md\n", args->output);
    }
    free (python);
    free (source);
    json_decref (out.files);
    json_decref (info);
    json_decref (build);
    kf_msg_destroy (&reply);
    return code;
}
