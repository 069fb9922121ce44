/*  kf_compile_cache.c - the on-disk compile cache (kf_compile_cache.h).
 *
 *  Layout: DIR/KEY.so holds an artifact, DIR/KEY.fail marks a source that
 *  did not compile, DIR/KEY.log the compiler log of either. The .so or
 *  .fail file is written last, so its presence means the entry is whole.
 */
#include "kf_compile_cache.h"
#include "kf_hash.h"
#include "kf_file.h"
#include "kf_subproc.h"
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

void
kf_compile_cache_key (const char *version, char *const argv[], const void *header,
                      size_t header_size, const void *source, size_t source_size,
                      char key[65])
{
    /* Each part is hashed on its own and the hashes joined, so no choice
     * of bytes in one part can be mistaken for another part. */
    char *joined = NULL;
    size_t size = 0;
    FILE *f = open_memstream (&joined, &size);
    char h[65];
    fprintf (f, "kf-compile-cache-v1 report %d\n%s\n", KF_COMPILE_REPORT_VERSION,
             version ? version : "");
    for (int i = 0; argv[i]; i++) {
        kf_sha256_hex (argv[i], strlen (argv[i]), h);
        fprintf (f, "arg %s\n", h);
    }
    kf_sha256_hex (header, header_size, h);
    fprintf (f, "header %s\n", h);
    kf_sha256_hex (source, source_size, h);
    fprintf (f, "source %s\n", h);
    fclose (f);
    kf_sha256_hex (joined, size, key);
    free (joined);
}

bool
kf_compile_cache_get (const char *dir, const char *key, void **artifact,
                      size_t *artifact_size, char **log)
{
    *artifact = NULL;
    *artifact_size = 0;
    *log = NULL;
    if (!dir || !*dir)
        return false;
    char path[4200];
    snprintf (path, sizeof path, "%s/%s.so", dir, key);
    void *so = kf_file_read (path, (size_t) 1 << 30, artifact_size);
    if (!so) {
        snprintf (path, sizeof path, "%s/%s.fail", dir, key);
        if (access (path, F_OK) != 0)
            return false;
    }
    *artifact = so;
    snprintf (path, sizeof path, "%s/%s.log", dir, key);
    size_t log_size;
    *log = kf_file_read (path, (size_t) 1 << 30, &log_size);
    if (!*log)
        *log = strdup ("");
    /* Touch it: trimming removes the least recently used first. */
    snprintf (path, sizeof path, "%s/%s.%s", dir, key, so ? "so" : "fail");
    utimensat (AT_FDCWD, path, NULL, 0);
    return true;
}

int
kf_compile_cache_put (const char *dir, const char *key, const void *artifact,
                      size_t artifact_size, const char *log, size_t max_bytes)
{
    if (!dir || !*dir)
        return -1;
    if (mkdir (dir, 0700) && errno != EEXIST)
        return -1;
    char name[80];
    snprintf (name, sizeof name, "%s.log", key);
    if (kf_file_replace (dir, name, log ? log : "", log ? strlen (log) : 0))
        return -1;
    snprintf (name, sizeof name, "%s.%s", key, artifact ? "so" : "fail");
    if (kf_file_replace (dir, name, artifact ? artifact : "", artifact ? artifact_size : 0))
        return -1;
    if (max_bytes)
        kf_file_trim (dir, max_bytes, (const char *const[]) { "so", "fail", NULL },
                      (const char *const[]) { "so", "fail", "log", NULL });
    return 0;
}
