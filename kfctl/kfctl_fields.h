/*  kfctl_fields.h - reading the fields of the coordinator's reply objects
 *  (run, candidate, worker, status snapshot) for kfctl's printing.
 *
 *  Every field is read defensively: the reply objects come over the wire
 *  and a coordinator of another version may leave a field out or give it
 *  another type. A missing value prints as "-", never crashes.
 */
#ifndef KFCTL_FIELDS_H
#define KFCTL_FIELDS_H

#include <jansson.h>
#include <stdbool.h>

/* OBJ[KEY] as text (borrowed), or "-" when absent, empty or no string. */
const char *kf_ctl_str (json_t *obj, const char *key);

/* OBJ[KEY] as an integer (a real one cut), or DFLT when it is no number. */
long long kf_ctl_int (json_t *obj, const char *key, long long dflt);

/* OBJ[KEY] as a number into *OUT: a number, or text from a NUMERIC column
 * of another coordinator version. False when it is neither. */
bool kf_ctl_real (json_t *obj, const char *key, double *out);

/* The candidate with id ID in CANDIDATES (an array of them), or NULL. */
json_t *kf_ctl_candidate (json_t *candidates, long long id);

/* Whether candidate C's figures are a screen's (kf_fidelity.c). */
bool kf_ctl_screen_only (json_t *c);

/* Whether candidate C counts towards its run's best and first correct. */
bool kf_ctl_counts (json_t *c);

#endif
