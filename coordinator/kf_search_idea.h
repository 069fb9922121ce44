/*  kf_search_idea.h - the idea each attempt is handed, and the kernel it
 *  starts from.
 *
 *  Slot k of generation g leans towards idea (g * population + k) of the
 *  task's list (kf_prompt_class.c). Round 5 of issue 15 found the ideas
 *  handed to kernels that already did them; the planner since keeps the
 *  selected parent when it lacks the idea, else takes the first elite in
 *  the archive's order that lacks it, from the same island when the
 *  island strategy drew it. Never by measured speed, but for one rule:
 *  a selected parent at the reference's speed or better is not traded
 *  for one below it (round 7: a 0.25x kernel lacked every idea the 5x
 *  ones had, and kept getting children; kf_select.h). The same archive
 *  (cells, sources, and which kernels are below the reference: the
 *  fingerprint says so) must give the same parent, so a search repeats
 *  (test_search_switches).
 *
 *  Round 6 found two more things. An idea that lost (packing, tried twice,
 *  both children slower than their parents at the full protocol) was
 *  offered again: the run now keeps each idea's tries, and one whose
 *  every counted try lost beyond the timing noise is set aside - handed
 *  out only after every other idea - and the prompt says how each listed
 *  idea went ("tried: lost (20.10x vs parent 36.20x)"). And ideas went to
 *  parents that did them five times, because when every elite did the
 *  idea the selected parent was kept with it: such an idea is now passed
 *  over for the next one a kernel of the pool lacks. Which idea a
 *  candidate took is stored with it (candidates.selection.idea), so later
 *  prompts and the record name it right.
 *
 *  Round 10 found two siblings drawn to one parent (candidate 4) handed
 *  one idea: both slots' own ideas were done by every kernel, and both
 *  passed over to the same next one, each planned against its own parent
 *  alone. And a kernel was handed the very idea it was written to (the
 *  loop order, which no source feature shows). A kernel now has the idea
 *  it was built from as it has one its source shows, and one that a
 *  sibling of the generation, planned before, takes from it, while an
 *  idea is left that some kernel of the pool lacks and no sibling takes
 *  from it (the task's own initial kernel was built from none). Both
 *  come from the stored ideas, which the archive's cells and sources do
 *  not say: where they changed the plan, they are folded into the
 *  fingerprint by the elites' places (kf_search_idea_known_text), so
 *  equal fingerprints still mean equal plans.
 *
 *  Round 11 found the planner handing out what its own prompt predicted
 *  would lose: threads to softsign kernels below the break-even the
 *  thread-cost paragraph stated, four times. A kernel that starts no
 *  threads and takes less than that break-even a call now counts as
 *  having the threads idea (kf_prompt_threads_lose, the paragraph's own
 *  verdict), so the plan passes to a kernel that lacks it or to the next
 *  idea. And cache blocking went out four times before its tries were
 *  judged: tries in flight now count towards setting an idea aside
 *  (kf_search_idea_held), and one in flight from a kernel counts as a
 *  sibling's, so no two attempts in flight take one idea from one parent.
 *  What timings and in-flight tries changed is folded into the
 *  fingerprint as the known ideas are.
 */
#ifndef KF_SEARCH_IDEA_H
#define KF_SEARCH_IDEA_H

#include "kf_db.h"
#include "kf_prompt.h"
#include "kf_prompt_target.h"
#include "kf_search_idea_cache.h"
#include "kf_select.h"
#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Counted tries of an idea with no win among them that set it aside,
 * whatever the noise said of each. */
#define KF_SEARCH_IDEA_NO_WIN 2

/* Counted tries named in an idea's note at most (the newest). */
#define KF_SEARCH_IDEA_NOTED 3

/* The elite of ELITES (N, with their SOURCES, in LANGUAGE; only those on
 * ISLAND when it is 0 or more) to start IDEA from, given the selected
 * CHOSEN (with CHOSEN_SOURCE): -1 keeps CHOSEN - it lacks the idea, or
 * every elite does it already - else the index of the first elite whose
 * source lacks the idea (kf_prompt_source_does). */
int kf_search_idea_pick (const char *idea, const char *language, const kf_elite_t *elites,
                         const char *const *sources, size_t n, int island,
                         const kf_elite_t *chosen, const char *chosen_source);

/* A counted try of an idea against its parent, both timed in full, with
 * NOISE the relative spread of the two figures (kf_lineage_noise of each,
 * in quadrature): -1 lost beyond the noise (at least 3%, as
 * kf_lineage_reason), 1 won beyond it, 0 within it, 2 when the noise is
 * past KF_LINEAGE_UNTOLD (too spread to tell). */
int kf_search_idea_verdict (double speedup, double parent_speedup, double noise);

/* The record of IDEAS (N) from TRIES, the run's counted tries oldest
 * first as [{id, idea, added, features, parent_features, parent_id,
 * by_change, speedup, parent_speedup, noise, lean}]: a try counts for the idea
 * it was handed and (round 14) for every idea whose feature its code
 * ADDED to its parent's (kf_prompt_source_features' bits; its note then
 * names the candidate); round 24: where its features and its parent's
 * are known and BY_CHANGE is not false, for the idea handed only where
 * its code did it (kf_prompt_try_credit), the rest noted "handed, not
 * done: candidate 7 (no change of it in the code)", counted neither
 * way. ASIDE[i] is set when
 * idea i was tried and every try lost, or was tried KF_SEARCH_IDEA_NO_WIN
 * times or more and none won (tries too spread to tell count for
 * neither) and (round 39) none within the noise came out above its parent
 * by more than its LEAN (the run's median repeat gap, where the try
 * has one), or (round 22) it is the threads idea, KF_SEARCH_IDEA_NO_WIN
 * of its tries were timed beside other work that left them inconclusive,
 * and none won; returns {idea: note} for each idea tried, the note "tried:
 * lost (20.10x vs parent 36.20x), won (...)" over the newest
 * KF_SEARCH_IDEA_NOTED tries (caller's). */
json_t *kf_search_idea_record (const char *const *ideas, size_t n, json_t *tries, bool *aside);

/* Try T's verdict for IDEA as kf_search_idea_record judges it: 1 won, 0
 * within noise, -1 lost, 2 timings too spread, 3 timed beside other work
 * that could account for the gap, 4 (round 42) threads that hardly ran
 * side by side in the child's or the parent's full timing
 * (kf_search_idea_record.c). */
int kf_search_idea_try_verdict (json_t *t, const char *idea);

/* Round 11: cache blocking was handed out four times, and set aside only
 * after the fourth, because tries still in flight counted for nothing;
 * round 13 held an idea whose first try was unjudged only when that try
 * was of an earlier generation, and round 16 found it handed to a second
 * attempt all the same (cache blocking, threads, a 12 x 32 tile, each
 * while its first try was unjudged). HELD[i] is set for every idea not
 * ASIDE with PENDING[i] > 0 tries in flight: search candidates planned or
 * running and not judged yet, of any generation, siblings of the
 * generation planned before this attempt included (kf_search_idea_known_t).
 * The plan hands a held idea out only when no idea without a try in
 * flight is left for the slot, before the ideas set aside, and the prompt
 * says so. PENDING NULL: none held. */
void kf_search_idea_held (size_t n, const int *pending, const bool *aside, bool *held);

/* ORDER (N indices): the ideas from START on, cyclically, those not ASIDE
 * first; slot k of a generation that starts at START leans towards
 * ORDER[k mod N]. With nothing aside, ORDER[k] = (START + k) mod N. */
void kf_search_idea_order (size_t n, size_t start, const bool *aside, size_t *order);

/* The idea SLOT of a generation of POPULATION takes, given ORDER and
 * ASIDE (as above), and the kernel it starts from: ORDER[SLOT mod N] when
 * the selected CHOSEN lacks it (or it is no feature code shows), or when
 * another elite lacks it (*PICK is then that elite's index, else -1:
 * CHOSEN stays); when no elite of the pool (ELITES with FEATURES, bits of
 * kf_prompt_source_features; ISLAND as for kf_search_idea_pick) lacks
 * it, the next that one does lack, first among the ideas no sibling
 * leans towards, ideas set aside last. Returns the index into IDEAS. */
size_t kf_search_idea_fit (const char *const *ideas, size_t n, const size_t *order,
                           const bool *aside, int population, int slot,
                           const kf_elite_t *elites, const unsigned *features, size_t n_elites,
                           int island, const kf_elite_t *chosen, unsigned chosen_features,
                           int *pick);

/* What an earlier-planned sibling of the generation took: the kernel it
 * starts from (0: none) and the index of its idea; and (round 15) MADE,
 * the features of the kernel it is to write: its parent's
 * (candidates.selection.features) with its idea's, when MADE_KNOWN (a
 * sibling of the same generation whose parent's features are stored and
 * whose idea is a feature code shows). */
typedef struct {
    int64_t parent_id;
    size_t idea;
    unsigned made;
    bool made_known;
} kf_search_idea_sibling_t;

/* What the plan knows of the pool beyond its sources (round 10): the idea
 * each kernel was built from, and what the generation's siblings took
 * from which kernel. */
typedef struct {
    int *built;                          /* per elite of the pool: the index of
                                            the idea it was built from, or -1;
                                            NULL: none known */
    int chosen_built;                    /* the selected parent's, or -1 */
    kf_search_idea_sibling_t *siblings;  /* the generation's other search
                                            candidates planned so far, and
                                            (round 11) any other generation's
                                            not judged yet */
    size_t n_siblings;
    int *pending;                        /* per idea: search candidates
                                            handed it and not judged yet
                                            (the one planned excluded);
                                            NULL: none known */
    const bool *lost;                    /* per idea: set aside by its record
                                            (kf_search_idea_record; not
                                            owned); an idea held back but not
                                            lost comes before the siblings'
                                            places. NULL: all held are lost */
    bool *threads_lose;                  /* per elite of the pool: threads
                                            started per call are predicted to
                                            lose there (kf_prompt_threads_lose);
                                            NULL: none */
    bool chosen_threads_lose;            /* the same of the selected parent */
    bool *scalar;                        /* per elite of the pool (round 20):
                                            its math is not vectorised (no
                                            explicit SIMD, and its build's
                                            report vectorised no loop); NULL:
                                            none known */
    bool chosen_scalar;                  /* the same of the selected parent */
    bool *arith;                         /* per elite of the pool (round 21):
                                            bound by its arithmetic
                                            (kf_search_idea_arith_bound);
                                            NULL: none known */
    bool chosen_arith;                   /* the same of the selected parent */
    const bool *spent;                   /* per idea: kf_search_idea_spent (not
                                            owned); NULL: none */
    int64_t *up_ids;                     /* (round 36) kernels of the pool and
                                            the selected parent, each with */
    uint64_t *up_ideas;                  /* bits 1 << i of the ideas its
                                            ancestors were written to */
    size_t n_up;
    kf_search_idea_sibling_t *tried;     /* (round 36) judged correct search
                                            tries: the kernel each started
                                            from and its idea (MADE unused) */
    size_t n_tried;
} kf_search_idea_known_t;

/* Round 36: the register-tile idea went to candidate 8, whose parent was
 * written to it, the code reading seeing nothing of it. Whether KNOWN
 * says an ancestor of kernel ID was written to idea IDX (under 64). */
bool kf_search_idea_inherited (const kf_search_idea_known_t *known, int64_t id, size_t idx);

/* Round 15: streaming stores were handed out a third time after two
 * tries of it within the noise of their parents. SPENT[i] is set for an
 * idea with KF_SEARCH_IDEA_NO_WIN or more judged tries in TRIES (as for
 * kf_search_idea_record: counted by the idea handed or by the code) and
 * no win among them: the plan hands it out again only when no other idea
 * is left to hand out at all, not as one set aside is, after the others. */
void kf_search_idea_spent (const char *const *ideas, size_t n, json_t *tries, bool *spent);

/* The run RUN_ID's candidates with a stored idea, oldest first, as
 * kf_search_idea_known_read reads them; NULL on a database error. */
json_t *kf_search_idea_known_rows (kf_db_t *db, int64_t run_id);

/* KNOWN from ROWS, the run's candidates with a stored idea, as [{id,
 * generation, slot, parent_id, parent_features, phase, generator, idea,
 * with, pending, tried}]: the
 * idea each of ELITES (N) and CHOSEN was built from (none for the task's
 * own initial kernel, which no idea made), and the ideas the search
 * candidates of GENERATION other than SLOT took, with their parents, and
 * so those of other generations still pending (round 11: cache blocking
 * from candidate 6 twice in flight at once); per idea, how many search
 * candidates other than (GENERATION, SLOT) are pending; and (round 36)
 * each search try judged correct (TRIED) by its parent and idea: round 36
 * handed candidate 1 the cheaper-math idea a second time, right after a
 * try of it from candidate 1 came out within noise, and such a kernel
 * now has the idea as one a sibling takes from it has. Ideas not in
 * IDEAS (COUNT) are left out. Free with kf_search_idea_known_free. 0, or -1
 * when out of memory. */
int kf_search_idea_known_read (json_t *rows, const char *const *ideas, size_t count,
                               const kf_elite_t *elites, size_t n, const kf_elite_t *chosen,
                               int generation, int slot, kf_search_idea_known_t *known);

/* Frees KNOWN's arrays and empties it; again is harmless. */
void kf_search_idea_known_free (kf_search_idea_known_t *known);

/* As kf_search_idea_fit, with what KNOWN (or NULL: nothing) says: a
 * kernel has the idea it was built from, as it has one its source shows,
 * and one a sibling takes from it. When every kernel of the pool has
 * every idea, the slot's own is kept with CHOSEN unless a sibling takes
 * it from CHOSEN; then the first, in the same order, that no sibling
 * takes from it; only when siblings take every idea from it, the slot's
 * own. Round 15: two attempts of one generation wrote one kernel from two
 * parents (streaming stores on the threaded parent, threads on the
 * streaming one): an idea is not taken from a kernel whose features with
 * the idea's are a sibling's MADE; and a SPENT idea comes only when no
 * other is left. */
size_t kf_search_idea_fit_known (const char *const *ideas, size_t n, const size_t *order,
                                 const bool *aside, int population, int slot,
                                 const kf_elite_t *elites, const unsigned *features,
                                 size_t n_elites, int island, const kf_elite_t *chosen,
                                 unsigned chosen_features, const kf_search_idea_known_t *known,
                                 int *pick);

/* What of KNOWN a plan on ELITES (N) saw, by the elites' places in the
 * pool rather than by candidate ids ("|known:b2=0,s1=3,c=0"; caller's),
 * to fold into the archive's fingerprint; NULL when out of memory. */
char *kf_search_idea_known_text (const kf_search_idea_known_t *known, const kf_elite_t *elites,
                                 size_t n);

/* What the timings and the tries in flight changed (round 11), the ideas
 * spent (round 15) and the kernels whose math is scalar (round 20) or
 * bound by their arithmetic (round 21), by the ideas' (HELD, SPENT:
 * COUNT of them) and KNOWN's elites' (N) places, into F:
 * "|held:2|spent:1|slow:0,3,c|scalar:1,c|arith:0". */
void kf_search_idea_known_more (FILE *f, const bool *held, const bool *spent, size_t count,
                                const kf_search_idea_known_t *known, size_t n);

/* Round 16 (kf_search_idea_bound.c): a kernel whose bytes move at this
 * share of the memory rate or more (kf_search_idea_memory_share) is
 * taken to be at the memory bound. 0.90: round 16's parents at 93% and
 * 100% were each handed an idea that could change nothing measurable
 * there, and a kernel's figure moves by several percent between two
 * timings on the host. */
#define KF_SEARCH_IDEA_BOUND 0.90

/* A kernel whose cycles a vector are below its memory budget by this
 * factor or more (the budget over its cycles) beats the estimate: the
 * estimate is loose for it (a core overlaps reads and writes), and its
 * budget says nothing of whether memory binds it
 * (kf_search_idea_bound_share leaves the budget out). */
#define KF_SEARCH_IDEA_LOOSE 1.25

/* KERNEL's (a prompt kernel object: its latest evaluation's bandwidth
 * figures and its source) share of the memory rate it is bound by
 * (kf_prompt_memory_share): on the host, all cores' cold read rate of
 * HARDWARE's first device, its bytes counted N + 2M where its code stores
 * without streaming stores (round 17: N + 2M against the copy figure,
 * which counts N + M, read 90% where it was 67%); where no cold read
 * was measured, and on a GPU, the measured copy bandwidth, counting N +
 * M as the copy does. share 0 where a rate is unknown. */
kf_share_t kf_search_idea_memory_share (json_t *kernel, json_t *spec, json_t *hardware,
                                        kf_target_kind_t kind);

/* Round 48: KERNEL's bytes against what one core moves (its reads at one
 * core's cold read rate beside its writes at its streaming write rate),
 * counted as the bytes cross the bus: a one-thread kernel's bound. */
kf_share_t kf_search_idea_one_core_share (json_t *kernel, json_t *spec, json_t *hardware);

/* Whether IDEA cuts the bytes a call moves: streaming stores (no read of
 * a line before it is written), one fused pass per row (the row read
 * once), an epilogue fused into the product (the output written once). */
bool kf_search_idea_cuts_bytes (const char *idea);

/* Round 21: streaming stores went twice to kernels of signed log1p whose
 * prompt said "about 36 cycles ... a vector; the arithmetic budget ... is
 * about 21": stores that skip the read of their line save memory time,
 * and such a kernel's time is its arithmetic. A kernel whose cycles per
 * vector (kf_prompt_per_vector, with the stores its code uses) are
 * KF_SEARCH_IDEA_ARITH times the budget or more is bound by its
 * arithmetic: streaming stores are unfit for it as for a kernel that
 * does them (the plan moves the idea to a kernel of the pool near its
 * budget, or passes to the next idea). The margin leaves a kernel timed
 * beside other work, whose cycles the load inflates, its idea. */
#define KF_SEARCH_IDEA_ARITH 1.5

/* Whether KERNEL ("candidate_ns", "source") of SPEC on HARDWARE's host
 * is bound by its arithmetic as above; *CYCLES and *BUDGET get the two
 * figures (0 where not known). False off the host, for a task whose work
 * does not go by its output, or where either figure is not known. */
bool kf_search_idea_arith_bound (json_t *kernel, json_t *spec, json_t *hardware,
                                 kf_target_kind_t kind, double *cycles, double *budget);

/* Round 22: a one-thread kernel at its one core's cold read rate (about
 * 20 cycles a vector against a budget of 20) read 51% of all cores' rate
 * (kf_search_idea_memory_share), below KF_SEARCH_IDEA_BOUND, and was
 * handed "spend fewer instructions" alone. The share of the memory bound
 * KERNEL is at: the larger of *SHARE (kf_search_idea_memory_share's, set)
 * and its budget over its cycles for the cores it runs on (*CYCLES and
 * *BUDGET set as kf_search_idea_arith_bound sets them), for
 * kf_search_idea_pair. */
double kf_search_idea_bound_share (json_t *kernel, json_t *spec, json_t *hardware,
                                   kf_target_kind_t kind, kf_share_t *share, double *cycles,
                                   double *budget);

/* The share of the memory bound a kernel at CYCLES a vector is at by its
 * memory BUDGET: BUDGET / CYCLES, 0 where either is unknown or the
 * budget is loose for it (past KF_SEARCH_IDEA_LOOSE). The planner's
 * reading (kf_search_idea_bound_share) and the threads paragraph's
 * (round 37) are this one. */
double kf_search_idea_budget_share (double cycles, double budget);

/* Round 38: the same for task SPEC on HARDWARE, 0 also where its
 * formula's estimated arithmetic (kf_search_idea_arith_estimate) fills
 * KF_PROMPT_ARITH_FILLS of BUDGET or more: memory does not bind such a
 * kernel alone. The planner's reading and the threads paragraph's. */
double kf_search_idea_budget_share_of (json_t *spec, json_t *hardware, double cycles,
                                       double budget);

/* Round 38: one core's estimated cycles a vector of SPEC's elementwise
 * formula on HARDWARE's first device (kf_prompt_formula_arith), for a
 * kernel at CYCLES a vector; 0 where there is none, or where the kernel
 * comes in under KF_PROMPT_ARITH_FILLS of it (cheaper math than the
 * estimate assumes: its own cycles say what its arithmetic costs). A
 * kernel whose estimate is its memory budget or more is bound by its
 * arithmetic (kf_search_idea_arith_bound). */
double kf_search_idea_arith_estimate (json_t *spec, json_t *hardware, double cycles);

/* The plan's words on the memory bound into PROMPT (kf_search_idea_choose's
 * prompt object): "with" where WITH (an idea that cuts bytes, or NULL)
 * goes with the attempt's idea, by the parent's budget over its CYCLES
 * (AT, BUDGET) where that reading is the larger, else by SHARE; and
 * (round 40) "alone" where no such idea is free and SHARE is at or above
 * KF_SEARCH_IDEA_BOUND (the attempt's idea cuts no bytes). */
void kf_search_idea_with_note (json_t *prompt, const char *with, const kf_share_t *share,
                               double at, double cycles, double budget);

/* The idea to hand with IDEAS[IDX] (N) to a parent at SHARE of the copy
 * bandwidth: -1 below KF_SEARCH_IDEA_BOUND or when IDX cuts bytes
 * itself; else the first idea that cuts bytes and that the parent
 * neither does (PARENT_FEATURES, bits of kf_prompt_source_features) nor
 * was built from (PARENT_BUILT, or -1), not SPENT and not HELD (with a
 * try in flight: round 35 paired streaming stores with two attempts'
 * ideas while a third candidate tried them alone, so no try told the
 * ideas apart; either may be NULL); -1 when there is none (the idea then
 * goes alone: nothing in the list would cut this parent's bytes). */
int kf_search_idea_pair (const char *const *ideas, size_t n, size_t idx, double share,
                         unsigned parent_features, int parent_built, const bool *spent,
                         const bool *held);

/* Round 16: whether HANDED, the idea a planned candidate was handed (may
 * be NULL: none), is missing from IDEAS (N), the list of the prompt
 * version the run picks now: a meta round dropped it (or reworded it)
 * after the candidate was planned, and a prompt not yet sent is made
 * again (kf_search_replan). */
bool kf_search_idea_dropped (const char *handed, const char *const *ideas, size_t n);

/* What kf_search_idea_choose decided. */
typedef struct {
    const char *idea;           /* the idea handed to the attempt (static text, or
                                   borrowed from the SECTIONS planned with), or
                                   NULL: the task has none */
    const char *with;           /* the idea paired with it (kf_search_idea_pair),
                                   or NULL */
    const kf_elite_t *parent;   /* the kernel it starts from */
    json_t *prompt;             /* for kf_prompt_in_t.ideas: {mine, order: [idea,
                                   ...], notes: {idea: note}, aside: [idea, ...],
                                   threads: the run's threaded and single-thread
                                   kernels timed in full, as kf_prompt_thread_cost
                                   reads them, where the task has a threads idea,
                                   held: {idea: tries in flight} for the ideas
                                   kf_search_idea_held held back, with: {idea,
                                   share, bound} where kf_search_idea_pair
                                   paired one with the attempt's}
                                   (caller's), or NULL */
    char archive[17];           /* the archive's fingerprint, with the ideas set
                                   aside folded in when there are any, and the
                                   known ideas when they changed the plan */
} kf_search_idea_t;

/* The idea of (GENERATION, SLOT) of RUN (its spec, target, language;
 * the ideas of SECTIONS' version, kf_meta_ideas: NULL for the defaults;
 * POPULATION per generation) and its parent, from the pool ELITES (N;
 * ISLAND as above) and the selected CHOSEN, the run's tries read from DB;
 * FINGERPRINT is the archive's, copied into OUT->archive with the ideas
 * set aside folded in, and what the kernels were built from and the
 * generation's siblings took where that changed the plan, so two
 * candidates planned on equal fingerprints saw the same record. HARDWARE
 * is the run's target (kf_prompt_hardware, as the prompt gets it), whose
 * thread cost says where threads lose. POPULATION 0 (a tuning
 * candidate): no idea, CHOSEN stays. CACHE (may be NULL) keeps what the
 * plan parsed of the run's sources for its next plans. 0, or -1 on a
 * database error. */
int kf_search_idea_choose (kf_db_t *db, kf_search_idea_cache_t *cache, json_t *run,
                           json_t *sections, int population,
                           int generation, int slot,
                           const kf_elite_t *elites, size_t n, int island,
                           const kf_elite_t *chosen, const char *fingerprint,
                           json_t *hardware, kf_search_idea_t *out);
/* Round 17: the epilogue-fusion idea went to generation 0 of a linear
 * layer and layer norm whose Epilogue line put the layer norm at 1% of
 * the estimated one-core floor. Where SPEC's epilogue is estimated
 * (kf_prompt_epilogue_ms, at HARDWARE's first device) at less than this
 * share of that floor, fusing it can save no more: the idea that fuses
 * it is handed out only when no other idea is left, as a spent one is. */
#define KF_SEARCH_IDEA_SMALL 0.05

/* The index in IDEAS (COUNT) of the idea that fuses SPEC's epilogue
 * where that epilogue is below KF_SEARCH_IDEA_SMALL of the floor, with
 * its share in *SHARE; -1 (and *SHARE 0) otherwise. */
int kf_search_idea_small (const char *const *ideas, size_t count, json_t *spec,
                          json_t *hardware, double *share);

/* Round 25's notes: the threads idea was handed as a plain win on a host
 * whose start figures found two threads no faster than one. Where
 * HARDWARE's figure that bounds SPEC's task gains less than
 * KF_PROMPT_CORES_GAIN_MIN from all cores (kf_prompt_cores_no_gain),
 * each idea of IDEAS (COUNT) about threads is marked in SPENT, so it is
 * handed out only when no other idea is left (and then with the figures,
 * kf_prompt_thread_cost). The number marked. */
int kf_search_idea_idle_cores (const char *const *ideas, size_t count, json_t *spec,
                               json_t *hardware, bool *spent);

/* Round 17: attempt 1 of a generation named as its later siblings'
 * ideas those at their slots' places in the order, while the plan moves
 * the ideas in flight to the back before it fills a later slot. The
 * ideas the plan would hand each later slot of the generation (SLOT + 1
 * to POPULATION - 1) starting from CHOSEN, as kf_search_idea_choose
 * plans a slot: IDEAS (COUNT) in their order from START, ASIDE the ideas
 * set aside, KNOWN as read for this slot (not changed), with this slot's
 * IDX and paired WITH (-1: none) taken from its kernel (ELITES[PICK], or
 * CHOSEN where PICK < 0) in flight, and each later slot's idea in flight
 * once predicted; FEATURES, N, ISLAND and OWN as for
 * kf_search_idea_fit_known. [{slot, idea, moved: planned off CHOSEN}],
 * caller's; NULL when out of memory. */
json_t *kf_search_idea_later (const char *const *ideas, size_t count, size_t start,
                              const bool *aside, const kf_search_idea_known_t *known,
                              int population, int slot, size_t idx, int with, int pick,
                              const kf_elite_t *elites, const unsigned *features, size_t n,
                              int island, const kf_elite_t *chosen, unsigned own);

/* kf_search_idea_db.c: the features of candidate ID's source in DB, as
 * kf_prompt_source_features reads them in LANGUAGE (0 when it cannot be
 * read), kept in CACHE (may be NULL) for RUN_ID's next plans; and
 * (round 20) whether candidate ID, with those FEATURES, does its math in
 * scalar code: no explicit SIMD, and its build's vectoriser
 * report (the compile worker's summary line) vectorised no loop; a build
 * with no report (another compiler) is not known to be scalar. */
unsigned kf_search_idea_features (kf_db_t *db, kf_search_idea_cache_t *cache, int64_t run_id,
                                  int64_t id, const char *language);
bool kf_search_idea_scalar (kf_db_t *db, int64_t id, unsigned features);

/* The features of ELITES' kernels (N) of RUN_ID into FEATURES
 * (kf_search_idea_features), and KNOWN's scalar readings where it has
 * room (kf_search_idea_scalar): another island's kernels as having every
 * idea, CHOSEN's as OWN. */
void kf_search_idea_pool (kf_db_t *db, kf_search_idea_cache_t *cache, int64_t run_id,
                          const char *language, const kf_elite_t *elites, size_t n, int island,
                          const kf_elite_t *chosen, unsigned own, kf_search_idea_known_t *known,
                          unsigned *features);

/* kf_search_idea_db.c: RUN's counted tries, oldest first, as
 * kf_search_idea_record reads them: search children timed in full against
 * parents timed in full, each with the idea it was handed, what its code
 * added, its noise, whether it or its parent was timed beside other work
 * (loaded) and, since round 21, a threaded child's one_core_gain (its own
 * one-core time over its full time, in one evaluation) and own_noise. IN
 * gives the ideas of candidates planned before ideas were stored. NULL on
 * a database error. */
json_t *kf_search_idea_tries (kf_db_t *db, json_t *run, const kf_prompt_in_t *in);

/* Round 11: the threads prediction of the prompt's own paragraph, for the
 * plan: KNOWN's threads_lose of ELITES (N) and CHOSEN, from the exec host's
 * figures in HARDWARE and each kernel's latest time a call; and into
 * *SUMMARY, for the paragraph, the run's fastest single-thread and threaded
 * kernels timed in full and how many threaded ones there are (caller's).
 * Round 21: and KNOWN's arith, the kernels bound by their arithmetic
 * (kf_search_idea_arith_bound), from the same times. Each source's threads
 * are read once a run, kept in CACHE (may be NULL: none kept past this
 * call); only ELITES' and CHOSEN's sources are read each time. 0, or -1
 * on a database error.
 */
int kf_search_idea_timings (kf_db_t *db, kf_search_idea_cache_t *cache, json_t *run,
                            json_t *hardware, const char *language, const kf_elite_t *elites,
                            size_t n, const kf_elite_t *chosen, kf_search_idea_known_t *known,
                            json_t **summary);


#endif
