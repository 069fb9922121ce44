/*  kf_model_profile.c - the `model_profile` job (kf_model_profile.h).
 *
 *  The model is a user's file, so it runs as a problem of a reference job
 *  does: in its own sandboxed child with the worker's torch, in a private
 *  folder that is its working directory and HOME, under a wall-clock
 *  limit. The child writes result.json there; the worker reads it as a
 *  regular file of bounded size and checks its shape before it becomes
 *  the job's result.
 */
#include "kf_model_profile.h"
#include "kf_file.h"
#include "kf_json.h"
#include "kf_str.h"
#include "kf_subproc.h"
#include "kf_torch_ref.h"
#include <errno.h>
#include <stdlib.h>
#include <string.h>

extern const char kf_profile_model_py[];

#define S_SOURCE_MAX (1 << 20)
#define S_RESULT_MAX (16 << 20)
#define S_TIME_LIMIT_S 600

static void
s_fail (kf_job_result_t *res, bool final, char *msg)
{
    res->ok = false;
    res->final = final;
    res->error = msg ? msg : strdup ("out of memory");
}

/* The last MAX bytes of TEXT, trailing blank lines cut (caller frees). */
static char *
s_tail (const char *text, size_t max)
{
    size_t len = text ? strlen (text) : 0;
    while (len && (text[len - 1] == '\n' || text[len - 1] == ' '))
        len--;
    size_t from = len > max ? len - max : 0;
    return kf_strdupf ("%.*s", (int) (len - from), text ? text + from : "");
}

void
kf_model_profile_handle (const kf_job_t *job, kf_job_result_t *res)
{
    memset (res, 0, sizeof *res);
    const char *source = json_string_value (json_object_get (job->payload, "source"));
    json_t *top = json_object_get (job->payload, "top");
    if (!source || strlen (source) > S_SOURCE_MAX) {
        s_fail (res, true, strdup ("payload: source: missing, not a string or over 1 MiB"));
        return;
    }
    if (!json_is_integer (top) || json_integer_value (top) < 1 || json_integer_value (top) > 50) {
        s_fail (res, true, strdup ("payload: top: not an integer in 1..50"));
        return;
    }
    kf_torch_ref_t *ref = kf_torch_ref_shared ();
    const char *python = ref ? kf_torch_ref_python (ref) : NULL;
    if (!python) {
        s_fail (res, false, kf_strdupf ("no Python with torch found (tried: %s)",
                                        kf_torch_ref_tried (ref)));
        return;
    }
    kf_subproc_limits_t limits;
    kf_subproc_limits_default (&limits);
    limits.time_limit_s = S_TIME_LIMIT_S;
    limits.output_cap = 64 * 1024;
    limits.memory_bytes = 0;     /* torch reserves far more than it uses */
    limits.max_procs = 512;      /* a thread per core for torch's pools */
    limits.file_bytes = S_RESULT_MAX;
    char *dir = kf_subproc_workdir (&limits);
    if (!dir) {
        s_fail (res, false, kf_strdupf ("cannot make a temporary directory: %s",
                                        strerror (errno)));
        return;
    }
    char top_text[16], script[4200];
    snprintf (top_text, sizeof top_text, "%d", (int) json_integer_value (top));
    snprintf (script, sizeof script, "%s/kf_profile_model.py", dir);
    if (kf_file_write (dir, "kf_profile_model.py", kf_profile_model_py,
                       strlen (kf_profile_model_py))
        || kf_file_write (dir, "model.py", source, strlen (source))) {
        s_fail (res, false, kf_strdupf ("cannot write the job's files: %s", strerror (errno)));
        kf_subproc_rmtree (dir);
        free (dir);
        return;
    }
    const char *name = json_string_value (json_object_get (job->payload, "name"));
    char *argv[] = { (char *) python, "-B", "-s", script, "model.py", "result.json", top_text,
                     (char *) (name ? name : "model.py"), NULL };
    kf_subproc_result_t run;
    if (kf_subproc_run (argv, &limits, &run) != 0) {
        s_fail (res, false, kf_strdupf ("cannot start %s: %s", python, strerror (errno)));
        kf_subproc_rmtree (dir);
        free (dir);
        return;
    }
    char path[4300];
    snprintf (path, sizeof path, "%s/result.json", dir);
    size_t size = 0;
    char *text = run.timed_out ? NULL : kf_file_read (path, S_RESULT_MAX, &size);
    json_t *result = text ? json_loadb (text, size, 0, NULL) : NULL;
    char *tail = s_tail (run.output, 1500);
    if (json_is_object (result) && json_is_string (json_object_get (result, "error"))) {
        char *tb = s_tail (kf_jstr (result, "traceback"), 3000);
        s_fail (res, true, kf_strdupf ("the model failed in %s\n%s", kf_jstr (result, "error"),
                                       tb ? tb : ""));
        free (tb);
    }
    else if (run.exit_code == 0 && json_is_object (result)
             && json_is_array (json_object_get (result, "operators"))) {
        res->ok = true;
        res->result = json_incref (result);
    }
    else if (run.timed_out)
        s_fail (res, true, kf_strdupf ("the profile exceeded the %d s limit%s%s",
                                       S_TIME_LIMIT_S, tail && *tail ? "; last output:\n" : "",
                                       tail ? tail : ""));
    else
        s_fail (res, false, kf_strdupf ("the profiler ended (exit %d, signal %d) without a "
                                        "result%s%s", run.exit_code, run.signal,
                                        tail && *tail ? "; last output:\n" : "",
                                        tail ? tail : ""));
    free (tail);
    json_decref (result);
    free (text);
    kf_subproc_result_free (&run);
    kf_subproc_rmtree (dir);
    free (dir);
}
