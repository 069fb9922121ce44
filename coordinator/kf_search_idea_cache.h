/*  kf_search_idea_cache.h - what the plan read of each source, kept for
 *  the run's next plans.
 *
 *  Every plan of a run with a threads or streaming-stores idea asked for
 *  every correct kernel's threads (kf_search_idea_timings), and every plan
 *  whose selected kernel had its slot's idea asked for the pool's features
 *  (kf_search_idea_features): each time the sources were read from the
 *  database and parsed again, work that grew with the run. A source is a
 *  content-addressed blob that never changes, so what its parse found is
 *  kept here by the source's hash, per run (the run's language reads it),
 *  and a plan reads and parses only the sources it has not seen. Keyed by
 *  content, an entry stays right whatever transaction it was read in
 *  (one rolled back included). A run's entries go when it ends; at most
 *  KF_SEARCH_IDEA_CACHE_RUNS runs are held, the one planned longest ago
 *  dropped first (a run that ended without kf_search_finish_run).
 */
#ifndef KF_SEARCH_IDEA_CACHE_H
#define KF_SEARCH_IDEA_CACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define KF_SEARCH_IDEA_CACHE_RUNS 16

typedef struct kf_search_idea_cache_t kf_search_idea_cache_t;

/* The two readings of a source: its text as SQL's encode(data, 'escape')
 * gives it (kf_search_idea_timings), and its bytes as they are
 * (kf_prompt_source_of; kf_search_idea_features). They differ where the
 * source has a backslash or a byte past ASCII, so each is kept apart. */
typedef enum { KF_SEARCH_IDEA_ESCAPED, KF_SEARCH_IDEA_BYTES } kf_search_idea_view_t;

/* NULL when out of memory. */
kf_search_idea_cache_t *kf_search_idea_cache_new (void);
void kf_search_idea_cache_destroy (kf_search_idea_cache_t **self_p);

/* The features (kf_prompt_source_features' bits) of the source whose
 * hash is HASH, in VIEW, as RUN_ID's language read them, into *FEATURES:
 * true when known. SELF may be NULL (nothing known). */
bool kf_search_idea_cache_get (kf_search_idea_cache_t *self, int64_t run_id, const char *hash,
                               kf_search_idea_view_t view, unsigned *features);

/* Keeps FEATURES for HASH in VIEW of RUN_ID. 0, or -1 when out of memory
 * (or SELF is NULL). */
int kf_search_idea_cache_put (kf_search_idea_cache_t *self, int64_t run_id, const char *hash,
                              kf_search_idea_view_t view, unsigned features);

/* RUN_ID ended: its entries go. */
void kf_search_idea_cache_drop (kf_search_idea_cache_t *self, int64_t run_id);

/* How many sources RUN_ID holds, and how many parses every run was
 * spared (lookups answered) and made (entries put) since SELF was made,
 * for the debug log and the tests. */
size_t kf_search_idea_cache_size (kf_search_idea_cache_t *self, int64_t run_id);
void kf_search_idea_cache_counts (kf_search_idea_cache_t *self, long *hits, long *puts);

#endif
