/*  kf_inbox.c - a byte-bounded queue of RESULT messages (kf_inbox.h).
 */
#include "kf_inbox.h"
#include "kf_take.h"

typedef struct {
    kf_msg_t *msg;
    size_t bytes;
} s_item_t;

struct kf_inbox_t {
    zlistx_t *items;         /* s_item_t, oldest first (owned) */
    size_t bytes, max_bytes;
};

static void
s_item_free (void **item_p)
{
    s_item_t *item = *item_p;
    if (item) {
        kf_msg_destroy (&item->msg);
        free (item);
    }
    *item_p = NULL;
}

kf_inbox_t *
kf_inbox_new (size_t max_bytes)
{
    kf_inbox_t *self = calloc (1, sizeof *self);
    if (!self)
        return NULL;
    self->items = zlistx_new ();
    zlistx_set_destructor (self->items, s_item_free);
    self->max_bytes = max_bytes;
    return self;
}

void
kf_inbox_destroy (kf_inbox_t **self_p)
{
    kf_inbox_t *self = KF_TAKE (self_p);
    if (self) {
        zlistx_destroy (&self->items);
        free (self);
    }
}

size_t
kf_inbox_msg_bytes (const kf_msg_t *msg)
{
    //  json_dumpb without a buffer measures without allocating.
    size_t body = json_dumpb (msg->body, NULL, 0, JSON_COMPACT);
    return body + zmsg_content_size (msg->frames) + sizeof *msg;
}

void
kf_inbox_add (kf_inbox_t *self, kf_msg_t **msg_p)
{
    s_item_t *item = calloc (1, sizeof *item);
    if (!item) {
        kf_msg_destroy (msg_p);
        return;
    }
    item->msg = *msg_p;
    item->bytes = kf_inbox_msg_bytes (item->msg);
    *msg_p = NULL;
    self->bytes += item->bytes;
    zlistx_add_end (self->items, item);
}

void
kf_inbox_prepend (kf_inbox_t *self, kf_inbox_t *from)
{
    s_item_t *item;
    while ((item = zlistx_last (from->items))) {
        zlistx_detach_cur (from->items);
        from->bytes -= item->bytes;
        self->bytes += item->bytes;
        zlistx_add_start (self->items, item);
    }
}

void
kf_inbox_append (kf_inbox_t *self, kf_inbox_t *from)
{
    s_item_t *item;
    while ((item = zlistx_detach (from->items, NULL))) {
        from->bytes -= item->bytes;
        self->bytes += item->bytes;
        zlistx_add_end (self->items, item);
    }
}

kf_msg_t *
kf_inbox_first (kf_inbox_t *self)
{
    s_item_t *item = zlistx_first (self->items);
    return item ? item->msg : NULL;
}

kf_msg_t *
kf_inbox_next (kf_inbox_t *self)
{
    s_item_t *item = zlistx_next (self->items);
    return item ? item->msg : NULL;
}

size_t
kf_inbox_size (const kf_inbox_t *self)
{
    return zlistx_size (self->items);
}

size_t
kf_inbox_bytes (const kf_inbox_t *self)
{
    return self->bytes;
}

size_t
kf_inbox_trim (kf_inbox_t *self)
{
    size_t dropped = 0;
    s_item_t *item;
    while (self->bytes > self->max_bytes && (item = zlistx_detach (self->items, NULL))) {
        self->bytes -= item->bytes;
        s_item_free ((void **) &item);
        dropped++;
    }
    return dropped;
}

void
kf_inbox_clear (kf_inbox_t *self)
{
    zlistx_purge (self->items);
    self->bytes = 0;
}

int
kf_inbox_test (bool verbose)
{
    int failures = 0;
    kf_inbox_t *a = kf_inbox_new (3000), *b = kf_inbox_new (3000);
    char big[1000];
    memset (big, 'x', sizeof big);
    for (int i = 0; i < 5; i++) {
        kf_msg_t *m = kf_msg_new ("RESULT", json_pack ("{s:i}", "job_id", i + 1));
        kf_msg_add_frame (m, big, sizeof big);
        kf_inbox_add (i < 3 ? a : b, &m);
        if (m)
            failures++;
    }
    if (kf_inbox_size (a) != 3 || kf_inbox_bytes (a) < 3000)
        failures++;
    kf_inbox_prepend (b, a);           /* b: 1 2 3 4 5 */
    int want = 1;
    for (kf_msg_t *m = kf_inbox_first (b); m; m = kf_inbox_next (b))
        if (kf_msg_int (m, "job_id", 0) != want++)
            failures++;
    if (kf_inbox_size (a) != 0 || kf_inbox_bytes (a) != 0)
        failures++;
    size_t dropped = kf_inbox_trim (b);  /* about 1 KiB each: 2 stay */
    if (dropped != 3 || kf_inbox_size (b) != 2 || kf_inbox_bytes (b) > 3000
        || kf_msg_int (kf_inbox_first (b), "job_id", 0) != 4)
        failures++;
    kf_inbox_append (a, b);
    kf_inbox_clear (a);
    if (kf_inbox_size (a) || kf_inbox_bytes (a))
        failures++;
    kf_inbox_destroy (&a);
    kf_inbox_destroy (&b);
    if (verbose || failures)
        fprintf (stderr, "kf_inbox_test: %d failure(s)\n", failures);
    return failures ? -1 : 0;
}
