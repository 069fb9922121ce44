/*  kf_gen_offline_starter.h - the offline generator's starter tables.
 *
 *  Internal to the offline generator: a starter is one template (a body
 *  written after its backend's prelude) and a table of parameters whose
 *  values pick real implementation choices. kf_gen_offline.c holds the host
 *  and OpenCL C starters and the logic; kf_gen_offline_cuda.c and
 *  kf_gen_offline_cuda_rows.c hold the CUDA ones.
 */
#ifndef KF_GEN_OFFLINE_STARTER_H
#define KF_GEN_OFFLINE_STARTER_H

#include <stddef.h>

#define KF_OFFLINE_MAX_PARAMS 8
#define KF_OFFLINE_MAX_VALUES 6

typedef struct {
    const char *name;
    const char *values[KF_OFFLINE_MAX_VALUES + 1];   //  NULL-ended; [0] is the baseline
} kf_offline_param_t;

typedef struct {
    const char *key;            //  starter name, also in the source's title
    const char *title;
    int n_inputs;               //  inputs the kernel reads, all f32
    const char *inputs_help;    //  for the error when a task has fewer
    const char *fixed;          //  #defines set by the task, not tuned, or NULL
    const char *const *body;
    kf_offline_param_t params[KF_OFFLINE_MAX_PARAMS];
} kf_offline_starter_t;

//  The CUDA starters (language "cuda") and the prelude written before
//  each of their bodies.
extern const kf_offline_starter_t kf_offline_cuda_starters[];
extern const size_t kf_offline_cuda_n_starters;
const char *kf_offline_cuda_prelude_text (void);

//  The CUDA row kernels' bodies (kf_gen_offline_cuda_rows.c).
extern const char *const kf_offline_cuda_softmax_text;
extern const char *const kf_offline_cuda_rmsnorm_text;
extern const char *const kf_offline_cuda_layernorm_text;

#endif
