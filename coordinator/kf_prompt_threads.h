/*  kf_prompt_threads.h - what threads started in each call cost on the
 *  exec host, one prediction for the prompt and the planner.
 *
 *  Round 11: the planner handed the threads idea to softsign kernels four
 *  times while the prompt's own paragraph said "threads started in each
 *  call lose here", and the paragraph applied the one-thread reasoning to
 *  parents that were threaded already. The break-even and the verdict
 *  are computed here once: the paragraph (kf_prompt_direction) says it,
 *  and the planner (kf_search_idea.c) does not hand the threads idea to a
 *  kernel it predicts a loss for.
 */
#ifndef KF_PROMPT_THREADS_H
#define KF_PROMPT_THREADS_H

#include "kf_prompt.h"
#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>

/* A call within this many break-evens is near enough to it that a faster
 * successor is said to gain less from threads (round 13). */
#define KF_PROMPT_THREADS_NEAR 10

/* The exec host's figures from HARDWARE (kf_prompt_hardware): *START_US,
 * one thread's start and join, and *CORES; false when either is unknown
 * or there is one core (then no prediction is made). */
bool kf_prompt_threads_host (json_t *hardware, double *start_us, double *cores);

/* Round 25's notes: the threads idea was handed as a plain win on a host
 * whose start figures found two threads no faster than one (a VM whose
 * second vCPU was busy). What all cores gave over one core alone when the
 * exec worker measured HARDWARE's first device at start, in the figure
 * that bounds a task of SPEC: the f32 FMA peak (peak_gflops_all_threads
 * against peak_gflops_one_core) for a product or attention; the copy
 * with streaming stores (copy_stream_all_cores_gbs against
 * copy_stream_one_core_gbs), else the cold read, for a cheap elementwise
 * task, a row reduction or a scan; for a costly formula or another task,
 * either may bound it, so the one that gained more. Where the bounding
 * figure is not measured, the other stands in. */
typedef struct {
    const char *what;    /* "f32 FMA peak", "copy rate with streaming stores", ... */
    const char *unit;    /* "GFLOP/s", "GB/s" */
    double one, all;     /* one core alone, one thread on each logical CPU at once */
    double cores;        /* logical CPUs */
} kf_prompt_cores_gain_t;

/* All cores give less than this many times one core's figure: threads are
 * no win to expect here (15%: within what one start's measurement moves by
 * on a busy host, and below what a second thread's start and join leave
 * of a call of a few milliseconds). */
#define KF_PROMPT_CORES_GAIN_MIN 1.15

/* Whether HARDWARE's start figures show no gain from all cores for SPEC's
 * task (above; under KF_PROMPT_CORES_GAIN_MIN), the figure into *GAIN
 * (may be NULL); false where neither figure is measured or there is one
 * CPU. */
bool kf_prompt_cores_no_gain (json_t *hardware, json_t *spec, kf_prompt_cores_gain_t *gain);

/* The sentence that states GAIN beside the threads idea: " Measured by the
 * exec worker at start, this host's f32 FMA peak was 61 GFLOP/s with a
 * thread on each of its 2 logical CPUs against 65 on one core alone
 * (0.94x, ...): ... this idea is no sure win here ...". */
void kf_prompt_cores_gain_text (FILE *f, const kf_prompt_cores_gain_t *gain);

/* Host device D's memory pair into *G: all cores' and one core's
 * streaming copy (what a kernel that reads and writes meets), else their
 * cold reads; false where neither pair is measured. */
bool kf_prompt_memory_pair (json_t *d, kf_prompt_cores_gain_t *g);

/* Whether SPEC's time is its bytes: plain elementwise work, a row
 * reduction, a scan (not a product's or attention's multiply-adds, nor an
 * elementwise formula of costly calls). */
bool kf_prompt_memory_task (json_t *spec);

/* Round 52: a memory task's bytes (inputs read, outputs written) at D's
 * cold rates on one core and on all (kf_prompt_cold_ms), into *ONE and
 * *ALL, ms; false for another task or where the cold read rates or the
 * streaming-store write rates are not measured. */
bool kf_prompt_memory_cold (json_t *spec, json_t *d, double *one, double *all);

/* The time a call must take before threads started in it can pay: CORES
 * starts' worth of START_US, in ns. */
double kf_prompt_threads_even_ns (double start_us, double cores);

/* The prediction: a kernel that takes NS a call (0: unknown) and starts
 * no threads itself (THREADED false) loses by threads started in each
 * call when NS is below the break-even. Nothing is predicted for a
 * threaded kernel (its time includes its starts) or an unknown time. */
bool kf_prompt_threads_lose (double start_us, double cores, double ns, bool threaded);

/* Round 15: the run's one-thread form of threaded kernel K: a correct
 * kernel of IN->history timed in full whose feature bits (those kept
 * with the plan, kf_prompt_source_features) are K's less the threads
 * bits (that it starts them, and how they split the work), the same
 * design on one thread; K's parent where it is one, else
 * the fastest. Its id, *NS its time and *FEATURES (may be NULL) the bits
 * they share; 0 (and *NS 0) when there is none or K starts no threads. */
int64_t kf_prompt_threads_twin (const kf_prompt_in_t *in, json_t *k, double *ns,
                                unsigned *features);

/* What threaded kernel K and, where TWIN (its one-thread form, 0: none)
 * is in IN->history with a load, TWIN had of the host while each was
 * timed (kf_prompt_load_cores): " While candidate 6 was timed, other
 * work took 0.6 of a core on average and the kernel could use 2 CPUs,
 * ...; while candidate 4 was timed, ...". Nothing for a kernel without
 * a recorded load. */
void kf_prompt_threads_load (FILE *f, const kf_prompt_in_t *in, json_t *k, int64_t twin);

/* Kernel K's own one-core figure: the median per call the exec worker
 * timed with its process, every thread of it, held to one CPU after its
 * full timing (its evaluation's "one_core", docs/evaluation.md); 0 when
 * none (a kernel whose threads did not run side by side, or an older
 * evaluation). */
double kf_prompt_threads_own_ns (json_t *k);

/* "on one core the same code takes 4.46 ms a call (...): its threads buy
 * 51% of the call (...)" for a kernel of NS a call on every CPU and
 * ONE_NS on one, without a full stop; where LOAD (the kernel's
 * host_load, or NULL) says other work ran beside the timing
 * (kf_prompt_load_busy), that the two are not like for like; where
 * CPU_PER_WALL (kf_prompt_threads_side_by_side, 0: not known) is under
 * KF_PROMPT_SIDE_BY_SIDE, that its threads hardly ran side by side. */
void kf_prompt_threads_own_text (FILE *f, double ns, double one_ns, json_t *load,
                                 double cpu_per_wall);
/* Below this many CPU-seconds a second of its calls (its full timing's,
 * CPU_PER_WALL above) a threaded kernel's threads did not run side by
 * side: the text says the gap to its one-core time is not theirs (the
 * host judge's own threshold for a threaded kernel, kf_host_eval.h). */
#define KF_PROMPT_SIDE_BY_SIDE 1.2
/* K's CPU-seconds a second of calls in its full timing (its one_core
 * record's cpu_per_wall), 0 where not measured. */
double kf_prompt_threads_side_by_side (json_t *k);

/* TWIN's relation to threaded kernel K: "parent" or "child" (IN->history
 * or K's own parent_id), the closest code, where the feature bits alone
 * cannot tell a 4 x 4 register tile from a 5 x 4 one (round 17); NULL
 * for neither. */
const char *kf_prompt_threads_twin_related (const kf_prompt_in_t *in, json_t *k, int64_t twin);

/* The threads kernel SOURCE (in LANGUAGE) runs its work on: 1 for one
 * that starts none; for one that does, the value of a #define whose
 * name holds THREAD (NTHREADS 2), else the physical cores of HARDWARE's
 * first device with *ASSUMED set. 0 when not known. */
double kf_prompt_threads_in_use (const char *source, const char *language, json_t *hardware,
                                 bool *assumed);

/* The paragraph "What threads cost here" beside a threads IDEA or a
 * kernel to improve (IN->base) that starts threads: the break-even; for
 * a one-thread kernel to improve, its time against it (the ratio and the
 * net at best); for a threaded one, what its threads bought against the
 * same design on one thread where the run has it
 * (kf_prompt_threads_twin), else against the run's fastest
 * single-thread kernel (IN->ideas "threads", from the
 * planner: {single_id, single_ns, threaded, threaded_id, threaded_ns},
 * full-protocol times); and, where every threaded kernel of the run was
 * slower than that one, that, or for a one-thread kernel to improve,
 * where the fastest threaded one was faster, that. Nothing without the
 * host's figures. Beside a threads IDEA where all cores gave no gain at
 * start (kf_prompt_cores_no_gain), those figures
 * (kf_prompt_cores_gain_text), with or without the paragraph. */
void kf_prompt_thread_cost (FILE *f, const kf_prompt_in_t *in, const char *idea);

/* The tuning request's word on threads for a kernel to improve (IN->base)
 * that starts none, on a host of two cores or more: the template may
 * make the thread count a parameter of default 1 (the all-defaults point
 * is then the parent), with the paragraph above, the run's figures read
 * from IN->history where IN->ideas has none; where threads are predicted
 * to lose (kf_prompt_threads_lose), to leave it out. Nothing otherwise. */
void kf_prompt_thread_param (FILE *f, const kf_prompt_in_t *in);

#endif
