/*  kf_prompt.h - the generation prompt, assembled from its sections.
 *
 *  One builder for every prompt a run sends to a model, so what a model is
 *  told is in one place and every part of it can be tested: the task and
 *  its reference, the kernel contract (kf_kernel.h), the hardware of the
 *  exec worker the kernel will run on (as that worker advertised it), an
 *  example, the kernel to improve and the last kernel tried with their
 *  runtimes and logs, inspirations from other archive cells, mutation
 *  hints from the gradient estimator, and the four evolvable sections
 *  that meta-prompt evolution rewrites (kf_meta.h). docs/prompts.md shows
 *  the layout. The builder does no I/O; kf_prompt_hardware and
 *  kf_prompt_kernel read the database for it.
 */
#ifndef KF_PROMPT_H
#define KF_PROMPT_H

#include "kf_db.h"
#include "kf_prompt_class.h"
#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#define KF_PROMPT_SECTIONS 4
#define KF_PROMPT_MAX_INSPIRATIONS 4

/* The evolvable sections, in prompt order: "philosophy" (what to
 * prioritise), "strategies" (techniques by category), "pitfalls"
 * (mistakes to avoid), "analysis" (what to work out before writing
 * code). Each appears in the prompt between markers
 * "<<<kf:NAME>>>" and "<<<kf:end NAME>>>" so a meta-prompter's edits can
 * be confined to them. */
extern const char *const kf_prompt_section_names[KF_PROMPT_SECTIONS];

/* The starting text of the four sections: {philosophy, strategies,
 * pitfalls, analysis} as strings (caller's), for a task of no known class
 * in LANGUAGE ("c", "cuda", "opencl", ...). A run's own defaults depend on
 * its task and target too: kf_prompt_default_sections_for
 * (kf_prompt_class.h). */
json_t *kf_prompt_default_sections (const char *language);

/* A kernel shown in the prompt is a JSON object (all keys optional):
 *   source       the code
 *   status       candidate status: correct, incorrect, compile_failed, ...
 *   speedup      number, when correct
 *   candidate_ns median runtime in ns, when timed
 *   reference_ns the reference's, when timed
 *   detail       the verdict's one line (which check failed, with figures)
 *   log          compiler output
 *   correctness  {sets, match_fraction, max_abs_err, max_rel_err, cosine,
 *                 nonfinite_mismatch} from the evaluation
 *   bandwidth    {candidate_gbs, copy_gbs, candidate_fraction_of_copy, ...}
 *   profile      an Nsight Compute summary (a "profile" job's), text
 *   coords       "{m,a,s}" (inspirations: which cell it comes from)
 *   compute      {flops, candidate_gflops, peak_gflops,
 *                 candidate_fraction_of_peak, ...} from the evaluation
 *   timing_candidate, timing_reference   {median_ns, p10_ns, p90_ns}
 *   configs      the tuning sweep's table, when it was swept
 *   standing     for the run's best: "counted", "held for audit", ...
 *                (kf_lineage_best)
 * kf_prompt_kernel fills one from the database. */

typedef struct {
    json_t *spec;            /* the task object (borrowed): name, description,
                                inputs, outputs, scalars, reference, instructions,
                                tolerance, shapes */
    const char *language;    /* language the kernel is written in */
    const char *target;      /* "cuda:sm_90", "host" */
    json_t *hardware;        /* kf_prompt_hardware's object, or NULL: unknown */
    json_t *compiler;        /* a compile worker's capabilities, or NULL */
    json_t *input_stats;     /* kf_prompt_input_stats, or NULL */
    json_t *output_range;    /* kf_prompt_output_range, or NULL */
    const char *example;     /* a correct kernel for another task; NULL: the
                                built-in one for LANGUAGE */
    json_t *base;            /* the kernel to improve: the selected parent, or
                                the run's best when none is selected; NULL */
    bool base_is_best;       /* BASE is the run's best so far; ignored when
                                BEST is given (their ids decide) */
    json_t *best;            /* the fastest kernel the search holds, whatever
                                its standing (kf_lineage_best), or NULL */
    json_t *last;            /* the last kernel tried from BASE (its latest
                                child), or NULL */
    json_t *children;        /* BASE's recent children (kf_lineage_children),
                                or NULL */
    json_t *inspirations;    /* array of kernels from other cells, or NULL */
    const char *hints;       /* mutation hints (natural language), or NULL */
    json_t *sections;        /* the evolvable sections; NULL: the defaults
                                for the task and target */
    int generation, slot;    /* where the candidate sits in the run */
    int population;          /* siblings per generation; 0: no directions */
    bool templated;          /* ask for a kf-tune templated kernel (tuning
                                rounds: E.2 of the paper) */
    int tune_points;         /* points of a templated kernel built at most */
    json_t *converged;       /* a template of BASE (or BASE) whose sweep won
                                at its own defaults, templated anew
                                (kf_retune_recentre), or NULL */
    json_t *history;         /* the run's finished candidates, newest first
                                (kf_prompt_history), or NULL */
    json_t *siblings;        /* this generation's candidates planned so far
                                (kf_prompt_siblings), or NULL: unknown */
    json_t *ideas;           /* the idea this attempt was handed and the run's
                                record of ideas (kf_search_idea.h), or NULL:
                                the idea of the slot's place */
    int prompt_version;      /* number of the sections' prompt version; 0:
                                not said */
    int prompt_version_generation;  /* the generation that made it */
} kf_prompt_in_t;

/* The prompt text (caller frees), or NULL when out of memory. */
char *kf_prompt_build (const kf_prompt_in_t *in);

/* The hardware a kernel of RUN_ID for BACKEND (and ARCH, when not NULL or
 * empty) will run on: the capabilities of the exec worker that evaluated
 * the run's latest candidate, else of the most recently seen one that
 * advertised them, as {worker, backend, arch, devices: [{name,
 * compute_capability, multiprocessors, memory_bytes, l2_bytes,
 * copy_bandwidth_gbs, cores}], host, compile_workers_beside,
 * exec_workers_beside} (caller's), or NULL when no such worker has ever
 * said HELLO. HOST is the worker's host name when it gave one, with the
 * compile workers and the other exec workers seen on that host in the
 * last ten minutes (kf_prompt_target.c, which defines this). */
json_t *kf_prompt_hardware (kf_db_t *db, const char *backend, const char *arch,
                            int64_t run_id);

/* Candidate CANDIDATE_ID as a prompt kernel object (see above), its
 * source and latest evaluation included (caller's), or NULL. */
json_t *kf_prompt_kernel (kf_db_t *db, int64_t candidate_id);

/* Candidate CANDIDATE_ID with its id and source only, as kf_prompt_kernel
 * has them, in one query (caller's), or NULL: for a reader that needs no
 * more, such as the tuning round's shapes. */
json_t *kf_prompt_kernel_source (kf_db_t *db, int64_t candidate_id);

/* The source stored under blob HASH as a JSON string (caller's), or NULL
 * (none, no such blob, or a database error). */
json_t *kf_prompt_source (kf_db_t *db, const char *hash);

/* The same from HEX, a blob's bytes as a query spells them with
 * encode(data, 'hex') (a string; NULL or null: no blob), so a query can
 * bring the source with its row: NULL where kf_prompt_source gives none
 * (no blob, or bytes that are not UTF-8). */
json_t *kf_prompt_source_hex (json_t *hex);

/* Candidate CANDIDATE_ID's source as a C string (caller frees), or NULL
 * when it has none or the database failed. */
char *kf_prompt_source_of (kf_db_t *db, int64_t candidate_id);

/* The text of section NAME in PROMPT (between its markers), or NULL
 * (caller frees). */
char *kf_prompt_section_text (const char *prompt, const char *name);

/* NS as a reader takes it in at a glance ("12.3 us", "4.56 ms") into BUF;
 * returns BUF. */
const char *kf_prompt_time_text (double ns, char *buf, size_t size);

#endif
