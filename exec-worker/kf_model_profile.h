/*  kf_model_profile.h - the `model_profile` job: a whole PyTorch model
 *  (KernelBench level 3) run under torch.profiler on this exec host, its
 *  operators ranked by self time and the costliest written as
 *  KernelBench-format problems (`kfctl profile-model`, docs/kfctl.md).
 *
 *  Payload {source: the model file's text (at most 1 MiB), top: 1..50}.
 *  Result: what common/kf_profile_model.py writes, {device,
 *  torch_version, total_us, wall_us, profiled_calls, operators: [{name,
 *  overload, self_us, share, calls, shapes, dtypes, source} or {...,
 *  skipped}]}. A model that raises fails the job once (final), with the
 *  stage, the error and the traceback's end. It runs with the worker's
 *  PyTorch interpreter (kf_torch_ref.h) in the sandbox reference jobs use.
 */
#ifndef KF_MODEL_PROFILE_H
#define KF_MODEL_PROFILE_H

#include "kf_worker.h"

void kf_model_profile_handle (const kf_job_t *job, kf_job_result_t *res);

#endif
