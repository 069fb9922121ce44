/*  kf_backend.h - where a candidate runs, behind one small interface.
 *
 *  The exec worker's parent side (sandbox, verdict mapping) is the same
 *  for every device; what differs is how tensors are allocated, how a
 *  call is timed and how the device is described. Each backend is one
 *  file (kf_backend_host.c, kf_backend_cuda.c, kf_backend_ze.c,
 *  kf_backend_ocl.c) exporting one of these.
 */
#ifndef KF_BACKEND_H
#define KF_BACKEND_H

#include <jansson.h>
#include <stddef.h>

typedef struct {
    const char *name;        /* "host", "cuda", "level-zero", "opencl" */
    /* Runs in the sandboxed evaluation child. DIR holds candidate.so,
     * reference.so and job.json (the evaluate payload); writes
     * DIR/result.json. Returns the child's exit code (0 when a result
     * was written). */
    int (*child_main) (const char *dir, json_t *job);
    /* Devices for capabilities: array of {name, memory_bytes, ...}. */
    json_t *(*devices) (void);
    /* Optional, for backends that may find no device: opens device
     * DEVICE and returns {arch, devices}, or NULL with WHY ("no CUDA
     * device: ..."). When set, it is used instead of devices(). */
    json_t *(*probe) (int device, char *why, size_t why_size);
    /* The child needs an unlimited address space: a GPU runtime maps the
     * device's memory into it and fails under any RLIMIT_AS that fits a
     * host evaluation. Host memory is then bounded by the machine. */
    int unlimited_address_space;
} kf_exec_backend_t;

extern const kf_exec_backend_t kf_exec_backend_host;
extern const kf_exec_backend_t kf_exec_backend_cuda;
extern const kf_exec_backend_t kf_exec_backend_ze;       /* "level-zero" */
extern const kf_exec_backend_t kf_exec_backend_ocl;      /* "opencl" */

/* The backend called NAME, or NULL. */
const kf_exec_backend_t *kf_exec_backend_find (const char *name);

#endif
