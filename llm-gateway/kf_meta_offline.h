/*  kf_meta_offline.h - the built-in meta-prompter (not a language model).
 *
 *  A meta job's payload carries the evolvable prompt sections and the
 *  recent outcomes with their figures (coordinator/kf_meta.c). This
 *  deterministic editor reads those and answers as a model would: a short
 *  diagnosis, then SEARCH/REPLACE edits that add or refresh one line per
 *  observed problem (the most common failure first), so runs without a
 *  model still exercise the whole meta-prompt loop. See docs/prompts.md.
 */
#ifndef KF_META_OFFLINE_H
#define KF_META_OFFLINE_H

#include "kf_backend.h"
#include <jansson.h>

/* The completion for meta job PAYLOAD (caller frees), or NULL with *ERR
 * (caller frees) when the payload has no sections. */
char *kf_meta_offline_reply (json_t *payload, char **err);

/* The built-in meta-prompter as a backend: its reply is text, like a
 * model's, and answers before start returns. */
kf_backend_t *kf_backend_meta_offline_new (void);

#endif
