/*  kf_exec.c - the exec worker's "evaluate" handler and the entry of the
 *  evaluation child.
 *
 *  The parent side is backend-neutral: write the artifacts and the payload
 *  into a private directory, run `worker --eval-child DIR` in the sandbox,
 *  and turn what came back - result.json, a signal, a timeout, silence -
 *  into a verdict. Which kernel was running when the child died is read
 *  from the phase byte the child keeps in DIR/phase: a candidate's crash
 *  or hang is a verdict (ok), the reference's is a failed job.
 */
#include "kf_exec.h"
#include "kf_backend.h"
#include "kf_log.h"
#include "kf_subproc.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

const kf_exec_backend_t *
kf_exec_backend_find (const char *name)
{
    static const kf_exec_backend_t *const all[] = { &kf_exec_backend_host,
                                                     &kf_exec_backend_cuda, NULL };
    for (int i = 0; all[i]; i++)
        if (name && strcmp (all[i]->name, name) == 0)
            return all[i];
    return NULL;
}

int
kf_exec_child_main (const char *dir)
{
    char path[4200];
    snprintf (path, sizeof path, "%s/job.json", dir);
    json_error_t jerr;
    json_t *job = json_load_file (path, 0, &jerr);
    if (!job)
        return 2;
    const char *name = json_string_value (json_object_get (job, "backend"));
    const kf_exec_backend_t *backend = kf_exec_backend_find (name ? name : "host");
    int rc = backend ? backend->child_main (dir, job) : 2;
    json_decref (job);
    return rc;
}

static int
s_write_file (const char *dir, const char *name, const void *data, size_t size)
{
    char path[4200];
    snprintf (path, sizeof path, "%s/%s", dir, name);
    int fd = open (path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0)
        return -1;
    const char *p = data;
    while (size > 0) {
        ssize_t n = write (fd, p, size);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            close (fd);
            return -1;
        }
        p += n;
        size -= (size_t) n;
    }
    return close (fd);
}

static char
s_read_phase (const char *dir)
{
    char path[4200], c = 'H';
    snprintf (path, sizeof path, "%s/phase", dir);
    int fd = open (path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd >= 0) {
        if (read (fd, &c, 1) != 1)
            c = 'H';
        close (fd);
    }
    return c;
}

static void
s_fail (kf_job_result_t *res, const char *fmt, const char *arg)
{
    char msg[1024];
    snprintf (msg, sizeof msg, fmt, arg);
    res->ok = false;
    res->error = strdup (msg);
}

//  The last line of the child's output, for a crash report.
static void
s_last_line (const char *out, char *buf, size_t size)
{
    size_t len = strlen (out);
    while (len && (out[len - 1] == '\n' || out[len - 1] == '\r'))
        len--;
    size_t start = len;
    while (start && out[start - 1] != '\n')
        start--;
    snprintf (buf, size, "%.*s", (int) (len - start), out + start);
}

void
kf_exec_handle (void *arg, const kf_job_t *job, kf_job_result_t *res)
{
    const kf_exec_config_t *cfg = arg;
    memset (res, 0, sizeof *res);
    double time_limit = cfg && cfg->time_limit_s > 0 ? cfg->time_limit_s : 120;
    const char *backend = cfg && cfg->backend ? cfg->backend : "host";
    if (!kf_exec_backend_find (backend)) {
        s_fail (res, "unknown backend '%s'", backend);
        return;
    }
    if (!json_is_object (json_object_get (job->payload, "task"))) {
        s_fail (res, "payload: task missing%s", "");
        return;
    }
    if (!job->frames || zmsg_size (job->frames) < 2) {
        s_fail (res, "need two frames: candidate and reference artifacts%s", "");
        return;
    }
    //  /proc/self/exe must be resolved here: after the drop to the
    //  sandbox user the child may not read its own /proc entry.
    const char *worker = cfg && cfg->worker_path ? cfg->worker_path : "/proc/self/exe";
    char resolved[PATH_MAX];
    if (strncmp (worker, "/proc/self/", 11) == 0) {
        ssize_t n = readlink (worker, resolved, sizeof resolved - 1);
        if (n <= 0) {
            s_fail (res, "cannot resolve the worker binary: %s", strerror (errno));
            return;
        }
        resolved[n] = 0;
        worker = resolved;
    }

    kf_subproc_limits_t limits;
    kf_subproc_limits_default (&limits);
    limits.time_limit_s = time_limit;
    limits.output_cap = 64 * 1024;
    limits.memory_bytes = cfg && cfg->memory_bytes ? cfg->memory_bytes : (size_t) 16 << 30;
    if (kf_exec_backend_find (backend)->unlimited_address_space)
        limits.memory_bytes = 0;
#if defined(__SANITIZE_ADDRESS__)
    //  AddressSanitizer reserves terabytes of shadow address space, which
    //  any RLIMIT_AS would refuse; sanitizer builds are for tests only.
    limits.memory_bytes = 0;
#endif
    char *dir = kf_subproc_mkdtemp (&limits);
    if (!dir) {
        s_fail (res, "cannot make a temporary directory: %s", strerror (errno));
        return;
    }
    limits.workdir = dir;
    zframe_t *cand = zmsg_first (job->frames);
    zframe_t *ref = zmsg_next (job->frames);
    json_t *payload = json_deep_copy (job->payload);
    json_object_set_new (payload, "backend", json_string (backend));
    json_object_set_new (payload, "device", json_integer (cfg ? cfg->device : 0));
    char *text = json_dumps (payload, JSON_COMPACT);
    json_decref (payload);
    if (!text
        || s_write_file (dir, "candidate.so", zframe_data (cand), zframe_size (cand))
        || s_write_file (dir, "reference.so", zframe_data (ref), zframe_size (ref))
        || s_write_file (dir, "job.json", text, strlen (text))) {
        s_fail (res, "cannot write the evaluation files: %s", strerror (errno));
        free (text);
        kf_subproc_rmtree (dir);
        free (dir);
        return;
    }
    free (text);

    char *argv[] = { (char *) worker, "--eval-child", dir, NULL };
    kf_subproc_result_t run;
    if (kf_subproc_run (argv, &limits, &run) != 0) {
        s_fail (res, "cannot start the evaluation child: %s", strerror (errno));
        kf_subproc_rmtree (dir);
        free (dir);
        return;
    }
    char phase = s_read_phase (dir);
    char path[4200];
    snprintf (path, sizeof path, "%s/result.json", dir);
    json_error_t jerr;
    json_t *result = run.timed_out ? NULL : json_load_file (path, 0, &jerr);
    const char *verdict = json_string_value (json_object_get (result, "verdict"));
    char detail[512], last[256];
    s_last_line (run.output, last, sizeof last);

    if (run.timed_out) {
        snprintf (detail, sizeof detail, "evaluation exceeded the %.3g s limit while the %s was running",
                  time_limit, phase == 'R' ? "reference" : phase == 'C' ? "candidate" : "harness");
        if (phase == 'R')
            s_fail (res, "reference: %s", detail);
        else {
            res->ok = true;
            res->result = json_pack ("{s:s, s:s, s:n}", "verdict", "timeout",
                                     "detail", detail, "speedup");
        }
    }
    else if (verdict && strcmp (verdict, "reference_failed") == 0) {
        s_fail (res, "reference failed: %s",
                json_string_value (json_object_get (result, "detail")));
    }
    else if (verdict && strcmp (verdict, "harness_failed") == 0) {
        //  The device or its runtime failed outside any kernel (no
        //  device in the child, allocation of the tensors): not the
        //  candidate's fault, so not a verdict.
        s_fail (res, "evaluation harness: %s",
                json_string_value (json_object_get (result, "detail")));
    }
    else if (verdict) {
        //  A verdict followed by a non-zero exit is the harness's own
        //  trouble (a sanitizer report, a failed cleanup): worth a log
        //  line, not a different verdict. The fault handler exits 3.
        if (run.exit_code != 0 && run.exit_code != 3)
            kf_warn ("evaluation child exited with %d after its verdict: %s",
                     run.exit_code, last);
        res->ok = true;
        res->result = json_incref (result);
    }
    else if (phase == 'R') {
        snprintf (detail, sizeof detail, "reference ended the child (signal %d, exit %d): %s",
                  run.signal, run.exit_code, last);
        s_fail (res, "%s", detail);
    }
    else {
        if (run.signal)
            snprintf (detail, sizeof detail, "evaluation child killed by signal %d (%s)%s%s",
                      run.signal, strsignal (run.signal), last[0] ? ": " : "", last);
        else
            snprintf (detail, sizeof detail, "evaluation child exited with code %d without a verdict%s%s",
                      run.exit_code, last[0] ? ": " : "", last);
        res->ok = true;
        res->result = json_pack ("{s:s, s:s, s:n}", "verdict", "crashed",
                                 "detail", detail, "speedup");
    }
    if (res->ok && res->result) {
        //  The child's fault handler writes only verdict and detail.
        if (!json_object_get (res->result, "speedup"))
            json_object_set_new (res->result, "speedup", json_null ());
        json_object_set_new (res->result, "wall_s", json_real (run.wall_s));
    }
    json_decref (result);
    kf_subproc_result_free (&run);
    kf_subproc_rmtree (dir);
    free (dir);
}

json_t *
kf_exec_probe (const char *backend, int device, char **error)
{
    const kf_exec_backend_t *b = kf_exec_backend_find (backend ? backend : "host");
    char why[512];
    *error = NULL;
    if (!b) {
        snprintf (why, sizeof why, "backend: unknown backend '%s' (host, cuda)", backend);
        *error = strdup (why);
        return NULL;
    }
    if (!b->probe)
        return kf_exec_capabilities (b->name);
    why[0] = 0;
    json_t *found = b->probe (device, why, sizeof why);
    if (!found) {
        *error = strdup (why[0] ? why : "no device");
        return NULL;
    }
    json_t *caps = json_object ();
    json_object_set_new (caps, "backends", json_pack ("[s]", b->name));
    json_object_set (caps, "arch", json_object_get (found, "arch"));
    json_object_set (caps, "devices", json_object_get (found, "devices"));
    json_decref (found);
    return caps;
}

json_t *
kf_exec_capabilities (const char *backend)
{
    const kf_exec_backend_t *b = kf_exec_backend_find (backend ? backend : "host");
    if (b && b->probe) {
        char *error = NULL;
        json_t *caps = kf_exec_probe (b->name, 0, &error);
        free (error);
        if (caps)
            return caps;
    }
    struct utsname un;
    json_t *caps = json_object ();
    json_t *backends = json_array ();
    if (b)
        json_array_append_new (backends, json_string (b->name));
    json_object_set_new (caps, "backends", backends);
    json_object_set_new (caps, "arch", json_string (uname (&un) == 0 ? un.machine : "unknown"));
    json_object_set_new (caps, "devices", b && b->devices ? b->devices () : json_array ());
    return caps;
}
