/*  kf_lease.c - lease tokens and the per-worker lease book (kf_lease.h).
 *
 *  A book is small (a worker's credits, a few hundred at most), so a
 *  hash keyed by the job id's decimal text is plenty.
 */
#include "kf_lease.h"
#include "kf_take.h"
#include <czmq.h>
#include <inttypes.h>
#include <string.h>
#include <sys/random.h>

typedef struct {
    int64_t lease;
    char token[KF_LEASE_TOKEN_LEN + 1];
    char kind[KF_LEASE_KIND_MAX + 1];
} s_record_t;

struct kf_lease_book_t {
    zhashx_t *records;       /* job id text -> s_record_t (owned) */
};

static void
s_record_free (void **item)
{
    free (*item);
    *item = NULL;
}

kf_lease_book_t *
kf_lease_book_new (void)
{
    kf_lease_book_t *self = calloc (1, sizeof *self);
    if (!self)
        return NULL;
    self->records = zhashx_new ();
    if (!self->records) {
        free (self);
        return NULL;
    }
    zhashx_set_destructor (self->records, s_record_free);
    return self;
}

void
kf_lease_book_destroy (kf_lease_book_t **self_p)
{
    kf_lease_book_t *self = KF_TAKE (self_p);
    if (self) {
        zhashx_destroy (&self->records);
        free (self);
    }
}

int
kf_lease_token (char *out)
{
    unsigned char raw[KF_LEASE_TOKEN_LEN / 2];
    size_t got = 0;
    while (got < sizeof raw) {
        ssize_t n = getrandom (raw + got, sizeof raw - got, 0);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return -1;
        got += (size_t) n;
    }
    static const char hex[] = "0123456789abcdef";
    for (size_t i = 0; i < sizeof raw; i++) {
        out[2 * i] = hex[raw[i] >> 4];
        out[2 * i + 1] = hex[raw[i] & 15];
    }
    out[KF_LEASE_TOKEN_LEN] = 0;
    return 0;
}

static void
s_key (int64_t job_id, char *key, size_t size)
{
    snprintf (key, size, "%" PRId64, job_id);
}

int
kf_lease_book_add (kf_lease_book_t *self, int64_t job_id, int64_t lease, const char *token,
                   const char *kind)
{
    if (!token || strlen (token) != KF_LEASE_TOKEN_LEN)
        return -1;
    s_record_t *r = calloc (1, sizeof *r);
    if (!r)
        return -1;
    r->lease = lease;
    memcpy (r->token, token, KF_LEASE_TOKEN_LEN + 1);
    snprintf (r->kind, sizeof r->kind, "%s", kind ? kind : "");
    char key[24];
    s_key (job_id, key, sizeof key);
    zhashx_update (self->records, key, r);
    return 0;
}

bool
kf_lease_book_holds (kf_lease_book_t *self, int64_t job_id, int64_t lease, const char *token)
{
    char key[24];
    s_key (job_id, key, sizeof key);
    s_record_t *r = zhashx_lookup (self->records, key);
    if (!r || !token || r->lease != lease || strlen (token) != KF_LEASE_TOKEN_LEN)
        return false;
    //  Constant time: how far a guess matched is not told by the clock.
    unsigned diff = 0;
    for (size_t i = 0; i < KF_LEASE_TOKEN_LEN; i++)
        diff |= (unsigned) (r->token[i] ^ token[i]);
    return diff == 0;
}

bool
kf_lease_book_has (kf_lease_book_t *self, int64_t job_id)
{
    char key[24];
    s_key (job_id, key, sizeof key);
    return zhashx_lookup (self->records, key) != NULL;
}

const char *
kf_lease_book_kind (kf_lease_book_t *self, int64_t job_id)
{
    char key[24];
    s_key (job_id, key, sizeof key);
    s_record_t *r = zhashx_lookup (self->records, key);
    return r ? r->kind : "";
}

void
kf_lease_book_remove (kf_lease_book_t *self, int64_t job_id)
{
    char key[24];
    s_key (job_id, key, sizeof key);
    zhashx_delete (self->records, key);
}

size_t
kf_lease_book_size (kf_lease_book_t *self)
{
    return zhashx_size (self->records);
}

size_t
kf_lease_book_jobs (kf_lease_book_t *self, int64_t *ids, size_t max)
{
    size_t n = 0;
    for (void *r = zhashx_first (self->records); r; r = zhashx_next (self->records)) {
        if (n < max)
            ids[n] = strtoll (zhashx_cursor (self->records), NULL, 10);
        n++;
    }
    return n;
}

/* The allowance grows by one job per job finished: an honest worker with
 * many credits reaches them after as many results (a gateway with 64, in
 * its first minute), while one that swallows jobs stays at the start. */
int
kf_lease_allowance (int claimed, long finished)
{
    long cap = KF_LEASE_CREDIT_START + (finished > 0 ? finished : 0);
    return claimed < cap ? claimed : (int) cap;
}

int
kf_lease_test (bool verbose)
{
    int failures = 0;
#define S_CHECK(c)                                                     \
    do {                                                               \
        if (!(c)) {                                                    \
            fprintf (stderr, "kf_lease_test: FAILED: %s\n", #c);       \
            failures++;                                                \
        }                                                              \
        else if (verbose)                                              \
            fprintf (stderr, "kf_lease_test: ok: %s\n", #c);           \
    } while (0)
    char a[KF_LEASE_TOKEN_LEN + 1], b[KF_LEASE_TOKEN_LEN + 1];
    S_CHECK (kf_lease_token (a) == 0 && kf_lease_token (b) == 0);
    S_CHECK (strlen (a) == KF_LEASE_TOKEN_LEN && strspn (a, "0123456789abcdef") == strlen (a));
    S_CHECK (strcmp (a, b) != 0);
    kf_lease_book_t *book = kf_lease_book_new ();
    S_CHECK (kf_lease_book_add (book, 7, 3, a, "evaluate") == 0);
    S_CHECK (kf_lease_book_add (book, 8, 1, "short", NULL) == -1);
    S_CHECK (!strcmp (kf_lease_book_kind (book, 7), "evaluate"));
    S_CHECK (!strcmp (kf_lease_book_kind (book, 9), ""));
    S_CHECK (kf_lease_book_holds (book, 7, 3, a));
    S_CHECK (!kf_lease_book_holds (book, 7, 3, b));
    S_CHECK (!kf_lease_book_holds (book, 7, 2, a));
    S_CHECK (!kf_lease_book_holds (book, 7, 3, NULL));
    S_CHECK (!kf_lease_book_holds (book, 9, 3, a));
    S_CHECK (kf_lease_book_has (book, 7) && !kf_lease_book_has (book, 9));
    int64_t ids[4];
    S_CHECK (kf_lease_book_jobs (book, ids, 4) == 1 && ids[0] == 7);
    kf_lease_book_remove (book, 7);
    S_CHECK (kf_lease_book_size (book) == 0 && !kf_lease_book_holds (book, 7, 3, a));
    kf_lease_book_destroy (&book);
    S_CHECK (book == NULL);
    S_CHECK (kf_lease_allowance (4096, 0) == KF_LEASE_CREDIT_START);
    S_CHECK (kf_lease_allowance (2, 0) == 2);
    S_CHECK (kf_lease_allowance (64, 100) == 64);
    S_CHECK (kf_lease_allowance (64, 10) == KF_LEASE_CREDIT_START + 10);
#undef S_CHECK
    return failures ? -1 : 0;
}
