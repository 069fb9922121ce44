/*  kf_prompt_budget.h - the host's read rates in the Target section, and
 *  what they make of a task: its memory time with the timing's cold
 *  caches, and for an elementwise task the cycles of arithmetic each
 *  vector of outputs may take before arithmetic, not memory, bounds it.
 *
 *  Round 13 of the model in the loop: an erf-GELU's author had only
 *  warm-cache copy rates to set the task against (the timing flushes the
 *  caches, so inputs come from memory), no cold rate of all cores reading
 *  at once, no measure of how long a SIMD polynomial may be, and a matrix
 *  product's author no L2 rate to size blocks by.
 */
#ifndef KF_PROMPT_BUDGET_H
#define KF_PROMPT_BUDGET_H

#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>

/* Writes the lines on host device D's measured reads and writes
 * (exec-worker's kf_host_caps.h): one core's cold-cache read, all cores'
 * cold-cache read at once, one core's and all cores' write with streaming
 * stores, one core's read from its L2, and one core's load latency from
 * memory (and L2) with the bytes and lines a core must keep in flight
 * at its cold (and L2) read rate: the prefetch distance. Each only where
 * D has it. */
void kf_prompt_host_reads (FILE *f, json_t *d);

/* D's clock in MHz: the measured one, else the one the host reports;
 * 0 when neither is known. */
double kf_prompt_host_mhz (json_t *d);

/* Host device D's physical cores, else its logical CPUs (SMT siblings
 * share one core's units), 0 where neither is known. */
double kf_prompt_host_cores (json_t *d);

/* D's streaming-store write rate, GB/s, of one core (ALL false) or of all
 * cores at once (ALL true), "write_stream_*_gbs"; 0 where not measured. */
double kf_prompt_write_gbs (json_t *d, bool all);

/* The time N bytes read and M written take at D's cold rates, in ms, of
 * one core (ALL false) or of all cores at once (ALL true): N at the cold
 * read rate plus M at the streaming-store write rate (round 20), or at
 * the read rate where D has no write rate; 0 when the read rate is
 * unknown or N + M is not positive. An ordinary store's read of its line
 * is a read: N + M read, M written (its line's write-back counted at the
 * streaming-store rate too, the one write rate measured). */
double kf_prompt_cold_ms (double n, double m, json_t *d, bool all);

/* Writes, as the end of a task's traffic line, the time reading N bytes
 * takes at D's cold read rates, and reading N and writing M; each rate
 * only where measured, nothing when neither is. */
void kf_prompt_task_cold_text (FILE *f, double n, double m, json_t *d);

/* The f32 lanes of the widest vector unit of ISA (the extensions the
 * kernel is compiled for; NULL or "" for host device D's "isa"): 16 with
 * AVX-512, 8 with AVX2, 4 with SSE or NEON, *NAME its name; 0 when it
 * names none of them. */
int kf_prompt_vector_lanes (json_t *d, const char *isa, const char **name);

/* Cycles of one core per vector of LANES f32 outputs of task SPEC, for
 * MS of time at host device D's clock with THREADS cores sharing the
 * vectors evenly: MS x clock x THREADS / vectors. 0 when a figure is
 * unknown. The budget line's figures and a kernel's position (round 15)
 * are both this. */
double kf_prompt_vector_cycles (json_t *spec, json_t *d, int lanes, double ms, double threads);

/* One core's measured vector FMAs a cycle on host device D with LANES
 * f32 lanes: its one-core FMA peak over 2 flops x LANES x its clock; 0
 * where either is not known (the budget line's and kf_prompt_arith.h's). */
double kf_prompt_vector_fmas (json_t *d, int lanes);

/* Writes one line for an elementwise task SPEC on host device D: the
 * cycles per vector of L f32 lanes (16 with AVX-512, 8 with AVX2, 4 with
 * SSE or NEON, by ISA: the extensions the kernel is compiled for, or
 * NULL or "" for D's "isa") that the task's memory time at the cold read
 * rates leaves, at one core and at all cores, at D's clock; and the
 * vector FMAs a cycle one core's measured FMA peak implies, so the
 * budget reads as instructions. Derived, and said to be. Each part only
 * where its figures are known; nothing for another class of task. */
void kf_prompt_task_budget_line (FILE *f, json_t *spec, json_t *d, const char *isa);

/* Round 14: a matrix product's prompt gave no operation count, and the
 * model worked out 604 million itself. For task SPEC's product
 * (kf_prompt_matmul_flops), its operations and the least time they take
 * at device D's one-core FMA peak and at the summed peak; nothing when
 * either is unknown. */
void kf_prompt_task_product_line (FILE *f, json_t *spec, json_t *d);

#endif
