/*  kf_runner_ocl.h - the candidate's process for the opencl backend
 *  (`worker --eval-runner CANDIDATE SHARED opencl:DEVICE`).
 *
 *  OpenCL has no standard way to hand a buffer to another process, so
 *  the judge (kf_backend_ocl.c, kf_dev_share.c) keeps the candidate's
 *  inputs and outputs in a memfd, each tensor between canaries
 *  (kf_dev_share.h), and the runner makes its buffers over its own
 *  mapping of that file with CL_MEM_USE_HOST_PTR. While the tensors are
 *  "on the host" every buffer is mapped (clEnqueueMapBuffer); handed to
 *  the device they are unmapped (on a CPU platform both are free; on a
 *  discrete GPU they are the copies up and down, which is why they are
 *  messages of their own, KF_RUN_OP_HOST and KF_RUN_OP_DEVICE, outside
 *  the judge's timed calls).
 *
 *  The runner opens the ICD loader (it reads /etc/OpenCL/vendors) before
 *  it confines itself, and the device only after: a CPU platform (PoCL)
 *  starts the threads its kernels run on when the device is opened, and
 *  threads started before the seccomp filter would run the candidate's
 *  code unfiltered. It checks that every thread it has is filtered
 *  before it builds anything, and refuses to run otherwise.
 */
#ifndef KF_RUNNER_OCL_H
#define KF_RUNNER_OCL_H

/* The runner's main when its device argument (argv[4]) is "opencl:SEL";
 * SEL as kf_ocl_open takes it. */
int kf_runner_ocl_main (int argc, char **argv);

#endif
