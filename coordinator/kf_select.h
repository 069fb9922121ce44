/*  kf_select.h - choosing a candidate's parent and inspirations from the
 *  run's MAP-Elites archive.
 *
 *  Four strategies, mixed by the run's ratios (docs/search.md): uniform
 *  over the occupied cells (diversity), fitness-proportionate
 *  (exploitation), curiosity (cells the gradient estimator rates as
 *  promising, kf_gradient.h) and island (the elites of the candidate's
 *  island's own archive, so K sub-populations evolve apart between
 *  migrations). Each island's archive is a MAP-Elites grid of its own
 *  candidates and the migrants it received (kf_select_island_archives);
 *  the other strategies read the run's grid, the union of them all.
 *  Inspirations are a few elites of other cells shown beside the parent.
 *
 *  Every draw comes from (run seed, candidate sequence number, stream)
 *  through splitmix64, never from time or addresses, so the same seed and
 *  the same archive give the same choice on every machine and after any
 *  restart. Pure functions: the caller loads the archive.
 */
#ifndef KF_SELECT_H
#define KF_SELECT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define KF_SELECT_MAX_INSPIRATIONS 4
#define KF_SELECT_MAX_ISLANDS 32

typedef enum {
    KF_SELECT_UNIFORM,
    KF_SELECT_FITNESS,
    KF_SELECT_CURIOSITY,
    KF_SELECT_ISLAND,
    KF_SELECT_N
} kf_select_strategy_t;

/* One occupied cell of the archive. The caller passes elites in a fixed
 * order (by cell), so an index means the same elite on every replay. */
typedef struct {
    int64_t candidate_id;
    int coords[3];           /* the elite's levels (mem, algo, sync) */
    double fitness;
    double speedup;
    uint32_t islands;        /* bit i: a member of island i */
    double curiosity;        /* sampling weight from the gradient estimator
                                (> 0), or 0 when there is none */
    int island;              /* the island it lives on: in the run's grid,
                                the one its candidate was planned on; in an
                                island's own archive, that island */
} kf_elite_t;

typedef struct {
    double ratio[KF_SELECT_N];   /* weights of the strategies, >= 0; need
                                    not sum to 1 (a zero turns one off) */
    int islands;                 /* number of islands; 1: islands off */
    int inspirations;            /* how many to pick, 0..KF_SELECT_MAX_INSPIRATIONS */
} kf_select_config_t;

typedef struct {
    int parent;                  /* index into the elites; -1: archive empty */
    kf_select_strategy_t strategy;   /* the strategy drawn */
    bool fallback;               /* it could not choose (an empty island, no
                                    curiosity weights): uniform chose instead */
    bool from_island;            /* the parent indexes the island archives
                                    (the island strategy chose), not the grid */
    double draw;                 /* the draw in [0,1) that picked the strategy */
    int inspirations[KF_SELECT_MAX_INSPIRATIONS];   /* indexes, other cells */
    int n_inspirations;
} kf_selection_t;

/* Stream STREAM of the random numbers of candidate SEQ of a run with
 * RUN_SEED: a splitmix64 state. Different (seed, seq, stream) triples give
 * independent-looking sequences. */
uint64_t kf_select_stream (int64_t run_seed, int64_t seq, uint32_t stream);

/* The next number in [0, 1) of STATE (advanced). */
double kf_select_next (uint64_t *state);

/* Chooses the parent of candidate SEQ, whose turn is ISLAND's, and its
 * inspirations: uniform, fitness and curiosity among the N ELITES of the
 * run's grid; island among the N_POOL entries of POOL that are members of
 * ISLAND (bit ISLAND of their `islands`), fitness-weighted, with
 * OUT->from_island set; an island with no member falls back to uniform
 * over ELITES. An elite slower than the reference is drawn by none of
 * them while ELITES hold one at parity (KF_SELECT_PARITY). Inspirations
 * are elites of ELITES other than the parent. Fills OUT; returns 0, or -1 on a bad argument. */
int kf_select_in (const kf_select_config_t *cfg, const kf_elite_t *elites, size_t n,
                  const kf_elite_t *pool, size_t n_pool, int64_t run_seed, int64_t seq,
                  int island, kf_selection_t *out);

/* kf_select_in with ELITES as their own pool: island selection among the
 * elites of the grid that are members of ISLAND. */
int kf_select (const kf_select_config_t *cfg, const kf_elite_t *elites, size_t n,
               int64_t run_seed, int64_t seq, int island, kf_selection_t *out);

/* The islands' own archives. MEMBERS are the run's archive-worthy
 * candidates (correct, in the order they were planned), each with
 * `islands` its own island and those it migrated into; every island k
 * below ISLANDS keeps, per cell (coordinates binned by BINS), the fittest
 * member of k (on equal fitness the faster, then the earlier): the
 * MAP-Elites rule of the run's grid, applied per island. Writes the
 * elites into OUT (room for N x ISLANDS) by island, then cell, each with
 * `island` k and `islands` bit k alone; returns how many. */
size_t kf_select_island_archives (const kf_elite_t *members, size_t n, int bins, int islands,
                                  kf_elite_t *out);

/* Up to MAX indexes of the COUNT best elites by fitness (ties: speedup,
 * then order), best first, into OUT. Returns how many. */
int kf_select_best (const kf_elite_t *elites, size_t n, int *out, int max);

/* The reference's speed, as a speedup, less the noise of a measurement of
 * it. A kernel slower than that is no parent while the run's grid holds
 * one at least this fast: round 7 of issue 15 planned a generation from
 * a 0.25x kernel, the first of its generation to be judged, and kept
 * drawing it (and handing it ideas it lacked) after 5x ones were judged.
 * kf_select_in weighs such a kernel 0 then, in every strategy and in the
 * uniform fallback. Not 1: a copy of the reference measures either side
 * of 1 from run to run, and a floor there gave two runs of one seed, with
 * the same kernels in the same cells, different parents (CI, stop 28). */
#define KF_SELECT_PARITY 0.9

/* Whether any of the N ELITES is at the reference's speed, within the
 * noise (KF_SELECT_PARITY). */
bool kf_select_has_parity (const kf_elite_t *elites, size_t n);

/* Whether the next candidate, of GENERATION, waits to be planned: while
 * none of the N ELITES of the run's grid beats the reference, a
 * generation after the first is planned only once more than half of the
 * previous one's POPULATION candidates are judged (JUDGED of them), so
 * its parents are not taken from whichever slow kernel happened to be
 * judged first. Once the grid holds a kernel at parity nothing waits:
 * the steady search's throughput is what it was. */
bool kf_select_hold (const kf_elite_t *elites, size_t n, int generation, int population,
                     int64_t judged);

/* The elites a tuning round templates: up to MAX indexes, as
 * kf_select_best, of those whose speedup is at least WITHIN times the
 * best elite's (WITHIN 0: any). Round 7 of issue 15 templated a 1.46x
 * kernel beside a 15x best: a sweep of its parameters cannot reach the
 * run's best, so its tuning candidate was spent. Returns how many. */
int kf_select_near_best (const kf_elite_t *elites, size_t n, double within, int *out,
                         int max);

/* "uniform", "fitness", "curiosity", "island". */
const char *kf_select_strategy_name (kf_select_strategy_t strategy);

#endif
