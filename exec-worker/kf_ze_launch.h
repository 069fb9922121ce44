/*  kf_ze_launch.h - what an OpenCL C candidate asks the exec worker to run.
 *
 *  An OpenCL C candidate has no host code (docs/intel.md, "The
 *  contract"): its kernels are compiled to SPIR-V and the exec worker
 *  launches them itself, in the order and with the arguments and sizes
 *  the source's `kf-launch:` lines give, over device memory the worker
 *  allocates. This module reads the compile worker's artifact (a
 *  KF-SPIRV bundle: the build's -D flags, the source, the SPIR-V) and
 *  turns those lines into a plan resolved against one task's shapes. It
 *  needs no device, so every rule of the launch language is unit-tested
 *  on any host (tests/unit/test_ze.c), and the Level Zero backend only
 *  executes plans.
 */
#ifndef KF_ZE_LAUNCH_H
#define KF_ZE_LAUNCH_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define KF_ZE_MAX_DEFINES 16
#define KF_ZE_MAX_LAUNCHES 16
#define KF_ZE_MAX_ARGS 32
#define KF_ZE_MAX_SCRATCH 8
#define KF_ZE_NAME_MAX 64

/* A parsed artifact; the pointers borrow the bytes it was parsed from. */
typedef struct {
    const char *source;
    size_t source_size;
    const unsigned char *spirv;
    size_t spirv_size;
    int n_defines;
    char define_name[KF_ZE_MAX_DEFINES][KF_ZE_NAME_MAX];
    char define_value[KF_ZE_MAX_DEFINES][KF_ZE_NAME_MAX];
} kf_ze_bundle_t;

typedef enum {
    KF_ZE_ARG_TENSOR = 0,    /* index: inputs first, then outputs (task order) */
    KF_ZE_ARG_SCRATCH,       /* index: the kf-scratch buffer */
    KF_ZE_ARG_LOCAL,         /* size: bytes of local memory */
    KF_ZE_ARG_VALUE          /* size and value: the bytes passed by value */
} kf_ze_arg_kind_t;

typedef struct {
    int kind;
    int index;
    size_t size;
    unsigned char value[8];
} kf_ze_arg_t;

typedef struct {
    char kernel[KF_ZE_NAME_MAX];
    int dims;                         /* 1 to 3 */
    uint64_t global[3], local[3];     /* work-items, as in OpenCL */
    uint32_t groups[3];               /* global / local */
    int n_args;
    kf_ze_arg_t args[KF_ZE_MAX_ARGS];
} kf_ze_launch_t;

typedef struct {
    int n_launches;
    kf_ze_launch_t launches[KF_ZE_MAX_LAUNCHES];
    int n_scratch;
    char scratch_name[KF_ZE_MAX_SCRATCH][KF_ZE_NAME_MAX];
    uint64_t scratch_bytes[KF_ZE_MAX_SCRATCH];
} kf_ze_plan_t;

/* Whether DATA starts like a KF-SPIRV bundle (else: a host shared object,
 * as a C reference is). */
bool kf_ze_is_bundle (const void *data, size_t size);

/* Parses a bundle. Returns 0, or -1 with WHY (one line). */
int kf_ze_bundle_parse (const void *data, size_t size, kf_ze_bundle_t *b,
                        char *why, size_t why_size);

/* Reads B's kf-scratch and kf-launch lines and resolves every expression
 * against TASK (the canonical task: inputs, outputs, scalars). Returns 0,
 * or -1 with WHY naming the line and what is wrong with it. */
int kf_ze_plan (const kf_ze_bundle_t *b, json_t *task, kf_ze_plan_t *plan,
                char *why, size_t why_size);

#endif
