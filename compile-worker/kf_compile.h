/*  kf_compile.h - the compile worker's job handler.
 *
 *  A "compile" job carries {language, target {backend, arch}, source_hash}
 *  and the source as binary frame 0; the result is {compiled,
 *  artifact_hash, toolchain, log, wall_s} with the shared object as the
 *  one result frame when it compiled. A candidate that does not compile is
 *  a verdict (ok, compiled=false), not a failed job.
 *
 *  A source with a kf-tune line is built at each selected point of its
 *  space (common/kf_tune.h) with -DNAME=value: the top-level fields are
 *  the default point's, `configs` lists every point ({params, compiled,
 *  artifact_hash, frame, log on failure}) and the frames are the distinct
 *  artifacts, the default point's first.
 *
 *  A compiled candidate's result also carries `coords` [mem, algo, sync]
 *  and `coords_why`: the descriptors (analysis/kf_descriptor.h) of the
 *  source as the toolchain preprocessed it with the build's -D flags (the
 *  default point's, for a sweep), or `coords_error` when that failed.
 */
#ifndef KF_COMPILE_H
#define KF_COMPILE_H

#include "kf_worker.h"
#include "kf_subproc.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#define KF_COMPILE_LOG_MAX 4096
/* Most points of a kf-tune space built per job: one result frame each,
 * and a message carries at most 16 binary frames. */
#define KF_COMPILE_TUNE_MAX 16

typedef struct {
    double time_limit_s;     /* per compile; 0: 60 */
    size_t output_cap;       /* compiler output kept; 0: 64 KiB */
    const char *cache_dir;   /* compile cache folder; NULL: no cache */
    size_t cache_max_bytes;  /* cache size cap; 0: no cap */
    int tune_max_configs;    /* kf-tune points built per source; 0: 16; 1: none */
    int tune_parallel;       /* builds at once within one job; 0: 2 */
} kf_compile_config_t;

/* kf_job_fn; ARG is a kf_compile_config_t * or NULL for the defaults. */
void kf_compile_handle (void *arg, const kf_job_t *job, kf_job_result_t *res);

/* {backends, arch, toolchains} for HELLO. Caller owns the result. */
json_t *kf_compile_capabilities (void);

/* Compiler output trimmed for a prompt: error lines first, the job's
 * directory DIR replaced so paths read as bare file names, at most MAX
 * bytes. Caller frees. */
char *kf_compile_trim_log (const char *log, const char *dir, size_t max);

/* Non-zero when SOURCE uses CUDA managed memory; *WHAT names the use. */
int kf_compile_uses_managed (const char *source, size_t size, const char **what);

/* The lines of preprocessed TEXT (SIZE bytes) that come from the file
 * named SOURCE_NAME, by the line markers the preprocessor writes: the
 * candidate's own code with its #if branches chosen, without the headers
 * it includes. Caller frees. */
char *kf_compile_own_lines (const char *text, size_t size, const char *source_name);

/* TEXT with the attributes the CUDA headers make of the execution-space
 * keywords turned back into the keywords (__attribute__((shared)) reads
 * __shared__), in place, for the descriptors' pattern tables. Returns TEXT. */
char *kf_compile_cuda_keywords (char *text);

/* The number of loops of the file SOURCE_NAME that the vectoriser's
 * REPORT (GCC's -fopt-info-vec-optimized: "kernel.c:48:24: optimized:
 * loop vectorized using 64 byte vectors") says it vectorised; loops of
 * headers inlined into it are not counted. 0 for a NULL report. */
int kf_compile_vectorised_loops (const char *report, const char *source_name);

/* The first line of the vectoriser's summary as kf_compile_vec_summary
 * writes it, after the build's own log: the coordinator's prompts find
 * the report by it (coordinator/kf_prompt.c). */
#define KF_COMPILE_VEC_MARK "Compiler report (GCC's vectoriser, -fopt-info-vec, on this build):"
/* Loops listed at most, and the length of one loop's reason. */
#define KF_COMPILE_VEC_SHOWN 10
#define KF_COMPILE_VEC_REASON 120

/* A short summary of the vectoriser's REPORT (GCC's
 * -fopt-info-vec-optimized-missed, written by the build itself) for the
 * file SOURCE_NAME: the mark, "N loops vectorised, M not.", then one line
 * per loop in source order, "- line 12: vectorised, 64-byte vectors" or
 * "- line 30: not vectorised: <the compiler's first reason>", at most
 * KF_COMPILE_VEC_SHOWN, each reason cut to KF_COMPILE_VEC_REASON bytes
 * with control characters and backquotes replaced (the report quotes the
 * candidate's code). *VECTORISED gets the number of loops vectorised.
 * Caller frees; NULL when the report says nothing of the file. */
char *kf_compile_vec_summary (const char *report, const char *source_name, int *vectorised);

/* As kf_compile_vec_summary, with the SOURCE (SIZE bytes) the report is
 * of: code written with intrinsics or vector types (`__m512`,
 * `_mm512_fmadd_ps (`, `vector_size`, NEON's float32x4_t), read with
 * comments and strings blanked, gets the explicit-SIMD note even when
 * the report names no vector type (round 7: a mish kernel of intrinsics
 * whose every loop GCC reported for a libm call or control flow). A NULL
 * SOURCE is kf_compile_vec_summary. */
char *kf_compile_vec_summary_src (const char *report, const char *source_name,
                                  const char *source, size_t size, int *vectorised);

/* Whether SOURCE (SIZE bytes) is written with SIMD intrinsics or vector
 * types, comments and strings not read. */
bool kf_compile_source_simd (const char *source, size_t size);

/* The first words of the register-spill report the compile worker adds
 * to a host build's log after the vectoriser's summary; the coordinator's
 * prompts show it with the compiler report (kf_prompt_standing.c). */
#define KF_COMPILE_SPILL_MARK "Compiler report (register spills, objdump -d of this build):"
/* The most of objdump's listing read (a candidate can make a huge object). */
#define KF_COMPILE_SPILL_READ_MAX ((size_t) 8 << 20)

/* The spill report of DISASM (SIZE bytes of `objdump -d -l --inlines
 * --no-show-raw-insn`): per function, the full-width moves of xmm/ymm/zmm
 * registers to a stack slot ((%rsp) or (%rbp), no index register) and
 * back; the mark, then the functions that do both, most moves first (at
 * most three named, each with the lines of the file SOURCE that have the
 * most moves, when the listing has line tables and SOURCE is not NULL),
 * in one sentence, then one on what spills mean. Caller frees; NULL when
 * no function both stores and loads. */
char *kf_compile_spill_summary (const char *disasm, size_t size, const char *source);

/* kf_compile_spill_summary of OBJECT in DIR, built from the file SOURCE,
 * disassembled by the objdump found in PATH under LIMITS (at most 10 s,
 * its output capped at KF_COMPILE_SPILL_READ_MAX). NULL when there is no
 * objdump, it cannot run, or nothing spills. Caller frees. */
char *kf_compile_spill_report (const char *dir, const char *object, const char *source,
                               const kf_subproc_limits_t *limits);

/* True when LOG holds a diagnostic located in the file SOURCE_NAME
 * ("kernel.c:7:5: error: ..."): a failure the same source always meets. */
bool kf_compile_points_into_source (const char *log, const char *source_name);

/* kf_kernel.h as built into the worker. */
const char *kf_compile_kernel_header (size_t *size);

#endif
