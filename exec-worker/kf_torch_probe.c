/*  kf_torch_probe.c - the Python that imports torch, found once a boot
 *  (kf_torch_probe.h).
 */
#include "kf_torch_probe.h"
#include "kf_file.h"
#include "kf_profile.h"
#include "kf_python.h"
#include "kf_str.h"
#include "kf_subproc.h"

#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define S_FORMAT 1                         // raised whenever the kept answer changes shape
#define S_FILE_MAX ((size_t) 64 << 10)

//  Runs PYTHON in the sandbox the jobs use and asks torch for its version,
//  whether CUDA works, and where its package is. Returns 0 with *VERSION,
//  *EXE (sys.executable), *DIR (torch's folder) and *CUDA, or -1 with WHY.
static int
s_probe (const char *python, char **version, char **exe, char **dir, bool *cuda, char *why,
         size_t why_size)
{
    kf_subproc_limits_t limits;
    kf_subproc_limits_default (&limits);
    limits.time_limit_s = 120;   //  a cold import of torch and CUDA takes seconds
    limits.memory_bytes = 0;
    limits.max_procs = 512;
    char *work = kf_subproc_workdir (&limits);
    if (!work) {
        snprintf (why, why_size, "no temporary directory: %s", strerror (errno));
        return -1;
    }
    char *argv[] = { (char *) python, "-B", "-s", "-c",
                     "import os, sys, torch\n"
                     "print('KF-TORCH-DIR', os.path.dirname(os.path.abspath(torch.__file__)))\n"
                     "print('KF-TORCH', torch.__version__, int(torch.cuda.is_available()),"
                     " sys.executable)\n", NULL };
    kf_subproc_result_t run;
    int rc = -1;
    if (kf_subproc_run (argv, &limits, &run) != 0) {
        snprintf (why, why_size, "%s", errno == ENOENT ? "not found" : strerror (errno));
        kf_subproc_rmtree (work);
        free (work);
        return -1;
    }
    const char *line = strstr (run.output, "KF-TORCH "), *at = strstr (run.output, "KF-TORCH-DIR ");
    char v[128], e[4096], d[4096];
    int c;
    if (!run.timed_out && run.exit_code == 0 && line && at
        && sscanf (line, "KF-TORCH %127s %d %4095[^\n]", v, &c, e) == 3
        && sscanf (at, "KF-TORCH-DIR %4095[^\n]", d) == 1) {
        *version = strdup (v);
        *exe = strdup (e);
        *dir = strdup (d);
        *cuda = c != 0;
        rc = 0;
    }
    else
        kf_python_why (run.output, run.timed_out, limits.time_limit_s, why, why_size);
    kf_subproc_result_free (&run);
    kf_subproc_rmtree (work);
    free (work);
    return rc;
}

//  PATH's file as "device:inode:size:mtime", or "absent".
static json_t *
s_stat (const char *path)
{
    struct stat st;
    if (!path || stat (path, &st) != 0)
        return json_string ("absent");
    char text[128];
    snprintf (text, sizeof text, "%llu:%llu:%lld:%lld.%09ld", (unsigned long long) st.st_dev,
              (unsigned long long) st.st_ino, (long long) st.st_size, (long long) st.st_mtim.tv_sec,
              st.st_mtim.tv_nsec);
    return json_string (text);
}

//  Where NAME runs from: itself with a '/', else the first executable of
//  that name on PATH (kf_profile_on_path). Caller frees; NULL: none.
static char *
s_which (const char *name)
{
    return strchr (name, '/') ? strdup (name) : kf_profile_on_path (name);
}

//  What the answer holds for: this boot, driver and visible devices, and
//  every candidate's file. NULL where no boot id can be read.
static json_t *
s_key (const char *const *candidates, int n)
{
    char boot[64] = "", driver[256] = "";
    if (kf_file_read_proc ("/proc/sys/kernel/random/boot_id", boot, sizeof boot) <= 0)
        return NULL;
    boot[strcspn (boot, "\n")] = 0;
    kf_file_read_proc ("/proc/driver/nvidia/version", driver, sizeof driver);
    driver[strcspn (driver, "\n")] = 0;
    const char *visible = getenv ("CUDA_VISIBLE_DEVICES");
    json_t *files = json_array ();
    for (int i = 0; i < n; i++) {
        char *where = s_which (candidates[i]);
        char real[PATH_MAX];
        json_array_append_new (files, json_pack ("{s:s, s:o}", "name", candidates[i], "file",
                                                 s_stat (where && realpath (where, real) ? real
                                                                                         : NULL)));
        free (where);
    }
    return json_pack ("{s:i, s:s, s:s, s:s?, s:o}", "format", S_FORMAT, "boot_id", boot, "driver",
                      driver, "cuda_visible_devices", visible, "candidates", files);
}

//  torch's files whose change means another torch: {path: stat}.
static json_t *
s_torch_files (const char *dir)
{
    json_t *files = json_object ();
    static const char *const names[] = { "__init__.py", "version.py" };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        char *path = kf_strdupf ("%s/%s", dir, names[i]);
        if (path)
            json_object_set_new (files, path, s_stat (path));
        free (path);
    }
    return files;
}

//  The answer KEEP holds for KEY, into *OUT. Returns 0 when it counts.
static int
s_read (const char *keep, json_t *key, const char *const *candidates, int n,
        kf_torch_found_t *out)
{
    size_t size = 0;
    char *text = kf_file_read_own (keep, S_FILE_MAX, &size);
    json_t *doc = text ? json_loadb (text, size, 0, NULL) : NULL;
    free (text);
    json_t *files = json_object_get (doc, "torch_files");
    json_int_t chosen = json_integer_value (json_object_get (doc, "chosen"));
    const char *version = json_string_value (json_object_get (doc, "version"));
    const char *exe = json_string_value (json_object_get (doc, "exe"));
    const char *tried = json_string_value (json_object_get (doc, "tried"));
    json_t *cuda = json_object_get (doc, "cuda");
    int rc = -1;
    if (!json_equal (key, json_object_get (doc, "key")) || !json_is_object (files)
        || !json_object_size (files) || chosen < 0 || chosen >= n || !version || !*version
        || strlen (version) > 127 || strpbrk (version, " \t\n") || !exe || strlen (exe) > 4095
        || !tried || strlen (tried) > 4096 || !json_is_boolean (cuda))
        goto done;
    const char *path;
    json_t *was;
    json_object_foreach (files, path, was) {
        json_t *now = s_stat (path);
        bool same = json_equal (now, was) && strcmp (json_string_value (now), "absent");
        json_decref (now);
        if (!same)
            goto done;
    }
    const char *c = candidates[chosen];
    out->python = strdup (c[0] == '/' || !exe[0] ? c : exe);
    out->version = strdup (version);
    out->tried = strdup (tried);
    out->cuda = json_is_true (cuda);
    out->kept = true;
    rc = out->python && out->version && out->tried ? 0 : -1;
done:
    json_decref (doc);
    return rc;
}

//  Keeps the answer of candidate CHOSEN in KEEP (through a rename).
static void
s_save (const char *keep, json_t *key, int chosen, const kf_torch_found_t *found,
        const char *exe, const char *dir)
{
    json_t *doc = json_pack ("{s:O, s:i, s:s, s:s, s:s, s:b, s:o}", "key", key, "chosen", chosen,
                             "version", found->version, "exe", exe, "tried", found->tried,
                             "cuda", found->cuda, "torch_files", s_torch_files (dir));
    char *text = doc ? json_dumps (doc, JSON_INDENT (1)) : NULL;
    if (text)
        kf_file_replace_path (keep, text, strlen (text));
    free (text);
    json_decref (doc);
}

int
kf_torch_find (const char *configured, const char *keep, kf_torch_found_t *out)
{
    *out = (kf_torch_found_t) { 0 };
    const char *candidates[KF_PYTHON_MAX];
    int n = kf_python_candidates (configured, candidates);
    json_t *key = keep ? s_key (candidates, n) : NULL;
    if (key && s_read (keep, key, candidates, n, out) == 0) {
        json_decref (key);
        return 0;
    }
    kf_torch_found_free (out);
    char *tried = NULL;
    size_t tried_size = 0;
    FILE *f = open_memstream (&tried, &tried_size);
    for (int i = 0; i < n && !out->python; i++) {
        char why[256] = "";
        char *version = NULL, *exe = NULL, *dir = NULL;
        bool cuda = false;
        if (s_probe (candidates[i], &version, &exe, &dir, &cuda, why, sizeof why) == 0) {
            //  sys.executable names what PATH found; a venv's path stays
            //  a venv's path, so its packages stay in use.
            out->python = strdup (candidates[i][0] == '/' || !exe[0] ? candidates[i] : exe);
            out->version = version;
            out->cuda = cuda;
            if (f)
                fflush (f);
            out->tried = strdup (tried ? tried : "");
            if (key && out->tried)
                s_save (keep, key, i, out, exe, dir);
            free (exe);
            free (dir);
        }
        else if (f)
            fprintf (f, "%s%s (%s)", ftell (f) ? ", " : "", candidates[i], why);
    }
    if (f)
        fclose (f);
    if (!out->tried)
        out->tried = tried ? tried : strdup ("");
    else
        free (tried);
    json_decref (key);
    return out->tried ? 0 : -1;
}

void
kf_torch_found_free (kf_torch_found_t *found)
{
    free (found->python);
    free (found->version);
    free (found->tried);
    *found = (kf_torch_found_t) { 0 };
}
