/*  kf_compile.c - the compile worker's job handler.
 *
 *  Each job gets a private directory holding the source and a copy of
 *  kf_kernel.h (built into this binary, so a deployed worker needs no
 *  repository), and the compiler runs in a sandboxed child with a time
 *  limit and an output cap: a compiler can be made to loop or to print
 *  without end by a hostile source. The compiler's log goes back into
 *  the next prompt, so it is trimmed to what helps a model fix the code:
 *  error lines first, temporary paths stripped, 4 KiB at most.
 */
#include "kf_compile.h"
#include "kf_compile_cache.h"
#include "kf_hash.h"
#include "kf_log.h"
#include "kf_subproc.h"
#include "kf_toolchain.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

//  The kernel contract header, embedded by the build (common/embed.sh),
//  so a deployed worker needs no repository and the generator, the
//  compiler and the evaluator can never disagree about the ABI.
extern const char kf_contract_text[];

const char *
kf_compile_kernel_header (size_t *size)
{
    if (size)
        *size = strlen (kf_contract_text);
    return kf_contract_text;
}

int
kf_compile_uses_managed (const char *source, size_t size, const char **what)
{
    //  Managed memory can be over-subscribed into host memory and stall
    //  a GPU other jobs share; no legitimate kernel under this contract
    //  needs it (tensors arrive already on the device).
    static const char *const banned[] = {
        "cudaMallocManaged", "__managed__", "cudaMemAdvise",
        "cudaMemPrefetchAsync", NULL
    };
    for (int i = 0; banned[i]; i++)
        if (memmem (source, size, banned[i], strlen (banned[i]))) {
            if (what)
                *what = banned[i];
            return 1;
        }
    return 0;
}

//  Copies LOG with every occurrence of DIR/ removed and DIR itself
//  written as ".", so "/tmp/kf-x1y2/kernel.c:3:5" reads "kernel.c:3:5".
static char *
s_strip_dir (const char *log, const char *dir)
{
    size_t dir_len = dir ? strlen (dir) : 0;
    char *out = malloc (strlen (log) + 1);
    if (!out)
        return NULL;
    char *w = out;
    const char *r = log;
    while (*r) {
        if (dir_len && strncmp (r, dir, dir_len) == 0) {
            r += dir_len;
            if (*r == '/')
                r++;
            else
                *w++ = '.';
            continue;
        }
        *w++ = *r++;
    }
    *w = 0;
    return out;
}

static bool
s_is_error_line (const char *line, size_t len)
{
    for (size_t i = 0; i + 5 <= len; i++)
        if (strncasecmp (line + i, "error", 5) == 0)
            return true;
    return false;
}

char *
kf_compile_trim_log (const char *log, const char *dir, size_t max)
{
    if (max < 128)
        max = 128;
    char *text = s_strip_dir (log ? log : "", dir);
    char *out = malloc (max + 1);
    if (!text || !out) {
        free (text);
        free (out);
        return NULL;
    }
    //  Room kept for the "[N more lines omitted]" trailer.
    size_t budget = max - 48, used = 0;
    int omitted = 0;
    for (int pass = 0; pass < 2; pass++) {
        const char *line = text;
        while (*line) {
            size_t len = strcspn (line, "\n");
            const char *next = line + len + (line[len] ? 1 : 0);
            bool blank = strspn (line, " \t\r") >= len;
            bool error = s_is_error_line (line, len);
            if (!blank && error == (pass == 0)) {
                if (used + len + 1 <= budget) {
                    memcpy (out + used, line, len);
                    used += len;
                    out[used++] = '\n';
                }
                else if (used == 0) {
                    //  One enormous first line: keep its start.
                    memcpy (out, line, budget - 1);
                    used = budget - 1;
                    out[used++] = '\n';
                }
                else
                    omitted++;
            }
            line = next;
        }
    }
    out[used] = 0;
    if (omitted)
        snprintf (out + used, max + 1 - used, "[%d more lines omitted]\n", omitted);
    free (text);
    return out;
}

static void *
s_read_file (const char *path, size_t *size)
{
    int fd = open (path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0)
        return NULL;
    struct stat st;
    if (fstat (fd, &st) != 0 || !S_ISREG (st.st_mode)) {
        close (fd);
        return NULL;
    }
    char *buf = malloc ((size_t) st.st_size + 1);
    size_t got = 0;
    while (buf && got < (size_t) st.st_size) {
        ssize_t n = read (fd, buf + got, (size_t) st.st_size - got);
        if (n <= 0) {
            if (n < 0 && errno == EINTR)
                continue;
            break;
        }
        got += (size_t) n;
    }
    close (fd);
    if (!buf || got != (size_t) st.st_size) {
        free (buf);
        return NULL;
    }
    *size = got;
    return buf;
}

//  A JSON string of TEXT even when the compiler printed bytes that are not
//  UTF-8 (jansson refuses those): such bytes become '?'.
static json_t *
s_json_text (const char *text)
{
    json_t *s = json_string (text);
    if (s)
        return s;
    char *copy = strdup (text);
    if (!copy)
        return json_string ("");
    for (char *p = copy; *p; p++)
        if ((unsigned char) *p >= 0x80)
            *p = '?';
    s = json_string (copy);
    free (copy);
    return s ? s : json_string ("");
}

static void
s_fail (kf_job_result_t *res, const char *fmt, const char *arg)
{
    char msg[512];
    snprintf (msg, sizeof msg, fmt, arg);
    res->ok = false;
    res->error = strdup (msg);
}

//  Fills RES with the verdict "did not compile" and LOG as the reason.
static void
s_not_compiled (kf_job_result_t *res, const char *toolchain, const char *log,
                double wall_s)
{
    json_t *r = json_object ();
    json_object_set_new (r, "compiled", json_false ());
    json_object_set_new (r, "artifact_hash", json_null ());
    json_object_set_new (r, "toolchain", json_string (toolchain ? toolchain : ""));
    json_object_set_new (r, "log", s_json_text (log));
    json_object_set_new (r, "wall_s", json_real (wall_s));
    res->ok = true;
    res->result = r;
}

static void
s_compiled (kf_job_result_t *res, const char *toolchain, const void *so, size_t so_size,
            const char *log, double wall_s, bool cached)
{
    char hash[65];
    kf_sha256_hex (so, so_size, hash);
    json_t *r = json_object ();
    json_object_set_new (r, "compiled", json_true ());
    json_object_set_new (r, "artifact_hash", json_string (hash));
    json_object_set_new (r, "toolchain", json_string (toolchain));
    json_object_set_new (r, "log", s_json_text (log));
    json_object_set_new (r, "wall_s", json_real (wall_s));
    json_object_set_new (r, "cached", json_boolean (cached));
    res->ok = true;
    res->result = r;
    res->frames = zmsg_new ();
    zmsg_addmem (res->frames, so, so_size);
}

void
kf_compile_handle (void *arg, const kf_job_t *job, kf_job_result_t *res)
{
    const kf_compile_config_t *cfg = arg;
    double time_limit = cfg && cfg->time_limit_s > 0 ? cfg->time_limit_s : 60;
    size_t output_cap = cfg && cfg->output_cap ? cfg->output_cap : 64 * 1024;
    memset (res, 0, sizeof *res);

    const char *language = json_string_value (json_object_get (job->payload, "language"));
    if (!language) {
        s_fail (res, "payload: language missing%s", "");
        return;
    }
    const kf_toolchain_t *tc = kf_toolchain_for_language (language);
    if (!tc) {
        s_fail (res, "no toolchain for language '%s'", language);
        return;
    }
    json_t *target = json_object_get (job->payload, "target");
    const char *backend = json_string_value (json_object_get (target, "backend"));
    const char *arch = json_string_value (json_object_get (target, "arch"));
    if (backend && strcmp (backend, tc->backend) != 0) {
        s_fail (res, "target backend '%s' does not match the language", backend);
        return;
    }
    zframe_t *frame = job->frames ? zmsg_first (job->frames) : NULL;
    if (!frame) {
        s_fail (res, "no source frame%s", "");
        return;
    }
    const char *source = (const char *) zframe_data (frame);
    size_t source_size = zframe_size (frame);
    const char *want_hash = json_string_value (json_object_get (job->payload, "source_hash"));
    if (want_hash) {
        char have[65];
        kf_sha256_hex (source, source_size, have);
        if (strcmp (have, want_hash) != 0) {
            s_fail (res, "source_hash does not match the source frame%s", "");
            return;
        }
    }
    char *program = tc->find ();
    if (!program) {
        s_fail (res, "toolchain '%s' is not installed", tc->name);
        return;
    }
    char *version = kf_toolchain_version (tc);
    const char *toolchain = version ? version : tc->name;

    const char *managed = NULL;
    if (strcmp (tc->language, "cuda") == 0
        && kf_compile_uses_managed (source, source_size, &managed)) {
        char log[256];
        snprintf (log, sizeof log,
                  "refused before compiling: the source uses managed memory (%s); "
                  "allocate with cudaMalloc or use ctx->scratch_alloc instead\n",
                  managed);
        s_not_compiled (res, toolchain, log, 0);
        free (program);
        free (version);
        return;
    }

    kf_subproc_limits_t limits;
    kf_subproc_limits_default (&limits);
    limits.time_limit_s = time_limit;
    limits.output_cap = output_cap;
    char *dir = kf_subproc_mkdtemp (&limits);
    if (!dir) {
        s_fail (res, "cannot make a temporary directory: %s", strerror (errno));
        free (program);
        free (version);
        return;
    }
    size_t header_size;
    const char *header = kf_compile_kernel_header (&header_size);
    if (kf_subproc_write_file (dir, tc->source_name, source, source_size) != 0
        || kf_subproc_write_file (dir, "kf_kernel.h", header, header_size) != 0) {
        s_fail (res, "cannot write the source: %s", strerror (errno));
        goto done;
    }
    limits.workdir = dir;

    char *argv[32], buf[256];
    kf_toolchain_args_t args = {
        .source = tc->source_name, .output = "kernel.so",
        .include_dir = ".", .arch = arch
    };
    if (tc->command (program, &args, argv, 32, buf, sizeof buf) != 0) {
        s_fail (res, "cannot build the %s command line", tc->name);
        goto done;
    }
    const char *cache_dir = cfg ? cfg->cache_dir : NULL;
    char key[65];
    kf_compile_cache_key (toolchain, argv, header, header_size, source, source_size, key);
    void *cached_so;
    size_t cached_size;
    char *cached_log;
    if (kf_compile_cache_get (cache_dir, key, &cached_so, &cached_size, &cached_log)) {
        if (cached_so)
            s_compiled (res, toolchain, cached_so, cached_size, cached_log, 0, true);
        else
            s_not_compiled (res, toolchain, cached_log, 0);
        json_object_set_new (res->result, "cached", json_true ());
        free (cached_so);
        free (cached_log);
        goto done;
    }
    kf_subproc_result_t run;
    if (kf_subproc_run (argv, &limits, &run) != 0) {
        s_fail (res, "cannot run the compiler: %s", strerror (errno));
        goto done;
    }
    char *log = kf_compile_trim_log (run.output, dir, KF_COMPILE_LOG_MAX);
    char so_path[4200];
    snprintf (so_path, sizeof so_path, "%s/kernel.so", dir);
    size_t so_size = 0;
    void *so = NULL;
    if (run.exit_code == 0 && !run.timed_out)
        so = s_read_file (so_path, &so_size);

    if (!so) {
        char head[160] = "";
        if (run.timed_out)
            snprintf (head, sizeof head, "compile timed out after %.0f s\n", time_limit);
        else if (run.signal)
            snprintf (head, sizeof head, "compiler killed by signal %d\n", run.signal);
        else if (run.exit_code == 0)
            snprintf (head, sizeof head, "compiler reported success but wrote no shared object\n");
        size_t len = strlen (head) + strlen (log ? log : "") + 1;
        char *full = malloc (len);
        if (full)
            snprintf (full, len, "%s%s", head, log ? log : "");
        s_not_compiled (res, toolchain, full ? full : head, run.wall_s);
        /* A timeout or a killed compiler says nothing lasting about the
         * source: only a real compile error is remembered. */
        if (!run.timed_out && !run.signal)
            kf_compile_cache_put (cache_dir, key, NULL, 0, full ? full : head,
                                  cfg ? cfg->cache_max_bytes : 0);
        free (full);
    }
    else {
        s_compiled (res, toolchain, so, so_size, log ? log : "", run.wall_s, false);
        kf_compile_cache_put (cache_dir, key, so, so_size, log ? log : "",
                              cfg ? cfg->cache_max_bytes : 0);
        free (so);
    }
    free (log);
    kf_subproc_result_free (&run);
done:
    kf_subproc_rmtree (dir);
    free (dir);
    free (program);
    free (version);
}

json_t *
kf_compile_capabilities (void)
{
    json_t *caps = json_object ();
    json_t *backends = json_array ();
    json_t *toolchains = json_object ();
    //  A backend is offered only when a toolchain for it answers.
    const kf_toolchain_t *const *all = kf_toolchain_all ();
    for (int i = 0; all[i]; i++) {
        char *version = kf_toolchain_version (all[i]);
        if (!version)
            continue;
        json_object_set_new (toolchains, all[i]->name, s_json_text (version));
        free (version);
        bool listed = false;
        size_t k;
        json_t *b;
        json_array_foreach (backends, k, b)
            listed |= strcmp (json_string_value (b), all[i]->backend) == 0;
        if (!listed)
            json_array_append_new (backends, json_string (all[i]->backend));
    }
    struct utsname un;
    json_object_set_new (caps, "backends", backends);
    json_object_set_new (caps, "arch", json_string (uname (&un) == 0 ? un.machine : "unknown"));
    json_object_set_new (caps, "toolchains", toolchains);
    return caps;
}
