/*  kf_cuda_share.h - device memory the CUDA judge shares with the
 *  candidate's process.
 *
 *  The judge keeps the reference, its outputs and the clock in its own
 *  process; the candidate runs in the runner (kf_runner.h) and sees only
 *  its own inputs and outputs. Those live in one allocation made with the
 *  driver's virtual memory management and exported as a file descriptor
 *  (CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR), which the judge passes over
 *  the runner's socket; the runner maps it into its own context. No
 *  process ids, /proc or legacy IPC handles are involved, so it works
 *  between the PID and mount namespaces of the sandbox and after the
 *  runner has confined itself.
 */
#ifndef KF_CUDA_SHARE_H
#define KF_CUDA_SHARE_H

#include "kf_cuda_api.h"

#include <stddef.h>

typedef struct {
    const kf_cuda_api_t *api;
    unsigned long long handle;     /* the physical allocation */
    unsigned long long base;       /* where it is mapped in this process */
    size_t bytes;                  /* BYTES rounded up to the granularity */
    int fd;                        /* the exported descriptor, or -1 */
} kf_cuda_share_t;

/* BYTES of device memory on DEVICE, mapped here and exported as
 * S->fd. 0, or -1 with WHY ("the driver has no virtual memory management",
 * "cuMemCreate: CUDA_ERROR_OUT_OF_MEMORY"). */
int kf_cuda_share_new (kf_cuda_share_t *s, const kf_cuda_api_t *api, int device, size_t bytes,
                       char *why, size_t why_size);

/* The allocation behind FD (BYTES, as the judge made it) mapped into
 * this process on DEVICE. Takes FD. 0, or -1 with WHY. */
int kf_cuda_share_import (kf_cuda_share_t *s, const kf_cuda_api_t *api, int device, int fd,
                          size_t bytes, char *why, size_t why_size);

/* Unmaps and releases; closes the descriptor. */
void kf_cuda_share_free (kf_cuda_share_t *s);

#endif
