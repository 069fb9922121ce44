/*  kf_refdata.h - the evaluation child's view of exported PyTorch data.
 *
 *  The parent gives each evaluation the reference data of its run as a
 *  file in the evaluation's folder: DIR/reference.bin, a hard link to the
 *  exec host's store (kf_refcache.h) or a copy where the store is on
 *  another file system. One function maps it for every backend, so the
 *  backends never learn where it came from.
 */
#ifndef KF_REFDATA_H
#define KF_REFDATA_H

#include <jansson.h>
#include <stddef.h>

/* Maps the evaluation's reference data read-only: DIR/NAME, NAME being
 * JOB's "reference_data_path" (a plain name inside DIR) or "reference.bin".
 * Never through a link. Returns the bytes ("" when empty) with *SIZE, or
 * NULL. Sizes are 64-bit: data past 2 GiB maps like any other. */
const char *kf_refdata_map (const char *dir, json_t *job, size_t *size);

/* Unmaps what kf_refdata_map returned (NULL and "" are fine). */
void kf_refdata_unmap (const char *data, size_t size);

#endif
