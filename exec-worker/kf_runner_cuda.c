/*  kf_runner_cuda.c - the runner's CUDA side (kf_runner_cuda.h).
 */
#include "kf_runner_cuda.h"
#include "kf_cuda_eval.h"
#include "kf_cuda_share.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

static int s_device = -1;
static void *s_stream;
static void *s_tiny;                  // 256 bytes the pings write
static kf_cuda_share_t s_share;
static kf_cuda_scratch_t s_scratch;

int
kf_runner_cuda_init (int device, char *why, size_t why_size)
{
    if (kf_cuda_load_api (device, why, why_size))
        return -1;
    int rc = kf_cuda_eval_api->StreamCreateWithFlags (&s_stream, 0);
    if (!rc)
        rc = kf_cuda_eval_api->Malloc (&s_tiny, 256);
    if (rc) {
        snprintf (why, why_size, "harness: the candidate's CUDA context: %s", kf_cuda_err (rc));
        return -1;
    }
    s_device = device;
    return 0;
}

int
kf_runner_cuda_map (int fd, const kf_run_layout_t *l, kf_tensor_t (*in)[KF_RUN_MAX_TENSORS],
                    kf_tensor_t (*out)[KF_RUN_MAX_TENSORS], kf_ctx_t *ctx, char *why,
                    size_t why_size)
{
    uint32_t n = l->n_in + l->n_out;
    if (s_device < 0 || n > KF_RUN_MAX_TENSORS || l->n_names > KF_RUN_MAX_SCALARS
        || l->variants < 1 || l->variants > KF_RUN_MAX_VARIANTS || l->file_bytes == 0
        || l->variant_bytes == 0 || l->variant_bytes > l->file_bytes / l->variants) {
        close (fd);
        snprintf (why, why_size, "setup: a layout the runner does not take");
        return -1;
    }
    for (uint32_t i = 0; i < n; i++) {
        const kf_run_tensor_t *t = &l->t[i];
        if (t->rank < 0 || t->rank > KF_MAX_RANK || t->offset > l->variant_bytes
            || t->bytes > l->variant_bytes - t->offset) {
            close (fd);
            snprintf (why, why_size, "setup: tensor %u lies outside its variant", i);
            return -1;
        }
    }
    kf_cuda_share_free (&s_share);
    if (kf_cuda_share_import (&s_share, kf_cuda_eval_api, s_device, fd, l->file_bytes, why,
                              why_size))
        return -1;
    //  Variant V's tensors lie V variant_bytes further on; call K of a
    //  batch uses variant K modulo their number (kf_runner.c).
    for (uint32_t v = 0; v < l->variants; v++) {
        char *base = (char *) (uintptr_t) s_share.base + (size_t) v * l->variant_bytes;
        for (uint32_t i = 0; i < n; i++) {
            const kf_run_tensor_t *t = &l->t[i];
            kf_run_tensor_view (i < l->n_in ? &in[v][i] : &out[v][i - l->n_in], t,
                                base + t->offset);
        }
    }
    ctx->backend = KF_BACKEND_CUDA;
    ctx->stream = s_stream;
    ctx->scratch_alloc = kf_cuda_scratch_alloc;
    ctx->scratch_state = &s_scratch;
    return 0;
}

void
kf_runner_cuda_next_call (void)
{
    s_scratch.used = 0;
}

int
kf_runner_cuda_settle (char *why, size_t why_size)
{
    int rc = kf_cuda_settle ();
    if (rc == 0)
        return 0;
    snprintf (why, why_size, "CUDA error in the candidate: %s", kf_cuda_err (rc));
    return -1;
}

void
kf_runner_cuda_ping (void)
{
    if (s_tiny && kf_cuda_eval_api->MemsetAsync (s_tiny, 0, 256, s_stream) == 0)
        kf_cuda_eval_api->DeviceSynchronize ();
}
