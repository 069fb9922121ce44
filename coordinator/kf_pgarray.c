/*  kf_pgarray.c - text[] literals with every element quoted (kf_pgarray.h).
 */
#include "kf_pgarray.h"
#include "kf_take.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct kf_pgarray_t {
    char *text;              /* "{" elements, then "}" appended on read */
    size_t len, cap, n;
};

kf_pgarray_t *
kf_pgarray_new (void)
{
    kf_pgarray_t *self = calloc (1, sizeof *self);
    if (!self)
        return NULL;
    self->cap = 64;
    self->text = malloc (self->cap);
    if (!self->text) {
        free (self);
        return NULL;
    }
    strcpy (self->text, "{");
    self->len = 1;
    return self;
}

void
kf_pgarray_destroy (kf_pgarray_t **self_p)
{
    kf_pgarray_t *self = KF_TAKE (self_p);
    if (self) {
        free (self->text);
        free (self);
    }
}

static int
s_put (kf_pgarray_t *self, char c)
{
    if (self->len + 3 > self->cap) {     /* room for c, "}" and NUL */
        size_t cap = self->cap * 2;
        char *grown = realloc (self->text, cap);
        if (!grown)
            return -1;
        self->text = grown;
        self->cap = cap;
    }
    self->text[self->len++] = c;
    self->text[self->len] = 0;
    return 0;
}

int
kf_pgarray_add (kf_pgarray_t *self, const char *item)
{
    if (!item)
        return -1;
    size_t mark = self->len;
    int rc = self->n ? s_put (self, ',') : 0;
    rc |= s_put (self, '"');
    for (const char *p = item; *p && rc == 0; p++) {
        if (*p == '"' || *p == '\\')
            rc |= s_put (self, '\\');
        rc |= s_put (self, *p);
    }
    rc |= s_put (self, '"');
    if (rc) {
        self->len = mark;          /* all or nothing */
        self->text[mark] = 0;
        return -1;
    }
    self->n++;
    return 0;
}

size_t
kf_pgarray_size (const kf_pgarray_t *self)
{
    return self->n;
}

const char *
kf_pgarray_text (kf_pgarray_t *self)
{
    //  s_put always leaves room for the closing brace.
    self->text[self->len] = '}';
    self->text[self->len + 1] = 0;
    return self->text;
}

int
kf_pgarray_test (bool verbose)
{
    int failures = 0;
    struct {
        const char *items[4];
        const char *want;
    } cases[] = {
        { { NULL }, "{}" },
        { { "host", NULL }, "{\"host\"}" },
        { { "host", "cuda", NULL }, "{\"host\",\"cuda\"}" },
        { { "a\"b", "c\\d", "", NULL }, "{\"a\\\"b\",\"c\\\\d\",\"\"}" },
        { { "{,}", "NULL", NULL }, "{\"{,}\",\"NULL\"}" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        kf_pgarray_t *a = kf_pgarray_new ();
        for (int k = 0; cases[i].items[k]; k++)
            kf_pgarray_add (a, cases[i].items[k]);
        const char *got = kf_pgarray_text (a);
        bool ok = !strcmp (got, cases[i].want);
        //  Reading the text does not end the array: adding goes on.
        kf_pgarray_add (a, "x");
        ok = ok && kf_pgarray_text (a)[strlen (kf_pgarray_text (a)) - 1] == '}';
        if (!ok) {
            fprintf (stderr, "kf_pgarray_test: FAILED case %zu: %s, want %s\n", i, got,
                     cases[i].want);
            failures++;
        }
        else if (verbose)
            fprintf (stderr, "kf_pgarray_test: ok: %s\n", cases[i].want);
        kf_pgarray_destroy (&a);
    }
    //  Long enough to grow several times.
    kf_pgarray_t *a = kf_pgarray_new ();
    for (int k = 0; k < 1000; k++)
        kf_pgarray_add (a, "worker-id-\"quoted\"");
    if (kf_pgarray_size (a) != 1000 || strlen (kf_pgarray_text (a)) != 2 + 1000 * 22 + 999) {
        fprintf (stderr, "kf_pgarray_test: FAILED: growth (%zu)\n", strlen (kf_pgarray_text (a)));
        failures++;
    }
    kf_pgarray_destroy (&a);
    return failures ? -1 : 0;
}
