/*  kf_hash.h - SHA-256, for content addressing of sources and artifacts. */
#ifndef KF_HASH_H
#define KF_HASH_H

#include <stddef.h>

/* Writes the lower-case hex SHA-256 of DATA into OUT (64 chars + NUL). */
void kf_sha256_hex (const void *data, size_t size, char out[65]);

#endif
