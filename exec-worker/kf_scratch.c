/*  kf_scratch.c - the host's scratch arena (kf_scratch.h): blocks carved
 *  in call order out of anonymous mappings that outlive the call.
 *
 *  Blocks are placed first fit from where the last one ended, never
 *  further back, and a block that fits nowhere gets a new mapping at the
 *  end. So a call that asks for the sizes of the call before finds every
 *  block where that call's was, and maps nothing: its pages are the ones
 *  the call before touched.
 */
#include "kf_scratch.h"

#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

//  A new mapping holds at least this much, so a kernel of many small
//  blocks takes one mapping rather than one each; the pages it never
//  touches cost no memory.
#define S_MIN_REGION ((size_t) 1 << 20)
//  A reset folds the mappings into one when there are more than this,
//  and a call adds at most one a block, so the table never fills.
#define S_KEEP_REGIONS KF_SCRATCH_MAX_BLOCKS
#define S_MAX_REGIONS (S_KEEP_REGIONS + KF_SCRATCH_MAX_BLOCKS)

typedef struct {
    char *base;
    size_t size;
} s_region_t;

struct kf_scratch {
    size_t limit;                       /* bytes a call may take */
    s_region_t region[S_MAX_REGIONS];   /* in the order blocks fill them */
    int n_regions;
    size_t mapped;                      /* their sizes' sum */
    int at;                             /* the region the next block tries */
    size_t used;                        /* bytes taken of region[at] */
    int blocks;                         /* this call's blocks */
    size_t need;                        /* and bytes, each 64-byte rounded */
    size_t peak;                        /* the most bytes a call has taken */
};

static size_t
s_round (size_t bytes, size_t to)
{
    return (bytes + to - 1) / to * to;
}

//  A new mapping at the end of the table that holds SIZE bytes: 0, or
//  -1 when the system refuses it.
static int
s_region_add (kf_scratch_t *self, size_t size)
{
    if (self->n_regions == S_MAX_REGIONS)
        return -1;
    size_t len = s_round (size > S_MIN_REGION ? size : S_MIN_REGION,
                          (size_t) sysconf (_SC_PAGESIZE));
    void *m = mmap (NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED)
        return -1;
    self->region[self->n_regions].base = m;
    self->region[self->n_regions].size = len;
    self->n_regions++;
    self->mapped += len;
    return 0;
}

static void
s_unmap_all (kf_scratch_t *self)
{
    for (int r = 0; r < self->n_regions; r++)
        munmap (self->region[r].base, self->region[r].size);
    self->n_regions = 0;
    self->mapped = 0;
}

kf_scratch_t *
kf_scratch_new (size_t limit)
{
    kf_scratch_t *self = calloc (1, sizeof *self);
    if (self)
        self->limit = limit && limit < KF_SCRATCH_MAX_BYTES ? limit : KF_SCRATCH_MAX_BYTES;
    return self;
}

void
kf_scratch_destroy (kf_scratch_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    s_unmap_all (*self_p);
    free (*self_p);
    *self_p = NULL;
}

void *
kf_scratch_alloc (void *state, size_t bytes)
{
    kf_scratch_t *self = state;
    //  The limit is checked before rounding, so no size can wrap.
    if (!self || self->blocks >= KF_SCRATCH_MAX_BLOCKS || bytes > self->limit - self->need)
        return NULL;
    size_t size = s_round (bytes ? bytes : 1, KF_SCRATCH_ALIGN);
    if (size > self->limit - self->need)
        return NULL;
    while (self->at < self->n_regions && self->region[self->at].size - self->used < size) {
        self->at++;
        self->used = 0;
    }
    if (self->at == self->n_regions && s_region_add (self, size) != 0)
        return NULL;
    char *p = self->region[self->at].base + self->used;
    self->used += size;
    self->blocks++;
    self->need += size;
    return p;
}

void
kf_scratch_reset (kf_scratch_t *self)
{
    if (!self)
        return;
    if (self->need > self->peak)
        self->peak = self->need;
    self->at = 0;
    self->used = 0;
    self->blocks = 0;
    self->need = 0;
    //  A mapping is as large as the block it was made for and less than
    //  S_MIN_REGION besides, so two patterns of sizes taking turns never
    //  map more than twice the peak and that much a mapping. Sizes that changed from
    //  call to call can leave more, or many mappings: then one mapping as
    //  large as the most a call took instead. Its pages are fresh, so this
    //  costs the next call its faults once more; a kernel that asks for
    //  the same sizes every call never gets here.
    if (self->n_regions > S_KEEP_REGIONS
        || self->mapped > 2 * self->peak + (size_t) self->n_regions * S_MIN_REGION) {
        s_unmap_all (self);
        (void) s_region_add (self, self->peak);
    }
}

size_t
kf_scratch_mapped (const kf_scratch_t *self)
{
    return self ? self->mapped : 0;
}

int
kf_scratch_regions (const kf_scratch_t *self)
{
    return self ? self->n_regions : 0;
}
