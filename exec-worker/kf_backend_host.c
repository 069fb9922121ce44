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
 *  speedup is a paired ratio that host noise affects equally. The
 *  correctness pass's calls of the main shape count towards the warm-up
 *  floor (kf_eval_warm_t), which then only tops up what is missing.
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
    //  Where the right answers come from: the reference's kf_forward
    //  (REF_FN), or exported PyTorch data (RD over DATA, no REF_FN).
    const kf_eval_refdata_t *rd;
    const char *data;
    kf_eval_degen_t *degen;  // a reference probe: fold the main case's sets
    double ref_s;            // reference wall time over the correctness calls
    int ref_calls;
    bool count_warm;         // the main case of a timed evaluation
    kf_eval_warm_t warm;     // its correctness calls, for the warm-up floor
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
    double warmup_s, topup_s, sampling_s, measured_s;   // the protocol as run
    int counted, topup;                        // warm-up calls per side
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

    //  Warm-up, interleaved, measuring each side's cost per call: what the
    //  correctness pass's calls left of the floor (kf_eval_warm_more).
    double ref_total = 0, cand_total = 0;
    int calls = 0;
    double topup_from = s_now ();
    if (e->warm.since <= 0)
        e->warm.since = topup_from;
    while (kf_eval_warm_more (&e->warm, e->ref_fn != NULL, calls, s_now (), warmup_s,
                              warmup_calls)) {
        double t0 = s_now ();
        if (e->ref_fn && s_call (e, e->ref_fn, e->ref_t, 'R')) {
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
    double sampling_from = s_now ();
    t->warmup_s = sampling_from - e->warm.since;
    t->topup_s = sampling_from - topup_from;
    t->counted = kf_eval_warm_counted (&e->warm, e->ref_fn != NULL);
    t->topup = calls;
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
        //  Without a reference kernel (PyTorch data) the candidate is
        //  timed alone, by the same protocol.
        for (int k = 0; e->ref_fn && k < t->ref_calls; k++)
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
        t->measured_s = measured;
        t->sampling_s = s_now () - sampling_from;
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

//  A case's tensors: guarded buffers for TASK's (possibly reshaped)
//  inputs and outputs, and the scalars.
static int
s_setup (s_eval_t *e, json_t *task)
{
    json_t *ins = json_object_get (task, "inputs");
    json_t *outs = json_object_get (task, "outputs");
    e->n_in = (int) json_array_size (ins);
    e->n_out = (int) json_array_size (outs);
    if (e->n_out < 1 || e->n_in > S_MAX_TENSORS || e->n_out > S_MAX_TENSORS) {
        snprintf (e->detail, sizeof e->detail, "task: need 1 to 32 outputs and at most 32 inputs");
        return -1;
    }
    for (int i = 0; i < e->n_in; i++) {
        if (kf_eval_spec (&e->in[i], json_array_get (ins, (size_t) i), e->detail, sizeof e->detail)
            || s_buf_new (&e->in_buf[i], e->in[i].bytes)
            || !(e->in_clone[i] = malloc (e->in[i].bytes ? e->in[i].bytes : 1))) {
            if (!e->detail[0])
                snprintf (e->detail, sizeof e->detail, "out of memory for inputs");
            return -1;
        }
        kf_eval_tensor (&e->in_t[i], &e->in[i], e->in_buf[i].data);
    }
    for (int o = 0; o < e->n_out; o++) {
        if (kf_eval_spec (&e->out[o], json_array_get (outs, (size_t) o), e->detail, sizeof e->detail)
            || s_buf_new (&e->ref_buf[o], e->out[o].bytes)
            || s_buf_new (&e->cand_buf[o], e->out[o].bytes)
            || !(e->ref_saved[o] = malloc (e->out[o].bytes ? e->out[o].bytes : 1))) {
            if (!e->detail[0])
                snprintf (e->detail, sizeof e->detail, "out of memory for outputs");
            return -1;
        }
        kf_eval_tensor (&e->ref_t[o], &e->out[o], e->ref_buf[o].data);
        kf_eval_tensor (&e->cand_t[o], &e->out[o], e->cand_buf[o].data);
    }
    json_t *scalars = json_object_get (task, "scalars");
    size_t n_scalars = json_object_size (scalars);
    e->scalar_names = calloc (n_scalars + 1, sizeof *e->scalar_names);
    e->scalars = calloc (n_scalars + 1, sizeof *e->scalars);
    if (!e->scalar_names || !e->scalars) {
        snprintf (e->detail, sizeof e->detail, "out of memory for scalars");
        return -1;
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
    return 0;
}

static void
s_teardown (s_eval_t *e)
{
    for (int i = 0; i < S_MAX_TENSORS; i++) {
        s_buf_free (&e->in_buf[i]);
        s_buf_free (&e->ref_buf[i]);
        s_buf_free (&e->cand_buf[i]);
        free (e->in_clone[i]);
        free (e->ref_saved[i]);
        e->in_clone[i] = e->ref_saved[i] = NULL;
    }
    free (e->scalar_names);
    free (e->scalars);
    e->scalar_names = NULL;
    e->scalars = NULL;
}

//  What a set found; the first that is not S_OK ends the evaluation.
enum { S_OK = 0, S_INCORRECT, S_CRASHED, S_REF_FAILED };

//  One set: inputs (drawn, or the exported ones), the right outputs (the
//  reference's, or the exported ones), then the candidate on the same
//  inputs and every check. WHEN names the set in a detail.
static int
s_run_set (s_eval_t *e, uint64_t seed, int set, const char *when)
{
    const kf_eval_refdata_t *rd = e->rd;
    double t = s_now ();
    for (int i = 0; i < e->n_in; i++) {
        if (rd)
            memcpy (e->in_buf[i].data, e->data + rd->in_off[set * rd->n_in + i], e->in[i].bytes);
        else
            kf_eval_fill (json_object_get (e->in[i].spec, "dist"), e->in[i].dtype,
                          e->in_buf[i].data, e->in[i].numel, kf_eval_input_seed (seed, set, i));
        memcpy (e->in_clone[i], e->in_buf[i].data, e->in[i].bytes);
    }
    kf_eval_split_add (KF_EVAL_S_INPUTS, s_now () - t);
    t = s_now ();
    if (rd) {
        e->ctx.n_scalars = rd->n_scalars;
        e->ctx.scalar_names = rd->name_ptrs;
        e->ctx.scalars = rd->values + (size_t) set * (size_t) rd->n_scalars;
        for (int o = 0; o < e->n_out; o++)
            memcpy (e->ref_saved[o], e->data + rd->out_off[set * rd->n_out + o], e->out[o].bytes);
    }
    else {
        for (int o = 0; o < e->n_out; o++)
            kf_eval_poison (e->out[o].dtype, e->ref_buf[o].data, e->out[o].numel);
        double t0 = s_now ();
        kf_eval_split_add (KF_EVAL_S_COPIES, t0 - t);
        int r = s_call (e, e->ref_fn, e->ref_t, 'R');
        t = s_now ();
        e->ref_s += t - t0;
        e->ref_calls++;
        kf_eval_split_add (KF_EVAL_S_CALLS, t - t0);
        if (e->count_warm)
            kf_eval_warm_count (&e->warm, true, t0);
        if (r) {
            snprintf (e->detail, sizeof e->detail, "reference kf_forward returned %d on %s", r, when);
            return S_REF_FAILED;
        }
        for (int o = 0; o < e->n_out; o++)
            memcpy (e->ref_saved[o], e->ref_buf[o].data, e->out[o].bytes);
        for (int i = 0; i < e->n_in; i++)
            memcpy (e->in_buf[i].data, e->in_clone[i], e->in[i].bytes);
    }
    if (e->degen) {
        uint64_t h = 0;
        for (int i = 0; i < e->n_in; i++)
            h = kf_eval_hash (e->in_clone[i], e->in[i].bytes, h);
        kf_eval_degen_inputs (e->degen, h);
        for (int o = 0; o < e->n_out; o++)
            kf_eval_degen_output (e->degen, o, &e->out[o], e->ref_saved[o],
                                  e->tol.atol_dtype[e->out[o].dtype]);
        kf_eval_degen_end_set (e->degen);
    }
    if (!e->cand_fn)
        return S_OK;            // a probe: the reference alone
    for (int o = 0; o < e->n_out; o++)
        kf_eval_poison (e->out[o].dtype, e->cand_buf[o].data, e->out[o].numel);
    double t0 = s_now ();
    kf_eval_split_add (KF_EVAL_S_COPIES, t0 - t);
    int r = s_call (e, e->cand_fn, e->cand_t, 'C');
    t = s_now ();
    kf_eval_split_add (KF_EVAL_S_CALLS, t - t0);
    if (e->count_warm)
        kf_eval_warm_count (&e->warm, false, t0);
    e->worst.sets++;
    int mem = s_check_memory (e, when);
    t0 = s_now ();
    kf_eval_split_add (KF_EVAL_S_COPIES, t0 - t);
    if (mem == -2)
        return S_CRASHED;
    if (mem == -1)
        return S_INCORRECT;
    if (r) {
        snprintf (e->detail, sizeof e->detail, "%s: candidate kf_forward returned %d", when, r);
        return S_INCORRECT;
    }
    int bad = s_compare (e, e->ref_saved, when);
    kf_eval_split_add (KF_EVAL_S_COMPARE, s_now () - t0);
    return bad ? S_INCORRECT : S_OK;
}

//  Folds the figures of a shape case into the evaluation's.
static void
s_merge_worst (kf_eval_worst_t *into, const kf_eval_worst_t *w)
{
    into->sets += w->sets;
    if (w->match_fraction < into->match_fraction)
        into->match_fraction = w->match_fraction;
    if (w->cosine < into->cosine)
        into->cosine = w->cosine;
    if (w->max_abs > into->max_abs)
        into->max_abs = w->max_abs;
    if (w->max_rel > into->max_rel)
        into->max_rel = w->max_rel;
    into->nonfinite_mismatch += w->nonfinite_mismatch;
}

//  Maps DIR/reference.bin (exported PyTorch data) read-only.
static const char *
s_map_data (const char *dir, size_t *size)
{
    char path[4200];
    snprintf (path, sizeof path, "%s/reference.bin", dir);
    int fd = open (path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0)
        return NULL;
    off_t end = lseek (fd, 0, SEEK_END);
    *size = end > 0 ? (size_t) end : 0;
    void *map = end > 0 ? mmap (NULL, *size, PROT_READ, MAP_PRIVATE, fd, 0) : NULL;
    close (fd);
    if (end == 0)
        return "";
    return map == MAP_FAILED ? NULL : map;
}

static int
s_host_child_main (const char *dir, json_t *job)
{
    s_page = (size_t) sysconf (_SC_PAGESIZE);
    char path[4200];
    if (kf_eval_child_begin (dir) != 0)
        return 2;

    json_t *task = json_object_get (job, "task");
    json_t *timing = json_object_get (job, "timing");
    json_t *refdata = json_object_get (job, "reference_data");
    bool probe = json_is_true (json_object_get (job, "probe"));
    uint64_t seed = (uint64_t) json_integer_value (json_object_get (job, "seed"));
    s_eval_t *e = calloc (1, sizeof *e);
    if (!e)
        return 2;
    kf_eval_tol_from_task (task, &e->tol, &e->worst);
    kf_eval_worst_t total = e->worst;
    kf_eval_refdata_t rd;
    memset (&rd, 0, sizeof rd);
    kf_eval_degen_t degen;
    kf_eval_degen_init (&degen, (int) json_array_size (json_object_get (task, "outputs")));
    json_t *result = NULL;
    s_timing_t tm = { 0 };
    void *ref_lib = NULL, *cand_lib = NULL;
    size_t data_size = 0;

    //  The right answers first: if they cannot be had, the job is bad.
    double t_load = s_now ();
    if (json_is_object (refdata)) {
        e->data = s_map_data (dir, &data_size);
        if (!e->data || kf_eval_refdata_parse (&rd, task, refdata, data_size, e->detail,
                                               sizeof e->detail)) {
            if (!e->data)
                snprintf (e->detail, sizeof e->detail, "reference data does not load");
            kf_eval_write_verdict (dir, "reference_failed", e->detail);
            goto done;
        }
        e->rd = &rd;
    }
    else {
        snprintf (path, sizeof path, "%s/reference.so", dir);
        ref_lib = dlopen (path, RTLD_NOW | RTLD_LOCAL);
        e->ref_fn = ref_lib ? (s_forward_fn *) dlsym (ref_lib, "kf_forward") : NULL;
        if (!e->ref_fn) {
            snprintf (e->detail, sizeof e->detail, "reference does not load: %s", dlerror ());
            kf_eval_write_verdict (dir, "reference_failed", e->detail);
            goto done;
        }
    }
    if (!probe) {
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
    }
    kf_eval_split_add (KF_EVAL_S_MODULES, s_now () - t_load);
    kf_eval_stamp (KF_EVAL_T_LOADED);

    //  Correctness: the main shape (5 fresh input sets, or every exported
    //  set), then 2 sets of each extra shape case, each case in buffers of
    //  its own; the main case's stay for the timing.
    const char *verdict = "correct";
    int n_cases = e->rd ? 1 : kf_eval_n_cases (task);
    for (int c = 0; c < n_cases && !strcmp (verdict, "correct"); c++) {
        s_eval_t *ce = e;
        if (c > 0) {
            ce = calloc (1, sizeof *ce);
            if (!ce) {
                kf_eval_write_verdict (dir, "reference_failed", "out of memory for a shape case");
                goto done;
            }
            ce->ref_fn = e->ref_fn;
            ce->cand_fn = e->cand_fn;
            ce->tol = e->tol;
            ce->worst.match_fraction = ce->worst.cosine = 1;
        }
        ce->degen = probe && c == 0 ? &degen : NULL;
        ce->count_warm = !probe && c == 0;
        json_t *case_task = kf_eval_case_task (task, c);
        char label[256] = "";
        if (c > 0)
            kf_eval_case_label (task, c, label, sizeof label);
        int st = s_setup (ce, case_task) ? S_REF_FAILED : S_OK;
        int n_sets = c > 0 ? 2 : e->rd ? e->rd->n_sets : 5;
        for (int set = 0; set < n_sets && st == S_OK; set++) {
            char when[320];
            snprintf (when, sizeof when, "%s%sset %d", label, c > 0 ? ", " : "", set);
            st = s_run_set (ce, seed, c * 100 + set, when);
        }
        json_decref (case_task);
        if (st == S_REF_FAILED) {
            kf_eval_write_verdict (dir, "reference_failed", ce->detail);
            if (ce != e) {
                s_teardown (ce);
                free (ce);
            }
            goto done;
        }
        if (st != S_OK) {
            verdict = st == S_CRASHED ? "crashed" : "incorrect";
            if (ce != e)
                snprintf (e->detail, sizeof e->detail, "%s", ce->detail);
        }
        s_merge_worst (&total, &ce->worst);
        if (ce != e) {
            s_teardown (ce);
            free (ce);
        }
    }
    kf_eval_stamp (KF_EVAL_T_CHECKED);

    if (probe) {
        result = json_pack ("{s:s, s:b, s:o, s:f, s:i, s:i}", "verdict", "probed", "ok", 1,
                            "degenerate", kf_eval_degen_json (&degen), "reference_ms",
                            e->ref_calls ? e->ref_s * 1e3 / e->ref_calls : 0.0,
                            "sets", degen.sets, "cases", n_cases);
        kf_eval_write_result (dir, result);
        goto done;
    }

    //  Timing on the main shape's last set, then the timing loop's outputs
    //  checked.
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
        s_merge_worst (&total, &e->worst);
        total.sets -= e->worst.sets;     // the timing check is not a set
    }
    kf_eval_stamp (KF_EVAL_T_TIMED);

    result = json_object ();
    json_object_set_new (result, "verdict", json_string (verdict));
    json_object_set_new (result, "detail", json_string (!strcmp (verdict, "correct")
                                 ? "all checks passed" : e->detail));
    json_object_set_new (result, "correctness", kf_eval_correctness_json (&total));
    json_object_set_new (json_object_get (result, "correctness"), "cases", json_integer (n_cases));
    if (tm.samples > 0 && !strcmp (verdict, "correct")) {
        double cand_med = kf_eval_median (tm.cand_ns, tm.samples), ref_med = 0, speedup;
        json_object_set_new (result, "candidate", kf_eval_timing_json (tm.cand_ns, tm.samples, tm.cand_calls));
        if (e->rd) {
            //  Not a paired ratio: eager PyTorch was timed in its own job.
            speedup = cand_med > 0 ? e->rd->eager_ns / cand_med : 0;
            json_object_set_new (result, "reference", json_pack ("{s:f, s:s}", "median_ns",
                                 e->rd->eager_ns, "kind", "pytorch-eager"));
            json_object_set_new (result, "speedup_compiled",
                                 e->rd->compiled_ns > 0 && cand_med > 0
                                 ? json_real (e->rd->compiled_ns / cand_med) : json_null ());
            ref_med = e->rd->eager_ns;
        }
        else {
            speedup = kf_eval_paired_speedup (tm.ref_ns, tm.cand_ns, tm.samples);
            json_object_set_new (result, "reference", kf_eval_timing_json (tm.ref_ns, tm.samples, tm.ref_calls));
            ref_med = kf_eval_median (tm.ref_ns, tm.samples);
        }
        json_object_set_new (result, "speedup", speedup >= 0 ? json_real (speedup) : json_null ());
        json_object_set_new (result, "protocol", json_pack (
            "{s:f, s:i, s:i, s:i, s:f, s:f, s:f}", "warmup_s", tm.warmup_s,
            "warmup_calls", tm.counted + tm.topup, "correctness_calls", tm.counted,
            "topup_calls", tm.topup, "topup_s", tm.topup_s, "sampling_s", tm.sampling_s,
            "measured_s", tm.measured_s));
        //  The roofline: bytes are the inputs read plus the outputs written
        //  once, a lower bound on any kernel's traffic.
        double bytes = 0;
        for (int i = 0; i < e->n_in; i++)
            bytes += (double) e->in[i].bytes;
        for (int o = 0; o < e->n_out; o++)
            bytes += (double) e->out[o].bytes;
        json_t *fl = json_object_get (task, "flops");
        double flops = json_is_array (fl) ? json_number_value (json_array_get (fl, 0))
                                          : json_number_value (fl);
        kf_eval_ceilings_t ceil = { 0 };
        json_t *given = json_object_get (job, "ceilings");
        if (json_is_object (given)) {
            ceil.copy_gbs = kf_eval_num (given, "copy_gbs", 0);
            ceil.peak_gflops = kf_eval_num (given, "peak_gflops", 0);
            ceil.peak_source = json_string_value (json_object_get (given, "peak_source"));
        }
        else
            kf_eval_host_ceilings (&ceil);
        //  Calls within a sample find the data the last one left in the
        //  cache, so the memory ceiling binds only past the cache.
        long llc = sysconf (_SC_LEVEL3_CACHE_SIZE);
        bool applies = bytes > (double) (llc > 0 ? llc : 32 << 20);
        kf_eval_roofline (result, bytes, flops, cand_med, ref_med, &ceil, applies, speedup);
    }
    else
        json_object_set_new (result, "speedup", json_null ());
    json_object_set_new (result, "split_s", kf_eval_split_json ());
    kf_eval_write_result (dir, result);

done:
    json_decref (result);
    free (tm.ref_ns);
    free (tm.cand_ns);
    s_teardown (e);
    free (e);
    kf_eval_refdata_free (&rd);
    //  Libraries and the data stay mapped: a candidate's destructors could
    //  still run code, and the process ends right after this anyway.
    (void) ref_lib;
    (void) cand_lib;
    return 0;
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
    //  The ceilings evaluations are judged against, measured once at
    //  start-up (kf_eval_host_ceilings).
    kf_eval_ceilings_t ceil;
    kf_eval_host_ceilings (&ceil);
    json_t *devices = json_array ();
    json_array_append_new (devices, json_pack ("{s:s, s:i, s:I, s:f, s:f, s:s}", "name", model,
                           "cores", (int) sysconf (_SC_NPROCESSORS_ONLN),
                           "memory_bytes", memory,
                           "copy_bandwidth_gbs", round (ceil.copy_gbs * 10) / 10,
                           "peak_gflops", round (ceil.peak_gflops * 10) / 10,
                           "peak_source", ceil.peak_source ? ceil.peak_source : "none"));
    return devices;
}

const kf_exec_backend_t kf_exec_backend_host = {
    .name = "host",
    .child_main = s_host_child_main,
    .devices = s_host_devices,
};
