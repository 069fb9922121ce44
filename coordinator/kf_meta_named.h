/*  kf_meta_named.h - the candidates a meta-prompter's sentence names.
 */
#ifndef KF_META_NAMED_H
#define KF_META_NAMED_H

#include <jansson.h>
#include <stdbool.h>

/* The distinct candidates that TEXT names and WANT (OUTCOMES, id)
 * accepts: numbers after "candidate"/"candidates", a list of them ("12,
 * 14 and 17", "12/14", figures in brackets or after a comma between
 * them: "candidates 4, 2.08 ms, and 6"), or numbers after '#'. *FIRST
 * (may be NULL) gets the first of them. At most 32 are counted. */
int kf_meta_named (const char *text, json_t *outcomes, bool (*want) (json_t *, long long),
                   long long *first);

#endif
