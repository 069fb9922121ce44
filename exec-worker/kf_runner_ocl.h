/*  kf_runner_ocl.h - the candidate's process for the opencl backend
 *  (`worker --eval-runner CANDIDATE SHARED opencl:DEVICE`).
 *
 *  OpenCL has no standard way to hand a buffer to another process, so
 *  the judge (kf_backend_ocl.c, kf_ocl_share.c) keeps the candidate's
 *  inputs and outputs in a memfd, each tensor between canaries, and the
 *  runner makes its buffers over its own mapping of that file with
 *  CL_MEM_USE_HOST_PTR. Who may touch the bytes is handed over
 *  explicitly: while the tensors are "on the host" every buffer is
 *  mapped (clEnqueueMapBuffer) and the judge writes inputs and poison
 *  and reads results; before the candidate's launches they are unmapped
 *  (on a CPU platform both are free; on a discrete GPU they are the
 *  copies up and down, which is why they are messages of their own,
 *  outside the judge's timed calls).
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

/* The judge's extra messages (beside kf_runner.h's), each answered by a
 * kf_run_reply_t: the tensors handed to the host (mapped: the judge may
 * read and write them), or to the device (unmapped). A call finds them
 * on the device itself when they are not. */
enum { KF_RUN_OP_OCL_HOST = 16, KF_RUN_OP_OCL_DEVICE = 17 };

/* The runner's file: the candidate's load failure in full (a platform's
 * build log), in its working directory; the reply's detail is short. */
#define KF_RUN_OCL_LOAD_LOG "load.log"
/* The task's tensors and scalars (JSON), written there by the judge. */
#define KF_RUN_OCL_TASK "task.json"

/* The runner's main when its device argument (argv[4]) is "opencl:SEL";
 * SEL as kf_ocl_open takes it. */
int kf_runner_ocl_main (int argc, char **argv);

#endif
