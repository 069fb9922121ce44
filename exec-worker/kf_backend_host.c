/*  kf_exec_backend_host.c - the host (CPU) evaluation harness.
 *
 *  Runs inside the sandboxed evaluation child. The checks exist because
 *  generated kernels cheat or err in known ways: they read stale outputs
 *  (outputs are poisoned with a NaN pattern before every call and must be
 *  fully overwritten), scribble on inputs (inputs are compared with a
 *  pristine clone after every call), write past their buffers (every
 *  buffer ends against a PROT_NONE page and starts after a canary), and
 *  only look right on friendly data (several fresh signed input sets, and
 *  the outputs of the timing loop are checked too).
 *
 *  Timing interleaves reference and candidate samples in this one process
 *  with the same protocol and a cache flush between samples, so the
 *  speedup is a paired ratio that host noise affects equally.
 *
 *  A fault in a kernel is reported from the signal handler with write(2)
 *  only; a shared "phase" byte tells the parent which side was running if
 *  the child dies or hangs without a word.
 */
#include "kf_backend.h"
#include "kf_eval_check.h"
#include "kf_kernel.h"
#include "kf_task.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/sysinfo.h>
#include <time.h>
#include <unistd.h>

#define S_CANARY 64
#define S_MAX_TENSORS 32
#define S_MAX_SCRATCH 64

typedef int (s_forward_fn) (const kf_tensor_t *, int, kf_tensor_t *, int,
                            const kf_ctx_t *);

//  A tensor buffer that ends exactly at a PROT_NONE page and starts after
//  a canary, so overruns fault and underruns are seen afterwards.
typedef struct {
    char *map;
    size_t map_len;
    char *data;
    size_t bytes;
    char *guard;             // first byte of the PROT_NONE page
} s_buf_t;

static size_t s_page;

static double
s_now (void)
{
    struct timespec ts;
    clock_gettime (CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

// --------------------------------------------------------------------------
//  Guarded buffers

static int
s_buf_new (s_buf_t *b, size_t bytes)
{
    memset (b, 0, sizeof *b);
    size_t body = (bytes + S_CANARY + s_page - 1) / s_page * s_page;
    b->map_len = body + s_page;
    b->map = mmap (NULL, b->map_len, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (b->map == MAP_FAILED) {
        b->map = NULL;
        return -1;
    }
    b->guard = b->map + body;
    if (mprotect (b->guard, s_page, PROT_NONE) != 0)
        return -1;
    b->bytes = bytes;
    b->data = b->guard - bytes;
    memset (b->data - S_CANARY, 0xA5, S_CANARY);
    kf_eval_add_guard (b->guard, s_page);
    return 0;
}

static bool
s_canary_ok (const s_buf_t *b)
{
    for (int i = 0; i < S_CANARY; i++)
        if ((unsigned char) b->data[i - S_CANARY] != 0xA5)
            return false;
    return true;
}

static void
s_buf_free (s_buf_t *b)
{
    if (b->map)
        munmap (b->map, b->map_len);
    b->map = NULL;
}

// --------------------------------------------------------------------------
//  The evaluation

typedef struct {
    void *ptrs[S_MAX_SCRATCH];
    int n;
} s_scratch_t;

static void *
s_scratch_alloc (void *state, size_t bytes)
{
    s_scratch_t *s = state;
    if (s->n >= S_MAX_SCRATCH)
        return NULL;
    void *p = malloc (bytes ? bytes : 1);
    if (p)
        s->ptrs[s->n++] = p;
    return p;
}

static void
s_scratch_reset (s_scratch_t *s)
{
    for (int i = 0; i < s->n; i++)
        free (s->ptrs[i]);
    s->n = 0;
}

typedef struct {
    s_forward_fn *ref_fn, *cand_fn;
    int n_in, n_out;
    kf_eval_spec_t in[S_MAX_TENSORS], out[S_MAX_TENSORS];
    s_buf_t in_buf[S_MAX_TENSORS], ref_buf[S_MAX_TENSORS], cand_buf[S_MAX_TENSORS];
    void *in_clone[S_MAX_TENSORS], *ref_saved[S_MAX_TENSORS];
    kf_tensor_t in_t[S_MAX_TENSORS], ref_t[S_MAX_TENSORS], cand_t[S_MAX_TENSORS];
    kf_ctx_t ctx;
    const char **scalar_names;
    double *scalars;
    s_scratch_t scratch;
    kf_eval_tol_t tol;
    kf_eval_worst_t worst;   // correctness figures, worst over the sets
    char detail[512];
} s_eval_t;

//  Runs FN with the outputs OUT_T; tracks the phase for the parent.
static int
s_call (s_eval_t *e, s_forward_fn *fn, kf_tensor_t *out_t, char phase)
{
    kf_eval_set_phase (phase);
    int rc = fn (e->in_t, e->n_in, out_t, e->n_out, &e->ctx);
    kf_eval_set_phase ('H');
    s_scratch_reset (&e->scratch);
    return rc;
}

//  Compares candidate outputs with the reference's. Returns 0 when they
//  agree within the tolerance; otherwise fills e->detail.
static int
s_compare (s_eval_t *e, void *const *ref, const char *when)
{
    int bad = 0;
    char ignored[512];
    for (int o = 0; o < e->n_out; o++)
        if (kf_eval_compare_output (&e->tol, &e->worst, &e->out[o], e->cand_buf[o].data,
                                    ref[o], when, bad ? ignored : e->detail,
                                    bad ? sizeof ignored : sizeof e->detail))
            bad = 1;
    return bad ? -1 : 0;
}

//  Inputs unchanged and canaries intact after a candidate call.
static int
s_check_memory (s_eval_t *e, const char *when)
{
    for (int i = 0; i < e->n_in; i++)
        if (memcmp (e->in_buf[i].data, e->in_clone[i], e->in[i].bytes) != 0) {
            snprintf (e->detail, sizeof e->detail,
                      "%s: inputs changed: the candidate wrote to input '%s'",
                      when, e->in[i].name);
            return -1;
        }
    for (int i = 0; i < e->n_in; i++)
        if (!s_canary_ok (&e->in_buf[i])) {
            snprintf (e->detail, sizeof e->detail,
                      "%s: out-of-bounds write before input '%s'", when, e->in[i].name);
            return -2;
        }
    for (int o = 0; o < e->n_out; o++)
        if (!s_canary_ok (&e->cand_buf[o])) {
            snprintf (e->detail, sizeof e->detail,
                      "%s: out-of-bounds write before output '%s'", when, e->out[o].name);
            return -2;
        }
    return 0;
}

//  Evicts the last-level cache so each sample starts cold, like the
//  first call of a real model step, for both sides alike.
static void
s_flush (unsigned char *buf, size_t size, unsigned salt)
{
    memset (buf, (int) (salt & 0xff), size);
    volatile unsigned char sink = buf[size / 2];
    (void) sink;
}

typedef struct {
    double *ref_ns, *cand_ns;
    int samples, ref_calls, cand_calls;
} s_timing_t;

//  Returns 0, or -1 with e->detail when a kernel failed during timing.
static int
s_time (s_eval_t *e, json_t *timing, s_timing_t *t, int *ref_failed)
{
    double min_time = kf_eval_num (timing, "min_time_s", 1);
    int min_samples = (int) kf_eval_num (timing, "min_samples", 10);
    double warmup_s = kf_eval_num (timing, "warmup_s", 1);
    int warmup_calls = (int) kf_eval_num (timing, "warmup_calls", 10);
    if (min_samples < 3)
        min_samples = 3;
    const int max_samples = 100000;

    long llc = sysconf (_SC_LEVEL3_CACHE_SIZE);
    size_t flush_size = 2 * (size_t) (llc > 0 ? llc : 32 << 20);
    unsigned char *flush = malloc (flush_size);
    if (!flush) {
        snprintf (e->detail, sizeof e->detail, "harness: out of memory for the cache flush");
        return -1;
    }

    //  Warm-up, interleaved, measuring each side's cost per call.
    double ref_total = 0, cand_total = 0;
    int calls = 0;
    double start = s_now ();
    while (calls < warmup_calls || s_now () - start < warmup_s) {
        double t0 = s_now ();
        if (s_call (e, e->ref_fn, e->ref_t, 'R')) {
            *ref_failed = 1;
            goto fail;
        }
        double t1 = s_now ();
        if (s_call (e, e->cand_fn, e->cand_t, 'C'))
            goto cand_fail;
        ref_total += t1 - t0;
        cand_total += s_now () - t1;
        calls++;
    }
    //  Inner loops of about a millisecond: far above clock resolution,
    //  short enough to collect many samples.
    double ref_call = ref_total / calls, cand_call = cand_total / calls;
    t->ref_calls = ref_call > 0 ? (int) ceil (1e-3 / ref_call) : 1000;
    t->cand_calls = cand_call > 0 ? (int) ceil (1e-3 / cand_call) : 1000;
    if (t->ref_calls > 100000) t->ref_calls = 100000;
    if (t->cand_calls > 100000) t->cand_calls = 100000;
    if (t->ref_calls < 1) t->ref_calls = 1;
    if (t->cand_calls < 1) t->cand_calls = 1;

    int cap = 64;
    t->ref_ns = malloc ((size_t) cap * sizeof (double));
    t->cand_ns = malloc ((size_t) cap * sizeof (double));
    double measured = 0;
    t->samples = 0;
    while ((t->samples < min_samples || measured < min_time) && t->samples < max_samples) {
        if (!t->ref_ns || !t->cand_ns) {
            snprintf (e->detail, sizeof e->detail, "harness: out of memory for samples");
            goto fail;
        }
        s_flush (flush, flush_size, (unsigned) t->samples);
        kf_eval_set_phase ('R');
        double t0 = s_now ();
        for (int k = 0; k < t->ref_calls; k++)
            if (e->ref_fn (e->in_t, e->n_in, e->ref_t, e->n_out, &e->ctx)) {
                *ref_failed = 1;
                goto fail;
            }
            else
                s_scratch_reset (&e->scratch);
        double ref_s = s_now () - t0;
        s_flush (flush, flush_size, (unsigned) t->samples + 1);
        kf_eval_set_phase ('C');
        t0 = s_now ();
        for (int k = 0; k < t->cand_calls; k++)
            if (e->cand_fn (e->in_t, e->n_in, e->cand_t, e->n_out, &e->ctx))
                goto cand_fail;
            else
                s_scratch_reset (&e->scratch);
        double cand_s = s_now () - t0;
        kf_eval_set_phase ('H');
        t->ref_ns[t->samples] = ref_s * 1e9 / t->ref_calls;
        t->cand_ns[t->samples] = cand_s * 1e9 / t->cand_calls;
        t->samples++;
        measured += ref_s + cand_s;
        if (t->samples == cap) {
            cap *= 2;
            double *r = realloc (t->ref_ns, (size_t) cap * sizeof (double));
            if (r)
                t->ref_ns = r;
            double *c = realloc (t->cand_ns, (size_t) cap * sizeof (double));
            if (c)
                t->cand_ns = c;
            if (!r || !c)
                break;
        }
    }
    kf_eval_set_phase ('H');
    free (flush);
    return 0;
cand_fail:
    snprintf (e->detail, sizeof e->detail, "timing: candidate kf_forward returned non-zero");
fail:
    kf_eval_set_phase ('H');
    s_scratch_reset (&e->scratch);
    free (flush);
    return -1;
}

static int
s_host_child_main (const char *dir, json_t *job)
{
    s_page = (size_t) sysconf (_SC_PAGESIZE);
    char path[4200];
    if (kf_eval_child_begin (dir) != 0)
        return 2;

    s_eval_t *e = calloc (1, sizeof *e);
    if (!e)
        return 2;
    json_t *task = json_object_get (job, "task");
    json_t *timing = json_object_get (job, "timing");
    uint64_t seed = (uint64_t) json_integer_value (json_object_get (job, "seed"));
    kf_eval_tol_from_task (task, &e->tol, &e->worst);
    int rc = 0;
    void *ref_lib = NULL, *cand_lib = NULL;
    json_t *result = NULL;
    s_timing_t tm = { 0 };

    //  The reference first: if it does not load, the job itself is bad.
    snprintf (path, sizeof path, "%s/reference.so", dir);
    ref_lib = dlopen (path, RTLD_NOW | RTLD_LOCAL);
    e->ref_fn = ref_lib ? (s_forward_fn *) dlsym (ref_lib, "kf_forward") : NULL;
    if (!e->ref_fn) {
        snprintf (e->detail, sizeof e->detail, "reference does not load: %s", dlerror ());
        kf_eval_write_verdict (dir, "reference_failed", e->detail);
        goto done;
    }
    snprintf (path, sizeof path, "%s/candidate.so", dir);
    kf_eval_set_phase ('C');     // constructors of the candidate run in dlopen
    cand_lib = dlopen (path, RTLD_NOW | RTLD_LOCAL);
    e->cand_fn = cand_lib ? (s_forward_fn *) dlsym (cand_lib, "kf_forward") : NULL;
    kf_eval_set_phase ('H');
    if (!e->cand_fn) {
        const char *err = dlerror ();
        snprintf (e->detail, sizeof e->detail, "candidate does not load: %s",
                  err ? err : "no kf_forward");
        kf_eval_write_verdict (dir, "load_failed", e->detail);
        goto done;
    }

    json_t *ins = json_object_get (task, "inputs");
    json_t *outs = json_object_get (task, "outputs");
    e->n_in = (int) json_array_size (ins);
    e->n_out = (int) json_array_size (outs);
    if (e->n_out < 1 || e->n_in > S_MAX_TENSORS || e->n_out > S_MAX_TENSORS) {
        kf_eval_write_verdict (dir, "reference_failed", "task: need 1 to 32 outputs and at most 32 inputs");
        goto done;
    }
    for (int i = 0; i < e->n_in; i++) {
        if (kf_eval_spec (&e->in[i], json_array_get (ins, (size_t) i), e->detail, sizeof e->detail)
            || s_buf_new (&e->in_buf[i], e->in[i].bytes)
            || !(e->in_clone[i] = malloc (e->in[i].bytes ? e->in[i].bytes : 1))) {
            kf_eval_write_verdict (dir, "reference_failed", e->detail[0] ? e->detail : "out of memory for inputs");
            goto done;
        }
        kf_eval_tensor (&e->in_t[i], &e->in[i], e->in_buf[i].data);
    }
    for (int o = 0; o < e->n_out; o++) {
        if (kf_eval_spec (&e->out[o], json_array_get (outs, (size_t) o), e->detail, sizeof e->detail)
            || s_buf_new (&e->ref_buf[o], e->out[o].bytes)
            || s_buf_new (&e->cand_buf[o], e->out[o].bytes)
            || !(e->ref_saved[o] = malloc (e->out[o].bytes ? e->out[o].bytes : 1))) {
            kf_eval_write_verdict (dir, "reference_failed", e->detail[0] ? e->detail : "out of memory for outputs");
            goto done;
        }
        kf_eval_tensor (&e->ref_t[o], &e->out[o], e->ref_buf[o].data);
        kf_eval_tensor (&e->cand_t[o], &e->out[o], e->cand_buf[o].data);
    }
    json_t *scalars = json_object_get (task, "scalars");
    size_t n_scalars = json_object_size (scalars);
    e->scalar_names = calloc (n_scalars + 1, sizeof *e->scalar_names);
    e->scalars = calloc (n_scalars + 1, sizeof *e->scalars);
    if (!e->scalar_names || !e->scalars) {
        kf_eval_write_verdict (dir, "reference_failed", "out of memory for scalars");
        goto done;
    }
    const char *key;
    json_t *value;
    json_object_foreach (scalars, key, value) {
        e->scalar_names[e->ctx.n_scalars] = key;
        e->scalars[e->ctx.n_scalars++] = json_number_value (value);
    }
    e->ctx.backend = KF_BACKEND_HOST;
    e->ctx.scalar_names = e->scalar_names;
    e->ctx.scalars = e->scalars;
    e->ctx.scratch_alloc = s_scratch_alloc;
    e->ctx.scratch_state = &e->scratch;

    //  Correctness: fresh inputs per set, seeded from the job's seed.
    const int n_sets = 5;
    const char *verdict = "correct";
    for (int set = 0; set < n_sets && !strcmp (verdict, "correct"); set++) {
        for (int i = 0; i < e->n_in; i++) {
            kf_eval_fill (json_object_get (e->in[i].spec, "dist"), e->in[i].dtype,
                          e->in_buf[i].data, e->in[i].numel, kf_eval_input_seed (seed, set, i));
            memcpy (e->in_clone[i], e->in_buf[i].data, e->in[i].bytes);
        }
        for (int o = 0; o < e->n_out; o++)
            kf_eval_poison (e->out[o].dtype, e->ref_buf[o].data, e->out[o].numel);
        int r = s_call (e, e->ref_fn, e->ref_t, 'R');
        if (r) {
            snprintf (e->detail, sizeof e->detail, "reference kf_forward returned %d on set %d", r, set);
            kf_eval_write_verdict (dir, "reference_failed", e->detail);
            goto done;
        }
        for (int o = 0; o < e->n_out; o++)
            memcpy (e->ref_saved[o], e->ref_buf[o].data, e->out[o].bytes);
        for (int i = 0; i < e->n_in; i++)
            memcpy (e->in_buf[i].data, e->in_clone[i], e->in[i].bytes);
        for (int o = 0; o < e->n_out; o++)
            kf_eval_poison (e->out[o].dtype, e->cand_buf[o].data, e->out[o].numel);
        r = s_call (e, e->cand_fn, e->cand_t, 'C');
        e->worst.sets = set + 1;
        char when[32];
        snprintf (when, sizeof when, "set %d", set);
        int mem = s_check_memory (e, when);
        if (mem == -2)
            verdict = "crashed";
        else if (mem == -1)
            verdict = "incorrect";
        else if (r) {
            snprintf (e->detail, sizeof e->detail, "%s: candidate kf_forward returned %d", when, r);
            verdict = "incorrect";
        }
        else if (s_compare (e, e->ref_saved, when))
            verdict = "incorrect";
    }

    //  Timing on the last set, then the timing loop's outputs checked.
    int ref_failed = 0;
    if (!strcmp (verdict, "correct")) {
        for (int o = 0; o < e->n_out; o++)
            kf_eval_poison (e->out[o].dtype, e->cand_buf[o].data, e->out[o].numel);
        if (s_time (e, timing, &tm, &ref_failed)) {
            if (ref_failed) {
                kf_eval_write_verdict (dir, "reference_failed", "reference kf_forward failed during timing");
                goto done;
            }
            verdict = "incorrect";
        }
        else {
            int mem = s_check_memory (e, "timing");
            if (mem == -2)
                verdict = "crashed";
            else if (mem == -1 || s_compare (e, e->ref_saved, "timing"))
                verdict = "incorrect";
        }
    }

    result = json_object ();
    json_object_set_new (result, "verdict", json_string (verdict));
    json_object_set_new (result, "detail", json_string (!strcmp (verdict, "correct")
                                 ? "all checks passed" : e->detail));
    json_object_set_new (result, "correctness", kf_eval_correctness_json (&e->worst));
    if (tm.samples > 0 && !strcmp (verdict, "correct")) {
        double speedup = kf_eval_paired_speedup (tm.ref_ns, tm.cand_ns, tm.samples);
        if (speedup >= 0)
            json_object_set_new (result, "speedup", json_real (speedup));
        json_object_set_new (result, "candidate", kf_eval_timing_json (tm.cand_ns, tm.samples, tm.cand_calls));
        json_object_set_new (result, "reference", kf_eval_timing_json (tm.ref_ns, tm.samples, tm.ref_calls));
    }
    else
        json_object_set_new (result, "speedup", json_null ());
    kf_eval_write_result (dir, result);

done:
    json_decref (result);
    free (tm.ref_ns);
    free (tm.cand_ns);
    for (int i = 0; i < S_MAX_TENSORS; i++) {
        s_buf_free (&e->in_buf[i]);
        s_buf_free (&e->ref_buf[i]);
        s_buf_free (&e->cand_buf[i]);
        free (e->in_clone[i]);
        free (e->ref_saved[i]);
    }
    free (e->scalar_names);
    free (e->scalars);
    free (e);
    //  Libraries stay loaded: a candidate's destructors could still run
    //  code, and the process ends right after this anyway.
    (void) ref_lib;
    (void) cand_lib;
    return rc;
}

static json_t *
s_host_devices (void)
{
    char model[256] = "unknown CPU";
    FILE *f = fopen ("/proc/cpuinfo", "r");
    if (f) {
        char line[512];
        while (fgets (line, sizeof line, f))
            if (strncmp (line, "model name", 10) == 0) {
                char *colon = strchr (line, ':');
                if (colon) {
                    colon++;
                    while (*colon == ' ' || *colon == '\t')
                        colon++;
                    snprintf (model, sizeof model, "%.*s", (int) strcspn (colon, "\n"), colon);
                }
                break;
            }
        fclose (f);
    }
    struct sysinfo si;
    json_int_t memory = sysinfo (&si) == 0 ? (json_int_t) si.totalram * si.mem_unit : 0;
    json_t *devices = json_array ();
    json_array_append_new (devices, json_pack ("{s:s, s:i, s:I}", "name", model,
                           "cores", (int) sysconf (_SC_NPROCESSORS_ONLN),
                           "memory_bytes", memory));
    return devices;
}

const kf_exec_backend_t kf_exec_backend_host = {
    .name = "host",
    .child_main = s_host_child_main,
    .devices = s_host_devices,
};
