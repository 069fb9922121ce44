/*  kf_compile_cache.h - compile results on disk, keyed by everything that
 *  decides the artifact.
 *
 *  The key is the SHA-256 of the toolchain's version line, the complete
 *  compiler command line (flags and target arch included), the kernel
 *  contract header and the source, and the version of the reports a
 *  build's log carries (KF_COMPILE_REPORT_VERSION). A hit returns the stored shared object
 *  (or the stored compiler log of a source that did not compile) without
 *  running any compiler. Entries are written atomically (temporary file,
 *  then rename), so concurrent compiles of one key cannot tear an entry;
 *  the oldest entries are removed when the folder passes its size cap.
 */
#ifndef KF_COMPILE_CACHE_H
#define KF_COMPILE_CACHE_H

#include <stdbool.h>
#include <stddef.h>

/* The version of the reports stored in a build's log (the vectoriser's
 * summary, the register-spill report): raised whenever their text
 * changes, so a cached build does not serve a report an older worker
 * wrote (round 43: a source repeated from round 42 got round 42's spill
 * report, "in a loop, on every pass" after "(none of them in a loop)"). */
#define KF_COMPILE_REPORT_VERSION 2

/* KEY (64 hex + NUL) of one compile. ARGV is the NULL-terminated command. */
void kf_compile_cache_key (const char *version, char *const argv[], const void *header,
                           size_t header_size, const void *source, size_t source_size,
                           char key[65]);

/* Looks KEY up in DIR. On a hit returns true with either *ARTIFACT (the
 * shared object, caller frees) or, for a source that did not compile,
 * *ARTIFACT NULL; *LOG (caller frees) is the stored compiler log. */
bool kf_compile_cache_get (const char *dir, const char *key, void **artifact,
                           size_t *artifact_size, char **log);

/* Stores a result under KEY (ARTIFACT NULL: did not compile), then trims
 * DIR to MAX_BYTES, oldest first. Returns 0, or -1 when nothing was stored
 * (the compile result is still good; the cache is only an optimisation). */
int kf_compile_cache_put (const char *dir, const char *key, const void *artifact,
                          size_t artifact_size, const char *log, size_t max_bytes);

#endif
