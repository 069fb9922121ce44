/*  kf_runner_ze.h - the candidate's process for the level-zero backend
 *  (`worker --eval-runner CANDIDATE SHARED level-zero:N`).
 *
 *  NOT YET RUN ON HARDWARE (docs/intel.md): it runs in test_ze against
 *  kf_ze_double, the test double of the loader.
 *
 *  The judge (kf_backend_ze.c, kf_dev_share.c) keeps the candidate's
 *  inputs and outputs in a memfd, each tensor between canaries
 *  (kf_dev_share.h). Level Zero memory of one process's context is not
 *  the memory of another's (IPC handles exist, but only for device
 *  allocations, which the judge could then not read as plain memory), so
 *  the runner keeps device memory of its own context, one allocation per
 *  tensor region, canaries included, and copies the regions up when the
 *  tensors are handed to the device (KF_RUN_OP_DEVICE, or the first call
 *  that finds them on the host) and down when they are handed to the
 *  host (KF_RUN_OP_HOST): the judge then reads every byte the
 *  candidate's kernels could have written, canaries too.
 *
 *  The runner opens the loader, the driver and its device, context and
 *  queue before it confines itself (a GPU driver opens its device files,
 *  /dev/dri/renderD*, which the confinement's Landlock rules then close),
 *  and builds the candidate's module only after. The candidate's kernels
 *  run on the GPU, not on a thread of the process, so threads a driver
 *  started before the filter run only the driver's code; a fault or a
 *  lost device in the candidate's launches is a crash of this process.
 */
#ifndef KF_RUNNER_ZE_H
#define KF_RUNNER_ZE_H

/* The runner's main when its device argument (argv[4]) is
 * "level-zero:N": GPU N as kf_ze_find_device counts them. */
int kf_runner_ze_main (int argc, char **argv);

#endif
