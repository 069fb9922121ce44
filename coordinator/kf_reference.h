/*  kf_reference.h - the reference stage of a run, between submission and
 *  the first generation.
 *
 *  A PyTorch task (reference.language "pytorch", a KernelBench problem)
 *  has no kernel to compile: its reference is run by an exec worker's
 *  `reference` job, whose exported tensors become the task's inputs and
 *  outputs and the data every candidate is judged against. A native task's
 *  compiled reference is probed once before any candidate is generated. In
 *  both cases a reference whose outputs cannot tell a right kernel from a
 *  wrong one fails the run at once, unless the run allows it
 *  (config.allow_degenerate). docs/pytorch-references.md, "The coordinator".
 *
 *  Every function runs inside the caller's transaction, like kf_search.
 */
#ifndef KF_REFERENCE_H
#define KF_REFERENCE_H

#include "kf_msg_reference.h"
#include "kf_search_stage.h"
#include <stdbool.h>

/* Input sets the reference job draws; each is one of the evaluator's
 * correctness sets. */
#define KF_REFERENCE_SETS 5

/* True when SPEC (a task, submitted or derived) has a PyTorch reference. */
bool kf_reference_is_pytorch (json_t *spec);

/* RUN is kf_search's run row of a PyTorch run: queues its reference job. */
int kf_reference_start (kf_search_t *self, json_t *run);

/* The native reference of RUN compiled to ARTIFACT_HASH (already stored
 * and recorded): queues the probe that checks its outputs. */
int kf_reference_probe (kf_search_t *self, json_t *run, const char *artifact_hash);

/* True when JOB (a job row: kind, candidate_id) belongs to this stage:
 * a `reference` job, or the probe (an evaluate job of no candidate). */
bool kf_reference_owns (json_t *job);

/* A job of this stage completed with RESULT (borrowed): fails the run,
 * or records what it found and calls kf_search_begin. A reference job's
 * result is TYPED, its struct as the edge decoded it
 * (proto/kf_msg_reference.h), or when NULL decoded here from RESULT. */
int kf_reference_job_done (kf_search_t *self, json_t *run, json_t *job,
                           json_t *result, const kf_reference_result_t *typed);

/* Adds "reference_data" to PAYLOAD, an evaluate payload of RUN, when the
 * run's reference is PyTorch: the manifest, the baselines and "data" {key,
 * bytes, hash, inputs_hash, seed}, by which the exec worker finds the data
 * in its own cache or makes it again (no frame: runs.ref_artifact is NULL
 * and the job's blobs are the candidate's alone). Returns 0, or -1 on a
 * database error. */
int kf_reference_eval_payload (kf_search_t *self, json_t *run, json_t *payload);

/* The candidate-facing task of a PyTorch TASK, from its reference job's
 * result REF: inputs are set 0's `input` tensors in argument order, then
 * the parameters, then the buffers; outputs set 0's `output` tensors;
 * scalars the numeric init and input values. Returns the new task
 * (caller's), or NULL with *WHY (caller frees). */
json_t *kf_reference_task (json_t *task, const kf_reference_result_t *ref, char **why);

/* kf_reference_task of RESULT, a reference job's result as JSON, decoded
 * first (a malformed one gives NULL, *WHY naming the field). */
json_t *kf_reference_derive (json_t *task, json_t *result, char **why);

#endif
