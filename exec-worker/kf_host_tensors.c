/*  kf_host_tensors.c - the host judge's tensors and the calls on them
 *  (kf_host_eval.h): the reference's outputs in the judge's own guarded
 *  memory, the candidate's inputs and outputs in a shared memory file of
 *  each shape case (as many copies as a timed batch may use), the
 *  canaries; a call of either kernel; the checks that the candidate left
 *  its inputs and the memory around its buffers alone, and the
 *  comparison of its outputs.
 */
#include "kf_host_eval.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

//  What the copies of a timed batch may take of the judge's and the
//  candidate's memory, all variants together.
#define S_VARIANT_BYTES (64.0 * 1024 * 1024)

// --------------------------------------------------------------------------
//  Buffers: the reference's outputs in the judge's memory, guarded; the
//  candidate's inputs and outputs in the shared file of the case.

static int
s_buf_new (kf_host_buf_t *b, size_t bytes)
{
    size_t page = (size_t) sysconf (_SC_PAGESIZE);
    memset (b, 0, sizeof *b);
    size_t body = (bytes + KF_RUN_CANARY + page - 1) / page * page;
    b->map_len = body + page;
    b->map = mmap (NULL, b->map_len, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (b->map == MAP_FAILED) {
        b->map = NULL;
        return -1;
    }
    char *guard = b->map + body;
    if (mprotect (guard, page, PROT_NONE) != 0)
        return -1;
    b->bytes = bytes;
    b->data = guard - bytes;
    memset (b->data - KF_RUN_CANARY, 0xA5, KF_RUN_CANARY);
    kf_eval_add_guard (guard, page);
    return 0;
}

static bool
s_canary_ok (const kf_host_buf_t *b)
{
    for (int i = 0; i < KF_RUN_CANARY; i++)
        if ((unsigned char) b->data[i - KF_RUN_CANARY] != 0xA5)
            return false;
    return true;
}

static void
s_buf_free (kf_host_buf_t *b)
{
    if (b->map)
        munmap (b->map, b->map_len);
    memset (b, 0, sizeof *b);
}

//  Lays out VARIANTS copies of E's inputs, then the candidate's outputs,
//  in a new shared file; NAMES (N of them) are the scalars the candidate
//  will be given.
static int
s_arena_new (kf_host_eval_t *e, const char *const *names, int n_names, int variants)
{
    kf_host_arena_t *a = &e->arena;
    memset (&a->layout, 0, sizeof a->layout);
    a->fd = -1;
    if (n_names > KF_RUN_MAX_SCALARS) {
        snprintf (e->detail, sizeof e->detail, "task: more than %d scalars", KF_RUN_MAX_SCALARS);
        return -1;
    }
    uint64_t at = 0;
    for (int k = 0; k < e->n_in + e->n_out; k++) {
        const kf_eval_spec_t *s = k < e->n_in ? &e->in[k] : &e->out[k - e->n_in];
        kf_run_tensor_t *t = &a->layout.t[k];
        kf_tensor_t shape;
        kf_eval_tensor (&shape, s, NULL);
        t->dtype = shape.dtype;
        t->rank = shape.rank;
        memcpy (t->shape, shape.shape, sizeof t->shape);
        t->bytes = s->bytes;
        t->region = kf_run_region (s->bytes);
        t->offset = at;
        at += t->region;
    }
    a->layout.n_in = (uint32_t) e->n_in;
    a->layout.n_out = (uint32_t) e->n_out;
    a->layout.n_names = (uint32_t) n_names;
    for (int k = 0; k < n_names; k++)
        snprintf (a->layout.names[k], KF_RUN_NAME, "%s", names[k]);
    a->layout.variants = (uint32_t) variants;
    a->layout.variant_bytes = at;
    a->layout.file_bytes = at * (uint64_t) variants;
    a->bytes = (size_t) a->layout.file_bytes;
    e->variants = variants;
    a->fd = memfd_create ("kf-tensors", MFD_CLOEXEC);
    if (a->fd < 0 || ftruncate (a->fd, (off_t) a->bytes) != 0
        || (a->base = mmap (NULL, a->bytes ? a->bytes : 1, PROT_READ | PROT_WRITE, MAP_SHARED,
                            a->fd, 0)) == MAP_FAILED) {
        a->base = NULL;
        snprintf (e->detail, sizeof e->detail, "out of memory for the shared tensors: %s",
                  strerror (errno));
        return -1;
    }
    for (int v = 0; v < variants; v++)
        for (int k = 0; k < e->n_in + e->n_out; k++) {
            const kf_run_tensor_t *t = &a->layout.t[k];
            kf_host_buf_t *b = k < e->n_in ? &e->in_buf[v][k] : &e->cand_buf[v][k - e->n_in];
            memset (b, 0, sizeof *b);
            b->bytes = (size_t) t->bytes;
            b->data = a->base + v * at + t->offset + t->region - t->bytes;
            memset (b->data - KF_RUN_CANARY, 0xA5, KF_RUN_CANARY);
        }
    return 0;
}

static void
s_arena_free (kf_host_arena_t *a)
{
    if (a->base)
        munmap (a->base, a->bytes ? a->bytes : 1);
    if (a->fd >= 0)
        close (a->fd);
    a->base = NULL;
    a->fd = -1;
}

int
kf_host_check_memory (kf_host_eval_t *e, int v, void *const *expect, const char *when)
{
    for (int i = 0; i < e->n_in; i++)
        if (memcmp (e->in_buf[v][i].data, expect[i], e->in[i].bytes) != 0) {
            snprintf (e->detail, sizeof e->detail,
                      "%s: inputs changed: the candidate wrote to input '%s'",
                      when, e->in[i].name);
            return KF_HOST_INCORRECT;
        }
    for (int i = 0; i < e->n_in; i++)
        if (!s_canary_ok (&e->in_buf[v][i])) {
            snprintf (e->detail, sizeof e->detail,
                      "%s: out-of-bounds write before input '%s'", when, e->in[i].name);
            return KF_HOST_CRASHED;
        }
    for (int o = 0; o < e->n_out; o++)
        if (!s_canary_ok (&e->cand_buf[v][o])) {
            snprintf (e->detail, sizeof e->detail,
                      "%s: out-of-bounds write before output '%s'", when, e->out[o].name);
            return KF_HOST_CRASHED;
        }
    return KF_HOST_OK;
}

// --------------------------------------------------------------------------
//  A shape case's tensors

//  Guarded buffers for TASK's (possibly reshaped) tensors, the scalars,
//  and the shared file, given to the candidate's process.
int
kf_host_setup (kf_host_eval_t *e, json_t *task, int variants)
{
    json_t *ins = json_object_get (task, "inputs");
    json_t *outs = json_object_get (task, "outputs");
    e->n_in = (int) json_array_size (ins);
    e->n_out = (int) json_array_size (outs);
    e->arena.fd = -1;
    if (e->n_out < 1 || e->n_in > KF_HOST_MAX_TENSORS || e->n_out > KF_HOST_MAX_TENSORS) {
        snprintf (e->detail, sizeof e->detail, "task: need 1 to 32 outputs and at most 32 inputs");
        return -1;
    }
    for (int i = 0; i < e->n_in; i++)
        if (kf_eval_spec (&e->in[i], json_array_get (ins, (size_t) i), e->detail, sizeof e->detail))
            return -1;
    for (int o = 0; o < e->n_out; o++)
        if (kf_eval_spec (&e->out[o], json_array_get (outs, (size_t) o), e->detail, sizeof e->detail))
            return -1;
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
    //  The reference's scratch is the candidate's kind (kf_scratch.h), so
    //  neither side's time holds page faults the other's does not.
    if (!(e->scratch = kf_scratch_new (0))) {
        snprintf (e->detail, sizeof e->detail, "out of memory for the scratch arena");
        return -1;
    }
    e->ctx.scratch_alloc = kf_scratch_alloc;
    e->ctx.scratch_state = e->scratch;
    //  Exported data brings its own scalars, per set, under names of its own.
    //  Copies of every tensor for timed batches: as many as fit
    //  S_VARIANT_BYTES, so that no call of a batch finds what another left.
    double one = 0;
    for (int k = 0; k < e->n_in + e->n_out; k++)
        one += (double) kf_run_region (k < e->n_in ? e->in[k].bytes : e->out[k - e->n_in].bytes);
    if (variants > 1 && one * variants > S_VARIANT_BYTES)
        variants = (int) (S_VARIANT_BYTES / one);
    if (variants < 1)
        variants = 1;
    if (e->rd ? s_arena_new (e, e->rd->name_ptrs, e->rd->n_scalars, variants)
              : s_arena_new (e, e->scalar_names, e->ctx.n_scalars, variants))
        return -1;
    for (int i = 0; i < e->n_in; i++)
        if (!(e->in_clone[i] = malloc (e->in[i].bytes ? e->in[i].bytes : 1))) {
            snprintf (e->detail, sizeof e->detail, "out of memory for inputs");
            return -1;
        }
    for (int o = 0; o < e->n_out; o++)
        if (s_buf_new (&e->ref_buf[o], e->out[o].bytes)
            || !(e->ref_saved[o] = malloc (e->out[o].bytes ? e->out[o].bytes : 1))) {
            snprintf (e->detail, sizeof e->detail, "out of memory for outputs");
            return -1;
        }
    for (int v = 0; v < variants; v++) {
        for (int i = 0; i < e->n_in; i++)
            kf_eval_tensor (&e->in_t[v][i], &e->in[i], e->in_buf[v][i].data);
        for (int o = 0; o < e->n_out; o++) {
            e->ref_var[v][o] = v ? malloc (e->out[o].bytes ? e->out[o].bytes : 1)
                                 : e->ref_buf[o].data;
            if (!e->ref_var[v][o]) {
                snprintf (e->detail, sizeof e->detail, "out of memory for outputs");
                return -1;
            }
            kf_eval_tensor (&e->ref_t[v][o], &e->out[o], e->ref_var[v][o]);
        }
    }
    return 0;
}

void
kf_host_teardown (kf_host_eval_t *e)
{
    for (int v = 1; v < KF_RUN_MAX_VARIANTS; v++)
        for (int o = 0; o < KF_HOST_MAX_TENSORS; o++) {
            free (e->ref_var[v][o]);
            e->ref_var[v][o] = NULL;
        }
    for (int i = 0; i < KF_HOST_MAX_TENSORS; i++) {
        s_buf_free (&e->ref_buf[i]);
        free (e->in_clone[i]);
        free (e->ref_saved[i]);
        e->in_clone[i] = e->ref_saved[i] = NULL;
    }
    s_arena_free (&e->arena);
    kf_scratch_destroy (&e->scratch);
    e->ctx.scratch_state = NULL;
    free (e->scalar_names);
    free (e->scalars);
    e->scalar_names = NULL;
    e->scalars = NULL;
}

// --------------------------------------------------------------------------
//  Calls and checks

int
kf_host_ref_call (kf_host_eval_t *e, int v)
{
    kf_eval_set_phase ('R');
    int rc = e->ref_fn (e->in_t[v], e->n_in, e->ref_t[v], e->n_out, &e->ctx);
    kf_eval_set_phase ('H');
    kf_scratch_reset (e->scratch);
    return rc;
}

int
kf_host_cand_call (kf_host_eval_t *e, int calls, double *wall_s, const char *when)
{
    kf_run_reply_t reply;
    kf_eval_set_phase ('C');
    int rc = kf_runner_call (e->runner, (uint32_t) calls, e->ctx.scalars, e->ctx.n_scalars,
                             wall_s, &reply);
    kf_eval_set_phase ('H');
    //  The round trip (measured before the candidate was loaded) is the
    //  harness's time, not the candidate's; a batch never reads shorter
    //  than a tenth of what the clock saw.
    double trip = kf_runner_round_trip_s (e->runner);
    *wall_s = *wall_s - trip > *wall_s / 10 ? *wall_s - trip : *wall_s / 10;
    if (rc == 0)
        return KF_HOST_OK;
    if (reply.status == KF_RUN_RETURNED) {
        kf_eval_cand_returned (e->detail, sizeof e->detail, when, reply.rc, reply.detail);
        return KF_HOST_INCORRECT;
    }
    snprintf (e->detail, sizeof e->detail, "%s", reply.detail);
    return KF_HOST_CRASHED;
}

int
kf_host_compare (kf_host_eval_t *e, int v, void *const *ref, const char *when)
{
    int bad = 0;
    char ignored[512];
    for (int o = 0; o < e->n_out; o++)
        if (kf_eval_compare_output (&e->tol, &e->worst, &e->out[o], e->cand_buf[v][o].data,
                                    ref[o], when, bad ? ignored : e->detail,
                                    bad ? sizeof ignored : sizeof e->detail))
            bad = 1;
    return bad ? -1 : 0;
}
