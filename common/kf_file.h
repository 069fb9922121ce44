/*  kf_file.h - whole-file reads and writes for sandbox folders and caches.
 *
 *  Reads refuse links and anything but regular files: a sandbox folder is
 *  written by the unprivileged child, which could otherwise plant a link
 *  to a file the worker may read and the child may not.
 */
#ifndef KF_FILE_H
#define KF_FILE_H

#include <stddef.h>
#include <sys/types.h>

/* Reads PATH whole (a regular file, not a link, at most MAX bytes).
 * Returns the data NUL-terminated (caller frees) with *SIZE, or NULL. */
char *kf_file_read (const char *path, size_t max, size_t *size);

/* As kf_file_read, and only a file owned by this process's user that no
 * one else may write (a cache another user could have planted). */
char *kf_file_read_own (const char *path, size_t max, size_t *size);

/* Reads the start of a file the kernel makes (/proc/PID/stat, a task's
 * children list), at most SIZE - 1 bytes, into BUF, NUL-terminated (an
 * empty string when it cannot be read). Returns the bytes read, or -1. */
ssize_t kf_file_read_proc (const char *path, char *buf, size_t size);

/* Where field N (1-based, as proc(5) numbers them; N >= 3) of a
 * /proc/PID/stat TEXT starts: counted from the last ')', since the
 * command's name before it may hold anything. NULL when TEXT is shorter. */
const char *kf_file_stat_field (const char *text, int n);

/* Writes DATA as DIR/NAME (mode 0644). Returns 0 or -1. */
int kf_file_write (const char *dir, const char *name, const void *data, size_t size);

/* As kf_file_write, through a temporary file and a rename, so a reader or
 * a concurrent writer never sees a half-written DIR/NAME. */
int kf_file_replace (const char *dir, const char *name, const void *data, size_t size);

/* kf_file_replace of PATH (a folder, '/', then a name), left at mode
 * 0644 whatever the umask. Returns 0 or -1. */
int kf_file_replace_path (const char *path, const void *data, size_t size);

/* Keeps the cache folder DIR under MAX_BYTES, least recently used first.
 * An entry is a name with several files NAME.EXT, EXTS (NULL-ended) listing
 * every extension it may have; its first extension present in MARKERS
 * (NULL-ended) dates it and marks it whole. Files starting with '.' (writes
 * in progress) are left alone. */
void kf_file_trim (const char *dir, size_t max_bytes, const char *const *markers,
                   const char *const *exts);

/* A worker's cache folder from VALUE, its cache key: "off" is none (NULL),
 * a folder is itself, unset or empty is DIR/kernelfoundry/NAME, DIR the
 * user's cache folder ($XDG_CACHE_HOME, else ~/.cache, else /tmp). The
 * parents of that default are created; the cache makes its own leaf.
 * Caller frees; NULL also when out of memory. */
char *kf_file_cache_dir (const char *value, const char *name);

#endif
