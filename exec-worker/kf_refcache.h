/*  kf_refcache.h - the exec host's own store of PyTorch reference data.
 *
 *  A PyTorch run's reference data (every input set, parameter, buffer and
 *  output, gigabytes at real sizes) stays on the exec host that made it:
 *  the reference job writes it here, keyed by content, and answers with
 *  the manifest, the key, the size and an XXH3-128 hash; an evaluate job
 *  names the key and the hash, and the worker links the entry into the
 *  evaluation's folder (or makes it again when it lacks it). Nothing of
 *  tensor size crosses the coordinator, the database or a message.
 *  docs/pytorch-references.md, "Reference data on the exec host".
 *
 *  A folder of entries: d-KEY.bin (the data, mode 0444) and d-KEY.json
 *  (what it is: bytes, hash, inputs_hash, tensors, how it was made), and
 *  r-KEY.json (a reference job's whole result, for a job asked again).
 *  Each file is written under a temporary name and renamed, the .json
 *  last, so a crash never leaves a half entry; the least recently used
 *  entries go first past the cap. Thread-safe.
 */
#ifndef KF_REFCACHE_H
#define KF_REFCACHE_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

typedef struct _kf_refcache_t kf_refcache_t;

/* kf_refcache_put_data's answer when the data cannot be kept: larger
 * than the cap, or no room on the disk. The same on every try. */
#define KF_REFCACHE_TOO_BIG 2

/* A store in DIR (made 0700 when missing) of at most MAX_BYTES (0: 4 GiB).
 * DIR NULL: a private folder under TMPDIR, removed by destroy. Returns
 * NULL when that folder cannot be made or out of memory. */
kf_refcache_t *kf_refcache_new (const char *dir, uint64_t max_bytes);

/* Idempotent; nulls *SELF_P. */
void kf_refcache_destroy (kf_refcache_t **self_p);

const char *kf_refcache_dir (kf_refcache_t *self);
uint64_t kf_refcache_max_bytes (kf_refcache_t *self);

/* Held while a caller looks an entry up, makes it when missing and links
 * it, so two jobs that need one entry make it once. Not recursive. */
void kf_refcache_lock (kf_refcache_t *self);
void kf_refcache_unlock (kf_refcache_t *self);

/* Checks that TENSORS (a manifest: bytes, offset, role) lay out the SIZE
 * bytes of FD end to end in order, and hashes them: HASH (XXH3-128, 32
 * hex digits) of all of them, INPUTS_HASH of every tensor but the
 * outputs (the bytes that must be the same on any host). Returns 0, or
 * -1 with WHY. */
int kf_refcache_hash (int fd, uint64_t size, json_t *tensors, char hash[33],
                      char inputs_hash[33], char *why, size_t why_size);

/* Moves the data file at PATH (a regular file with one name; renamed
 * when it can be, copied otherwise) into the store as KEY, with META
 * (borrowed; "bytes" is set here). Returns 0; KF_REFCACHE_TOO_BIG with
 * WHY naming the sizes; -1 with WHY on another failure. PATH is gone
 * afterwards either way. */
int kf_refcache_put_data (kf_refcache_t *self, const char *key, const char *path,
                          json_t *meta, char *why, size_t why_size);

/* The META of KEY (caller's) when its entry is whole (its .bin as large as
 * META says), marking it used; else NULL. */
json_t *kf_refcache_get_data (kf_refcache_t *self, const char *key);

/* Gives KEY's data the name DEST (a hard link; a copy, mode 0444, where
 * DEST is on another file system). Returns 0, or -1 with WHY. */
int kf_refcache_link_data (kf_refcache_t *self, const char *key, const char *dest,
                           char *why, size_t why_size);

/* A reference job's result as KEY (r-KEY.json); get returns it (caller's)
 * or NULL. */
void kf_refcache_put_result (kf_refcache_t *self, const char *key, json_t *result);
json_t *kf_refcache_get_result (kf_refcache_t *self, const char *key);

/* Trims the store to its cap now, least recently used first. */
void kf_refcache_trim (kf_refcache_t *self);

#endif
