/*  kf_search_idea_cache.c - what the plan read of each source, by the
 *  source's hash, per run (kf_search_idea_cache.h). A few runs at once at
 *  most, so the runs are a small array; each run's sources a hash table.
 */
#include "kf_search_idea_cache.h"
#include "kf_take.h"

#include <czmq.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    unsigned features[2];      /* by kf_search_idea_view_t */
    unsigned char known;       /* bit per view */
} s_entry_t;

typedef struct {
    int64_t run_id;            /* 0: the slot is free */
    zhashx_t *by_hash;         /* hash -> s_entry_t */
    uint64_t used;             /* when last read or written (SELF's tick) */
} s_run_t;

struct kf_search_idea_cache_t {
    s_run_t runs[KF_SEARCH_IDEA_CACHE_RUNS];
    uint64_t tick;
    long hits, puts;
};

kf_search_idea_cache_t *
kf_search_idea_cache_new (void)
{
    return calloc (1, sizeof (kf_search_idea_cache_t));
}

static void
s_run_clear (s_run_t *run)
{
    zhashx_destroy (&run->by_hash);
    memset (run, 0, sizeof *run);
}

void
kf_search_idea_cache_destroy (kf_search_idea_cache_t **self_p)
{
    kf_search_idea_cache_t *self = KF_TAKE (self_p);
    if (!self)
        return;
    for (size_t i = 0; i < KF_SEARCH_IDEA_CACHE_RUNS; i++)
        s_run_clear (&self->runs[i]);
    free (self);
}

static void
s_entry_free (void **item)
{
    free (*item);
    *item = NULL;
}

//  RUN_ID's slot; when MAKE, one made for it where none is (the run
//  used longest ago gives its slot up when all are taken). NULL: none.
static s_run_t *
s_run (kf_search_idea_cache_t *self, int64_t run_id, bool make)
{
    if (!self || run_id <= 0)
        return NULL;
    s_run_t *spare = NULL;
    for (size_t i = 0; i < KF_SEARCH_IDEA_CACHE_RUNS; i++) {
        s_run_t *r = &self->runs[i];
        if (r->run_id == run_id) {
            r->used = ++self->tick;
            return r;
        }
        if (!spare || !r->run_id || (spare->run_id && r->used < spare->used))
            spare = r;
    }
    if (!make)
        return NULL;
    s_run_clear (spare);
    spare->by_hash = zhashx_new ();
    if (!spare->by_hash)
        return NULL;
    zhashx_set_destructor (spare->by_hash, s_entry_free);
    spare->run_id = run_id;
    spare->used = ++self->tick;
    return spare;
}

bool
kf_search_idea_cache_get (kf_search_idea_cache_t *self, int64_t run_id, const char *hash,
                          kf_search_idea_view_t view, unsigned *features)
{
    s_run_t *r = hash && *hash ? s_run (self, run_id, false) : NULL;
    s_entry_t *e = r ? zhashx_lookup (r->by_hash, hash) : NULL;
    if (!e || !((e->known >> view) & 1u))
        return false;
    *features = e->features[view];
    self->hits++;
    return true;
}

int
kf_search_idea_cache_put (kf_search_idea_cache_t *self, int64_t run_id, const char *hash,
                          kf_search_idea_view_t view, unsigned features)
{
    s_run_t *r = hash && *hash ? s_run (self, run_id, true) : NULL;
    if (!r)
        return -1;
    s_entry_t *e = zhashx_lookup (r->by_hash, hash);
    if (!e) {
        e = calloc (1, sizeof *e);
        if (!e || zhashx_insert (r->by_hash, hash, e) != 0) {
            free (e);
            return -1;
        }
    }
    e->features[view] = features;
    e->known |= (unsigned char) (1u << view);
    self->puts++;
    return 0;
}

void
kf_search_idea_cache_drop (kf_search_idea_cache_t *self, int64_t run_id)
{
    s_run_t *r = s_run (self, run_id, false);
    if (r)
        s_run_clear (r);
}

size_t
kf_search_idea_cache_size (kf_search_idea_cache_t *self, int64_t run_id)
{
    s_run_t *r = s_run (self, run_id, false);
    return r ? zhashx_size (r->by_hash) : 0;
}

void
kf_search_idea_cache_counts (kf_search_idea_cache_t *self, long *hits, long *puts)
{
    *hits = self ? self->hits : 0;
    *puts = self ? self->puts : 0;
}
