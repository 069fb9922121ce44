/*  test_common_parts.c - the small pieces of common/ that several
 *  programs share: KF_TAKE and KF_CLEAR (kf_take.h), the monotonic clock
 *  (kf_clock.h), a name in a list (kf_str.h), a text's last line
 *  (kf_text.h), a source's #define (kf_source.h), the Python
 *  interpreters tried for torch and why one failed (kf_python.h), a
 *  job's failure (kf_worker.h), a run's private working directory
 *  (kf_subproc.h), a worker's cache folder (kf_file.h) and a member
 *  copied or null (kf_json.h). */
#include "../kf_test.h"
#include "kf_clock.h"
#include "kf_file.h"
#include "kf_json.h"
#include "kf_python.h"
#include "kf_source.h"
#include "kf_str.h"
#include "kf_subproc.h"
#include "kf_take.h"
#include "kf_text.h"
#include "kf_worker.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

typedef struct {
    int n;
} s_thing_t;

static int s_destroyed;

//  A destroy written as kf_take.h says.
static void
s_thing_destroy (s_thing_t **self_p)
{
    s_thing_t *self = KF_TAKE (self_p);
    if (self) {
        s_destroyed++;
        free (self);
    }
}

static void
s_test_take (void)
{
    s_thing_t *thing = calloc (1, sizeof *thing);
    s_thing_t **holder = &thing;
    //  The holder is read once, even as an expression with an effect.
    int reads = 0;
    s_thing_t *taken = KF_TAKE ((reads++, holder));
    CHECK (reads == 1);
    CHECK (taken && thing == NULL);
    thing = taken;
    s_thing_destroy (&thing);
    CHECK (thing == NULL && s_destroyed == 1);
    s_thing_destroy (&thing);           //  again: nothing
    s_thing_destroy (NULL);             //  no holder: nothing
    CHECK (s_destroyed == 1);
}

//  A struct held by value whose clear is KF_CLEAR: AddressSanitizer's
//  leak check fails the test if a listed member is not freed, and its
//  double-free check if a second clear frees one again.
typedef struct {
    char *name;
    int *values;
    const char **ptrs;
    int n;
    double score;
} s_record_t;

static void
s_test_clear (void)
{
    s_record_t r = { .name = strdup ("x"), .values = calloc (4, sizeof (int)),
                     .ptrs = calloc (2, sizeof (char *)), .n = 4, .score = 1.5 };
    KF_CLEAR (&r, r.name, r.values, r.ptrs);
    CHECK (!r.name && !r.values && !r.ptrs && r.n == 0 && r.score == 0);
    KF_CLEAR (&r, r.name, r.values, r.ptrs);          //  again: nothing to free
    CHECK (!r.name && r.n == 0);
    //  One member, and a pointer to the struct as a clear takes it.
    s_record_t *p = &(s_record_t) { .name = strdup ("y"), .n = 1 };
    KF_CLEAR (p, p->name);
    CHECK (!p->name && p->n == 0);
}

static void
s_test_clock (void)
{
    //  CLOCK_MONOTONIC in seconds: between two readings of it.
    struct timespec t0, t1;
    clock_gettime (CLOCK_MONOTONIC, &t0);
    double now = kf_clock_now ();
    clock_gettime (CLOCK_MONOTONIC, &t1);
    CHECK (now >= t0.tv_sec + t0.tv_nsec * 1e-9 - 1e-6);
    CHECK (now <= t1.tv_sec + t1.tv_nsec * 1e-9 + 1e-6);
    CHECK (kf_clock_now () >= now);
}

static void
s_test_str_in (void)
{
    static const char *const list[] = { "c", "cu", "cl", NULL };
    static const char *const none[] = { NULL };
    CHECK (kf_str_in ("cu", list));
    CHECK (kf_str_in ("c", list));
    CHECK (!kf_str_in ("cuda", list));
    CHECK (!kf_str_in ("", list));
    CHECK (!kf_str_in ("c", none));
}

static void
s_test_last_line (void)
{
    const char *line = NULL;
    const char *text = "Traceback:\n  File x\nModuleNotFoundError: torch \n\r\n";
    size_t n = kf_text_last_line (text, &line);
    CHECK (n == strlen ("ModuleNotFoundError: torch"));
    CHECK (line && !strncmp (line, "ModuleNotFoundError: torch", n));
    n = kf_text_last_line ("one line", &line);
    CHECK (n == 8 && !strncmp (line, "one line", 8));
    CHECK (kf_text_last_line ("\n \n", &line) == 0);
    CHECK (kf_text_last_line (NULL, &line) == 0 && line && !*line);
    //  kf_text_matches: an extended expression, found or not; a pattern
    //  that does not compile and a missing text match nothing.
    CHECK (kf_text_matches ("for (kb = 0; kb < K; kb += BK)", "\\bkb[[:space:]]*\\+=[[:space:]]*BK\\b"));
    CHECK (!kf_text_matches ("for (k = 0; k < K; k++)", "\\bkb[[:space:]]*\\+="));
    CHECK (!kf_text_matches ("anything", "(unclosed"));
    CHECK (!kf_text_matches (NULL, "x"));
}

static void
s_test_source_define (void)
{
    const char *src = "// #define TILE 4 (a comment)\n"
                      "#define TILE_N 2\n"
                      "  #  define\tTILE \t 16 /* rows */\n"
                      "#define TILE 32\n"
                      "#define LAST 7";
    size_t len = 0;
    const char *v = kf_source_define (src, strlen (src), "TILE", &len);
    CHECK (v && len == strlen ("16 /* rows */") && !strncmp (v, "16 /* rows */", len));
    v = kf_source_define (src, strlen (src), "LAST", &len);
    CHECK (v && len == 1 && *v == '7');
    CHECK (kf_source_define (src, strlen (src), "TIL", &len) == NULL);
    CHECK (kf_source_define (src, strlen (src), "ROWS", &len) == NULL);
    //  SIZE bounds the search: the last line cut off is not read.
    CHECK (kf_source_define (src, strlen (src) - 3, "LAST", &len) == NULL);
}

static void
s_test_python (void)
{
    const char *list[KF_PYTHON_MAX];
    //  A configured interpreter is the only one tried.
    CHECK (kf_python_candidates ("/opt/x/python3", list) == 1
           && !strcmp (list[0], "/opt/x/python3"));
    unsetenv ("KF_PYTHON");
    int n = kf_python_candidates (NULL, list);
    CHECK (n == 3 && !strcmp (list[0], "/opt/torch/.venv/bin/python3")
           && !strcmp (list[1], "/usr/bin/python3") && !strcmp (list[2], "python3"));
    CHECK (kf_python_candidates ("", list) == 3);
    setenv ("KF_PYTHON", "/my/python", 1);
    n = kf_python_candidates (NULL, list);
    CHECK (n == 4 && !strcmp (list[0], "/my/python") && !strcmp (list[3], "python3"));
    unsetenv ("KF_PYTHON");

    char why[64];
    kf_python_why ("Traceback...\nModuleNotFoundError: No module named 'torch'\n", false, 120,
                   why, sizeof why);
    CHECK (!strcmp (why, "ModuleNotFoundError: No module named 'torch'"));
    CHECK (!strcmp (kf_python_why ("half a line", true, 120, why, sizeof why),
                    "import torch took over 120 s"));
    CHECK (!strcmp (kf_python_why ("", false, 120, why, sizeof why), "exited without a word"));
    CHECK (!strcmp (kf_python_why (NULL, false, 120, why, sizeof why), "exited without a word"));
    char small[8];
    kf_python_why ("a long last line\n", false, 1, small, sizeof small);
    CHECK (!strcmp (small, "a long "));
}

static void
s_test_job_fail (void)
{
    kf_job_result_t res = { .ok = true };
    CHECK (kf_job_fail (&res, "payload: %s missing (%d)", "task", 3) == -1);
    CHECK (!res.ok && res.error && !strcmp (res.error, "payload: task missing (3)"));
    CHECK (!res.final);
    free (res.error);
    //  A reason, not a log: cut to KF_JOB_ERROR_MAX - 1 bytes.
    size_t big = 3 * KF_JOB_ERROR_MAX;
    char *text = malloc (big + 1);
    memset (text, 'x', big);
    text[big] = 0;
    res = (kf_job_result_t) { .ok = true };
    kf_job_fail (&res, "reference: %s", text);
    CHECK (res.error && strlen (res.error) == KF_JOB_ERROR_MAX - 1
           && !strncmp (res.error, "reference: xxx", 14));
    free (res.error);
    free (text);
}

static void
s_test_workdir (void)
{
    kf_subproc_limits_t limits;
    kf_subproc_limits_default (&limits);
    CHECK (limits.workdir == NULL);
    char *dir = kf_subproc_workdir (&limits);
    CHECK (dir && limits.workdir == dir);
    struct stat st;
    CHECK (dir && stat (dir, &st) == 0 && S_ISDIR (st.st_mode) && (st.st_mode & 0777) == 0700);
    char *argv[] = { "sh", "-c", "pwd", NULL };
    kf_subproc_result_t run;
    //  The run works in it.
    if (dir && kf_subproc_run (argv, &limits, &run) == 0) {
        CHECK (run.exit_code == 0 && run.output && strstr (run.output, dir));
        kf_subproc_result_free (&run);
    }
    else
        CHECK (!"the run in the working directory started");
    if (dir) {
        kf_subproc_rmtree (dir);
        CHECK (stat (dir, &st) != 0);
    }
    free (dir);

    //  A directory that cannot be made leaves LIMITS as they were.
    char *tmpdir = getenv ("TMPDIR") ? strdup (getenv ("TMPDIR")) : NULL;
    setenv ("TMPDIR", "/nonexistent/kf-test", 1);
    kf_subproc_limits_default (&limits);
    CHECK (kf_subproc_workdir (&limits) == NULL && limits.workdir == NULL);
    if (tmpdir)
        setenv ("TMPDIR", tmpdir, 1);
    else
        unsetenv ("TMPDIR");
    free (tmpdir);
}

//  Sets or unsets (VALUE NULL) the environment variable NAME.
static void
s_setenv (const char *name, const char *value)
{
    if (value)
        setenv (name, value, 1);
    else
        unsetenv (name);
}

static void
s_test_cache_dir (void)
{
    char *xdg_was = getenv ("XDG_CACHE_HOME") ? strdup (getenv ("XDG_CACHE_HOME")) : NULL;
    char *home_was = getenv ("HOME") ? strdup (getenv ("HOME")) : NULL;
    CHECK (kf_file_cache_dir ("off", "compile") == NULL);
    char *dir = kf_file_cache_dir ("/some/where", "compile");
    CHECK (dir && !strcmp (dir, "/some/where"));
    free (dir);

    char root[] = "/tmp/kf-cache-dir-XXXXXX";
    CHECK (mkdtemp (root) != NULL);
    char want[200], parent[200];
    struct stat st;
    //  $XDG_CACHE_HOME, its missing parents made, the leaf left to the cache.
    char xdg[100];
    snprintf (xdg, sizeof xdg, "%s/x/y", root);
    setenv ("XDG_CACHE_HOME", xdg, 1);
    dir = kf_file_cache_dir (NULL, "compile");
    snprintf (want, sizeof want, "%s/kernelfoundry/compile", xdg);
    snprintf (parent, sizeof parent, "%s/kernelfoundry", xdg);
    CHECK (dir && !strcmp (dir, want));
    CHECK (stat (parent, &st) == 0 && S_ISDIR (st.st_mode));
    CHECK (stat (want, &st) != 0);
    free (dir);
    //  Without it (or empty), ~/.cache.
    setenv ("XDG_CACHE_HOME", "", 1);
    setenv ("HOME", root, 1);
    dir = kf_file_cache_dir ("", "reference");
    snprintf (want, sizeof want, "%s/.cache/kernelfoundry/reference", root);
    snprintf (parent, sizeof parent, "%s/.cache/kernelfoundry", root);
    CHECK (dir && !strcmp (dir, want));
    CHECK (stat (parent, &st) == 0 && S_ISDIR (st.st_mode));
    free (dir);
    kf_subproc_rmtree (root);
    s_setenv ("XDG_CACHE_HOME", xdg_was);
    s_setenv ("HOME", home_was);
    free (xdg_was);
    free (home_was);
}

static void
s_test_jref (void)
{
    json_t *obj = json_pack ("{s:[i]}", "list", 1);
    json_t *list = json_object_get (obj, "list");
    json_t *got = kf_jref (obj, "list");
    //  The member itself, one more reference held.
    CHECK (got == list && list->refcount == 2);
    json_decref (got);
    got = kf_jref (obj, "absent");
    CHECK (json_is_null (got));
    json_decref (got);
    got = kf_jref (NULL, "list");
    CHECK (json_is_null (got));
    json_decref (got);
    json_decref (obj);
}

//  kf_file_read_proc: a kernel-made file's start, NUL-terminated, cut to
//  the buffer; a file that is not there reads as an empty string and -1.
static void
s_test_read_proc (void)
{
    char buf[1024], small[8];
    ssize_t n = kf_file_read_proc ("/proc/self/stat", buf, sizeof buf);
    char self[32];
    snprintf (self, sizeof self, "%ld (", (long) getpid ());
    CHECK (n > 0 && (size_t) n == strlen (buf) && !strncmp (buf, self, strlen (self))
           && strchr (buf, ')'));
    CHECK (kf_file_read_proc ("/proc/self/stat", small, sizeof small) == 7
           && strlen (small) == 7 && !strncmp (small, buf, 7));
    strcpy (small, "stale");
    CHECK (kf_file_read_proc ("/proc/self/no-such-file", small, sizeof small) == -1
           && small[0] == 0);
    CHECK (kf_file_read_proc ("/proc/self/stat", small, 0) == -1);
}

int
main (void)
{
    s_test_take ();
    s_test_clear ();
    s_test_clock ();
    s_test_str_in ();
    s_test_last_line ();
    s_test_source_define ();
    s_test_python ();
    s_test_job_fail ();
    s_test_workdir ();
    s_test_cache_dir ();
    s_test_jref ();
    s_test_read_proc ();
    return kf_test_done ("test_common_parts");
}
