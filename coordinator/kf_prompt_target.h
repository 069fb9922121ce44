/*  kf_prompt_target.h - the prompt's account of where a kernel runs and
 *  where it stands there.
 *
 *  A model can only aim at a bound it is told: the target's compiler and
 *  the flags every candidate is built with, what the devices advertise
 *  (cores or multiprocessors, memory, caches, clock, ISA where the worker
 *  reports them) and the peaks the exec worker measured at start-up
 *  (copy bandwidth, FMA throughput); then, for a timed kernel, its share
 *  of both peaks and how much of a speedup is timing noise.
 */
#ifndef KF_PROMPT_TARGET_H
#define KF_PROMPT_TARGET_H

#include "kf_db.h"
#include "kf_prompt_class.h"
#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

/* More L3 than this for each CPU is no real core's (the largest are
 * about 12 MiB a core), so a figure above it is a virtual machine's view
 * of a larger host's cache: not one to size blocks by. */
#define KF_PROMPT_L3_PER_CPU_MAX (32.0 * 1024 * 1024)

/* The flags the compile worker builds LANGUAGE with (static text with
 * "ARCH" standing for the target's arch), or NULL for a language it
 * builds another way (OpenCL C through clang and llvm-spirv).
 * tests/unit/test_prompt_target.c holds this against the toolchains. */
const char *kf_prompt_build_flags (const char *language);

/* Writes the "## Target" section: HARDWARE is kf_prompt_hardware's
 * object (or NULL; its "compile_isa", kf_prompt_host_isa's list, names
 * what a host kernel is compiled for; its "task", the run's task spec,
 * gives the host's figures this task's traffic and libm calls),
 * COMPILER a compile worker's capabilities ({toolchains: {NAME:
 * version}, arch}; or NULL), for LANGUAGE on TARGET. */
void kf_prompt_target_section (FILE *f, const char *target, const char *language,
                               json_t *hardware, json_t *compiler);

/* Writes the host's memory layout of SPEC's tensors: dense, row-major,
 * each ending at an inaccessible page (the exec worker's kf_runner.c),
 * so the alignment of each tensor's start follows from its size. */
void kf_prompt_host_layout (FILE *f, json_t *spec);

/* The bytes of TENSOR (a spec's {shape, dtype}). */
double kf_prompt_tensor_bytes (json_t *tensor);

/* The bytes of task SPEC's tensors in LIST ("inputs" or "outputs"), and
 * the elements of its outputs. */
double kf_prompt_side_bytes (json_t *spec, const char *list);
double kf_prompt_output_elements (json_t *spec);

/* How much more traffic a host kernel of task SPEC moves than its
 * inputs and outputs once: (N + 2M) / (N + M) when its stores are
 * ordinary (each reads its line before writing it; round 15: 128 MiB
 * moved, not 96), 1 when STREAMING (non-temporal stores read nothing)
 * or SPEC names no outputs. */
double kf_prompt_store_factor (json_t *spec, bool streaming);

/* A kernel's bytes a second as a share of one measured rate, with the
 * traffic counted as that rate counts its own (kf_prompt_share.c, the
 * one writer of such a share; round 17: one kernel read "57.9 GB/s, 90%
 * of the measured copy bandwidth" counting N + 2M against a copy that
 * counts N + M, and "43.5 GB/s, 94% of one core's read" counting N + M).
 * The rates: */
typedef enum {
    KF_SHARE_COPY,        /* the evaluation's "copy_gbs": a memcpy on every core, bytes read
                           * plus written (no write-allocate read; the C library picks its
                           * stores), so the kernel counts N + M, as the copy does */
    KF_SHARE_ONE_CORE,    /* one core's cold read ("read_cold_one_core_gbs"), or where not
                           * measured its fastest copy counted as whole traffic (the larger
                           * of "copy_one_core_traffic_gbs", 1.5x "copy_one_core_gbs", and
                           * "copy_stream_one_core_gbs"): bytes that cross the memory bus,
                           * so the kernel counts N + 2M for ordinary stores */
    KF_SHARE_ALL_CORES    /* all cores' cold read ("read_cold_all_cores_gbs"), counted as
                           * one core's */
} kf_share_rate_t;

/* What a host kernel's code stores with (kf_prompt_stores). */
typedef enum {
    KF_STORES_UNKNOWN,    /* no source, or not the host: counted N + M */
    KF_STORES_ORDINARY,   /* each store reads its line first: N + 2M against a read rate */
    KF_STORES_STREAMING   /* non-temporal stores read nothing: N + M */
} kf_stores_t;

typedef struct {
    double gbs;           /* the kernel's bytes a second, counted as TRAFFIC says */
    double bytes;         /* the bytes one call moves, counted so; 0 not known */
    double rate;          /* the measured rate, GB/s; 0 not measured */
    double share;         /* gbs / rate; 0 where either is not known */
    bool doubled;         /* TRAFFIC is N + 2M */
    const char *traffic;  /* "N + M" or "N + 2M" */
    const char *why;      /* why that count, a clause ("each ordinary store reads its
                           * line first"); static text */
    const char *rate_name;  /* "the measured copy bandwidth", "one core's cold read
                             * rate", "all cores' cold read rate", "one core's copy
                             * rate counted as its whole traffic"; static text */
    bool mix;               /* RATE is the bound of the kernel's reads and writes, each
                             * at its own measured rate (kf_plausible_mix) */
} kf_share_t;

/* The ceiling of a copy counted N + M on host device D: COPY_GBS (the
 * worker's memcpy on every core), or the fastest of its other copies
 * where one went faster; *NAME says which ("one core's streaming copy"),
 * *SHARE_NAME the same as a share's yardstick ("..., the fastest copy
 * measured", or "the measured copy bandwidth"); static text. Either may
 * be NULL. */
double kf_prompt_copy_ceiling (json_t *d, double copy_gbs, const char **name,
                               const char **share_name);

/* The stores of KERNEL's (a prompt kernel object) "source" in LANGUAGE
 * on KIND: ordinary or streaming on the host where the source is known
 * and SPEC names outputs, else KF_STORES_UNKNOWN. */
kf_stores_t kf_prompt_stores (json_t *kernel, json_t *spec, const char *language,
                              kf_target_kind_t kind);

/* The share of BANDWIDTH (an evaluation's "bandwidth" object: its
 * "candidate_gbs" and "bytes" count N + M, its "copy_gbs") against
 * AGAINST, host device DEVICE's rates (hardware's first device; NULL for
 * KF_SHARE_COPY alone), for a kernel of task SPEC storing with STORES.
 * Each caller's sentence names r.traffic and r.rate_name.
 * The meta prompt's s_shares (an outcome's "features" bits, no source):
 * stores = host && json_is_integer (features) ? (features & (1 <<
 * KF_IDEA_STREAM) ? KF_STORES_STREAMING : KF_STORES_ORDINARY) :
 * KF_STORES_UNKNOWN, then kf_prompt_memory_share (bw, spec, device,
 * stores, KF_SHARE_COPY) for the copy share (N + M) and with
 * KF_SHARE_ONE_CORE / KF_SHARE_ALL_CORES for the cold read shares. */
kf_share_t kf_prompt_memory_share (json_t *bandwidth, json_t *spec, json_t *device,
                                   kf_stores_t stores, kf_share_rate_t against);

/* Writes one line on the time task SPEC's traffic (N bytes read, M
 * written) takes at host device D's one-core copy rates: with ordinary
 * stores (N + 2M), with streaming stores (N + M), in ms, and what
 * streaming saves by those figures; then at D's cold read rates
 * (kf_prompt_task_cold_text). Nothing when D has no copy rate. */
void kf_prompt_task_traffic_line (FILE *f, json_t *spec, json_t *d);

/* Writes one line on the libm calls (tanh, exp, erf, log, sigmoid, ...)
 * task SPEC's formula makes per output element (kf_prompt_formula.h),
 * of an elementwise task or in a matrix product's epilogue: their
 * number per kernel call, their time as scalar calls at an assumed
 * per-call cost and host device D's clock, set against the task's bound
 * (the product at one core's FMA peak, or the traffic at one core's
 * copy rate), and that they must be vectorised where that is 20% of
 * the bound or more. Nothing when the formula makes none. */
void kf_prompt_task_libm_line (FILE *f, json_t *spec, json_t *d);

/* Writes one line, where the reference took REF_NS a call and that is
 * under KF_PROMPT_SLOW_REFERENCE of host device D's one-core figure for
 * task SPEC (its matrix product's operations against the one-core FMA
 * peak, else its traffic against the one-core copy rate): the
 * reference's rate and share, and that speedups against it run high.
 * Rounds 11 and 12: PyTorch eager took 59 ms for a 302-MFLOP product and
 * 90 ms for SELU over 16 MiB, and no prompt said what that made of a
 * 100x speedup. Nothing otherwise. */
#define KF_PROMPT_SLOW_REFERENCE 0.1
void kf_prompt_reference_rate_line (FILE *f, json_t *spec, json_t *d, double ref_ns);

/* A host kernel's time a call in cycles of each core per vector of
 * output (kf_prompt_per_vector). */
typedef struct {
    double cycles;      /* each core's cycles per vector on its threads */
    double budget;      /* the Target section's memory budget for as many
                           cores (one, or all); 0 where neither applies */
    double threads;     /* threads it runs (its code's count, or assumed) */
    double cpus;        /* CPUs' time its threads had: THREADS, or (round
                           22) fewer where its timing's host_load says
                           other work took cores (at least 1) */
    double others;      /* cores' worth other work took (0: none said) */
    double used;        /* round 32: CPU-seconds a second of calls its
                           process used in its full timing, where under
                           THREADS and the load's reckoning (0: not) */
    double ms;          /* its time a call */
    double mhz;         /* the host's clock */
    int lanes;          /* f32 lanes of the vector unit */
    const char *unit;   /* the unit's name; static text */
    bool assumed;       /* THREADS assumed one a core (its code fixes none) */
    bool write_rate;    /* the budget counts writes at the streaming rate */
} kf_per_vector_t;

/* *PV for kernel K ("candidate_ns", "source") of SPEC on HARDWARE's first
 * device, its STORES as kf_prompt_stores reads them (1 ordinary: N + 2M
 * in the budget, 2 streaming, 0 not known): false (nothing to say) for a
 * task whose work does not go by its output as an elementwise task's
 * does, or with no time. */
bool kf_prompt_per_vector (json_t *k, json_t *spec, json_t *hardware, int stores,
                           kf_per_vector_t *pv);

/* Writes one line on kernel K's position against the peaks (its
 * evaluation's bandwidth and compute figures, the device's measured
 * ceilings), when it was timed: memory and compute both, in the words of
 * kf_rates.h, with the cache that keeps data between calls on a KIND
 * target taken from HARDWARE (kf_prompt_hardware's object, or NULL).
 * Where the evaluation has no compute figure, task SPEC's
 * kf_prompt_matmul_flops stands in, or an elementwise formula's counted
 * operations times its output elements (kf_prompt_formula.h), labelled
 * as derived (kf_prompt_position.c defines these). On the host (round
 * 15) the bytes are N + 2M for a kernel whose code (K's "source") has no
 * streaming stores, each ordinary store reading its line first, N + M
 * for one that has them, and the line says which; and for an
 * elementwise task (or a row reduction or scan with as many outputs as
 * inputs) the time in cycles of each core per vector of output on the
 * threads the code runs, beside the Target section's budget. */
void kf_prompt_position_line (FILE *f, json_t *k, json_t *spec, json_t *hardware,
                              kf_target_kind_t kind);

/* The position line's per-vector figure of host kernel K (its
 * "candidate_ns", and its "source" for the threads it runs) for task
 * SPEC on HARDWARE, after LEAD and without a full stop: "2.85 ms a call
 * is about 36 cycles of each core per vector of 8 f32 lanes ... the
 * arithmetic budget for one core ... is about 21", the budget counting
 * the outputs twice where STORES is KF_STORES_ORDINARY. False, and
 * nothing written, where the task's work does not go by its output or a
 * figure is unknown (kf_prompt_position.c). */
bool kf_prompt_per_vector_text (FILE *f, json_t *k, json_t *spec, json_t *hardware,
                                kf_stores_t stores, const char *lead);

/* The operations of task SPEC's matrix product, 2*M*N*K, when its class
 * is a matrix product and its shapes give M, N, K unambiguously: exactly
 * two rank-2 inputs, x [M,K] with weight [N,K] (nn.Linear) or with
 * [K,N] (torch.matmul), the one output [M,N], no input of higher rank
 * (every reading of the pair that fits must give the same count); or
 * B batched products (torch.bmm: both matrices and the output of rank 3
 * with one leading size B), B*2*M*N*K; with MNK (or NULL) set to {M, N,
 * K} of one product. 0 otherwise. */
/* A tensor spec's rank, and its size along dimension I (-1 where it has
 * none); kf_prompt_position.c. */
size_t kf_prompt_rank (json_t *tensor);
long long kf_prompt_dim (json_t *tensor, size_t i);
double kf_prompt_matmul_flops (json_t *spec, long long mnk[3]);
/* COUNT, kf_prompt_matmul_count's of SPEC with MNK, as the work a kernel
 * needs: where the product is x @ x^T (kf_prompt_product_self) its
 * diagonal and one triangle, COUNT x (M + 1) / 2M (round 41: a kernel
 * that computed one triangle of a Gram matrix read as above the FMA
 * peak); else COUNT. kf_prompt_matmul_flops counts this way. */
double kf_prompt_matmul_needed (json_t *spec, double count, const long long mnk[3]);

/* Round 43: a kernel that computed every output of x @ x.t() read
 * "counting the symmetric product's diagonal and one triangle ... runs
 * at twice these figures". Whether SPEC's product is x @ x^T and the
 * kernel of SOURCE (features FEATURES where SOURCE is NULL; ~0u where
 * neither is known) computes all of it: its loops walk no triangle
 * (KF_IDEA_TRIANGLE, kf_descriptor_triangle.h). */
bool kf_prompt_product_every_output (json_t *spec, const char *source, unsigned features);

/* Round 45: a triangle kernel the reading missed, counted at the full
 * product's work, read "136% of one core's peak" beside "1.05
 * CPU-seconds a second". The most kernel K (its "one_core" record) could
 * compute: DEV's one-core FMA peak times the CPU-seconds a second its
 * calls used (at least one) where measured, KF_PROMPT_PEAK_MARGIN times
 * that for the peak's own error; else DEV's every-core peak; 0 where
 * neither is known. */
#define KF_PROMPT_PEAK_MARGIN 1.1
double kf_prompt_compute_ceiling (json_t *k, json_t *dev);
/* The same, with *BATCH the products counted (a batch's leading size, or
 * round 37: two products of one shape sharing an operand, a @ w and
 * a @ v of a gated unit); kf_prompt_products.c. */
double kf_prompt_matmul_count (json_t *spec, long long *batch, long long mnk[3]);
/* The same for a convolution (torch's convNd, not transposed): the
 * multiply-adds of its one output [B][C_out][spatial...] from a weight
 * [C_out][C_in / groups][kernel...] and an input [B][C_in][...], twice;
 * MNK its implicit product per group (M = C_out / groups, N = B x the
 * output's spatial size, K = C_in / groups x the kernel's size) and
 * *GROUPS (may be NULL) the groups. 0 where SPEC is no such
 * convolution. */
double kf_prompt_conv_flops (json_t *spec, long long mnk[3], long long *groups);
/* Such a convolution's kernel: the number of its spatial dimensions (1
 * to 3) with their taps in TAPS; 0 where SPEC is no such convolution. */
int kf_prompt_conv_taps (json_t *spec, long long taps[3]);
/* The operations of SPEC's product: a convolution's, else a matrix
 * product's (the two above); for the figures that go by the count alone
 * (a floor, a share of the peak), where the product's structure (its
 * operands' layout, blocks, epilogue) is kf_prompt_matmul_flops's. */
double kf_prompt_product_flops (json_t *spec, long long mnk[3]);

/* A chain of two products, (x @ u) @ v, in SPEC (a rank-2 output, three
 * rank-2 inputs [M][K], [K][R], [R][N], a reference that writes two
 * products): its operations, 2 M R (K + N), and MKRN {M, K, R, N}; 0
 * where SPEC is no such chain (round 51: "compute: not known"). */
double kf_prompt_chain_flops (json_t *spec, long long mkrn[4]);

/* The fusion idea of such a chain (kf_prompt_chain_flops): a block of
 * rows through both products, the intermediate never written out whole;
 * NULL where SPEC is no chain. The caller frees it. */
char *kf_prompt_chain_idea (json_t *spec);
/* Round 27: attention's operations (its class, inputs q [..., S, D], k
 * [..., Sk, D], v [..., Sk, Dv], output [..., S, Dv], the leading sizes
 * alike): 2 x S x Sk x (D + Dv) for each of the *HEADS leading pairs
 * (may be NULL); SIZES (or NULL) {S, Sk, D, Dv}. 0 otherwise. Part of
 * kf_prompt_product_flops. */
double kf_prompt_attention_flops (json_t *spec, long long *heads, long long sizes[4]);
/* Round 28: whether SPEC's attention is causal (its forward masks with
 * triu or tril, or says is_causal=True): over a square it then counts
 * the S (S + 1) / 2 pairs on and below the diagonal. */
bool kf_prompt_attention_causal (json_t *spec);
/* Writes the Target section's compute floor of attention (its two
 * products and the softmax's exponentials), where it has a count and
 * D holds the FMA peak. */
void kf_prompt_attention_line (FILE *f, json_t *spec, json_t *d);

/* Writes one line on the page faults of K's process per timed call,
 * when the judge counted them (the host), then one on the timing noise
 * of K's speedup (its evaluation's p10-p90 spreads of the candidate's
 * and the reference's samples), when they were recorded, and the host's
 * load while it was timed. */
void kf_prompt_noise_line (FILE *f, json_t *k);

/* Writes what the run measured of its own timing noise (HARDWARE's
 * run_noise: the median and largest spread of its correct kernels'
 * speedups, the host's load over its timings, shared or not), and how
 * far screen and full figures of one kernel came apart, saying how many
 * candidates each figure rests on (kf_prompt_noise.c). */
void kf_prompt_run_noise (FILE *f, json_t *hardware);

/* Writes, for a tuning prompt, the run's screen-against-full spread
 * (HARDWARE's screen_full_gap, _typical and _count) as its range, the
 * median and the largest ratio, and that a sweep's points are ranked by
 * their screen figures with only the fastest timed in full, so points
 * within that spread of each other are not separated (round 15: a
 * screen 1.46x off its full figure, where "up to 1.22x" was quoted).
 * Nothing before any candidate was timed both ways. */
void kf_prompt_screen_sweep (FILE *f, json_t *hardware);

/* Into BUF, the host's load while a kernel was timed: LOAD its
 * evaluation's "host_load" (exec-worker/kf_host_load.h) and COND its
 * "host_condition" (the workers registered on the exec host then, stored
 * by the coordinator), either NULL: "timed with 1.6 other runnable tasks
 * on 2 CPUs (other processes took 45% of the CPUs' time while it was
 * timed); the exec host shared with 1 compile and 0 other exec workers".
 * "" when neither is known. Returns whether the host was busy (0.5 or
 * more other runnable tasks, or 10% or more of the CPUs' time). */
bool kf_prompt_load_text (json_t *load, json_t *cond, char *buf, size_t size);

/* Into BUF, what a threaded kernel had of the host while it was timed,
 * from LOAD (its evaluation's "host_load"): "other work took 0.6 of a
 * core on average and the kernel could use 2 CPUs, so at most about 1.4
 * CPUs' time was left to its threads" (the last part only where it could
 * use every CPU); of a one-thread kernel (THREADED false) the first part
 * only. Each part only where measured; "" and 0 when neither
 * is (a host without /proc/stat records no load). Returns the length.
 * Round 16: threads bought 4% where two cores gave 1.8 times one core's
 * rate, and no prompt said whether the second CPU was the kernel's. */
size_t kf_prompt_load_cores (json_t *load, bool threaded, char *buf, size_t size);

/* Whether a timing's host_load says other work ran beside it: half a
 * runnable task or more on average, or a tenth of the CPUs' time; never
 * where its figures are over undisturbed samples only
 * (kf_prompt_load_undisturbed). */
bool kf_prompt_load_busy (json_t *load);

/* Whether a timing's host_load says its figures are over the samples in
 * which neither side waited for a CPU ("undisturbed_only",
 * exec-worker/kf_host_wait.h): other work may have run, but not while
 * the samples counted were taken. */
bool kf_prompt_load_undisturbed (json_t *load);

/* How many cores' worth of CPU time other processes took on average
 * while a timing ran (its host_load LOAD); below 0 when not measured. */
double kf_prompt_load_others (json_t *load);

/* The SIMD extensions every host exec worker seen in the last ten
 * minutes reported (capabilities devices[0].isa; the most recently seen
 * one's alone when none is that recent), in the first one's order,
 * space-separated: what a host compile job's target.arch carries
 * (common/kf_isa.h) and the Target section states. Caller frees; ""
 * when no host exec worker reported a list; NULL on a database error. */
char *kf_prompt_host_isa (kf_db_t *db);

/* The capabilities of the compile worker seen last that builds for
 * BACKEND (caller's), or NULL. */
json_t *kf_prompt_compiler (kf_db_t *db, const char *backend);

#endif
