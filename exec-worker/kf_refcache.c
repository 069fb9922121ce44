/*  kf_refcache.c - the exec host's store of PyTorch reference data
 *  (kf_refcache.h).
 *
 *  The data is moved, never read into memory: the runner writes one file,
 *  the store renames it into place (or copies it in pieces when the
 *  runner's folder is on another file system), and evaluations get a hard
 *  link to it. A hard link also makes eviction harmless to an evaluation
 *  that is using an entry: the name goes, the inode stays until the
 *  evaluation's folder is removed.
 */
#include "kf_refcache.h"
#include "kf_take.h"
#include "kf_file.h"
#include "kf_log.h"
#include "kf_str.h"
#include "kf_subproc.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>
#include <xxhash.h>

#define S_PIECE ((size_t) 8 << 20)

struct _kf_refcache_t {
    char *dir;
    bool private_dir;            //  made here, removed by destroy
    uint64_t max_bytes;
    pthread_mutex_t lock;
};

static const char *const s_markers[] = { "json", NULL };
//  .json first: trimming unlinks in this order, so a reader never finds
//  a .json whose .bin is gone.
static const char *const s_exts[] = { "json", "bin", NULL };

kf_refcache_t *
kf_refcache_new (const char *dir, uint64_t max_bytes)
{
    kf_refcache_t *self = calloc (1, sizeof *self);
    if (!self)
        return NULL;
    if (dir) {
        self->dir = strdup (dir);
        if (self->dir && mkdir (dir, 0700) && errno != EEXIST)
            kf_warn ("reference cache: cannot make %s: %s", dir, strerror (errno));
    }
    else {
        self->dir = kf_subproc_mkdtemp (NULL);
        self->private_dir = true;
    }
    if (!self->dir) {
        free (self);
        return NULL;
    }
    self->max_bytes = max_bytes ? max_bytes : (uint64_t) 4 << 30;
    pthread_mutex_init (&self->lock, NULL);
    return self;
}

void
kf_refcache_destroy (kf_refcache_t **self_p)
{
    kf_refcache_t *self = KF_TAKE (self_p);
    if (self) {
        if (self->private_dir)
            kf_subproc_rmtree (self->dir);
        pthread_mutex_destroy (&self->lock);
        free (self->dir);
        free (self);
    }
}

const char *
kf_refcache_dir (kf_refcache_t *self)
{
    return self->dir;
}

uint64_t
kf_refcache_max_bytes (kf_refcache_t *self)
{
    return self->max_bytes;
}

void
kf_refcache_lock (kf_refcache_t *self)
{
    pthread_mutex_lock (&self->lock);
}

void
kf_refcache_unlock (kf_refcache_t *self)
{
    pthread_mutex_unlock (&self->lock);
}

// --------------------------------------------------------------------------
//  Hashing

static void
s_hex128 (XXH128_hash_t h, char out[33])
{
    XXH128_canonical_t c;
    XXH128_canonicalFromHash (&c, h);
    for (int i = 0; i < 16; i++)
        snprintf (out + 2 * i, 3, "%02x", c.digest[i]);
}

int
kf_refcache_hash (int fd, uint64_t size, json_t *tensors, char hash[33], char inputs_hash[33],
                  char *why, size_t why_size)
{
    XXH3_state_t *all = XXH3_createState (), *ins = XXH3_createState ();
    char *buf = malloc (S_PIECE);
    int rc = -1;
    if (!all || !ins || !buf) {
        snprintf (why, why_size, "out of memory hashing the reference data");
        goto done;
    }
    XXH3_128bits_reset (all);
    XXH3_128bits_reset (ins);
    uint64_t at = 0;
    size_t i;
    json_t *t;
    json_array_foreach (tensors, i, t) {
        json_t *b = json_object_get (t, "bytes"), *o = json_object_get (t, "offset");
        if (!json_is_integer (b) || !json_is_integer (o) || json_integer_value (b) < 0
            || (uint64_t) json_integer_value (o) != at
            || (uint64_t) json_integer_value (b) > size - at) {
            snprintf (why, why_size, "reference data: tensor %zu is not %lld bytes at offset "
                      "%llu of the %llu-byte file", i, (long long) json_integer_value (b),
                      (unsigned long long) at, (unsigned long long) size);
            goto done;
        }
        const char *role = json_string_value (json_object_get (t, "role"));
        bool output = role && !strcmp (role, "output");
        uint64_t left = (uint64_t) json_integer_value (b);
        while (left) {
            size_t want = left < S_PIECE ? (size_t) left : S_PIECE;
            ssize_t got = pread (fd, buf, want, (off_t) at);
            if (got <= 0) {
                snprintf (why, why_size, "reference data: cannot read at offset %llu: %s",
                          (unsigned long long) at, got < 0 ? strerror (errno) : "end of file");
                goto done;
            }
            XXH3_128bits_update (all, buf, (size_t) got);
            if (!output)
                XXH3_128bits_update (ins, buf, (size_t) got);
            at += (uint64_t) got;
            left -= (uint64_t) got;
        }
    }
    if (at != size) {
        snprintf (why, why_size, "reference data: the tensors cover %llu of its %llu bytes",
                  (unsigned long long) at, (unsigned long long) size);
        goto done;
    }
    s_hex128 (XXH3_128bits_digest (all), hash);
    s_hex128 (XXH3_128bits_digest (ins), inputs_hash);
    rc = 0;
done:
    XXH3_freeState (all);
    XXH3_freeState (ins);
    free (buf);
    return rc;
}

// --------------------------------------------------------------------------
//  Moving and copying

//  Copies the SIZE bytes of FROM into a new file TO (mode 0444). Returns 0,
//  or -1 with errno (TO removed).
static int
s_copy (int from, const char *to, uint64_t size)
{
    int out = open (to, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0444);
    if (out < 0)
        return -1;
    char *buf = malloc (S_PIECE);
    uint64_t at = 0;
    int err = buf ? 0 : ENOMEM;
    while (!err && at < size) {
        size_t want = size - at < S_PIECE ? (size_t) (size - at) : S_PIECE;
        ssize_t got = pread (from, buf, want, (off_t) at);
        if (got <= 0) {
            err = got < 0 ? errno : EIO;
            break;
        }
        for (ssize_t done = 0; done < got && !err;) {
            ssize_t w = write (out, buf + done, (size_t) (got - done));
            if (w < 0)
                err = errno;
            else
                done += w;
        }
        at += (uint64_t) got;
    }
    free (buf);
    if (close (out) && !err)
        err = errno;
    if (err) {
        unlink (to);
        errno = err;
        return -1;
    }
    return 0;
}

//  Free bytes of the file system DIR is on, or UINT64_MAX when unknown.
static uint64_t
s_free_bytes (const char *dir)
{
    struct statvfs vfs;
    if (statvfs (dir, &vfs))
        return UINT64_MAX;
    return (uint64_t) vfs.f_bavail * (uint64_t) vfs.f_frsize;
}

int
kf_refcache_put_data (kf_refcache_t *self, const char *key, const char *path, json_t *meta,
                      char *why, size_t why_size)
{
    static unsigned long counter;
    int fd = open (path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    struct stat st;
    int rc = -1;
    if (fd < 0 || fstat (fd, &st) || !S_ISREG (st.st_mode) || st.st_nlink != 1) {
        //  One name only: the runner's folder was the sandbox's, and a
        //  second name would be a link it made to something else.
        snprintf (why, why_size, "reference data: %s is not a plain file of its own", path);
        goto done;
    }
    uint64_t size = (uint64_t) st.st_size;
    if (size > self->max_bytes) {
        snprintf (why, why_size, "reference data is %llu bytes, over the exec worker's "
                  "reference cache cap of %llu bytes (reference_cache_max_mb)",
                  (unsigned long long) size, (unsigned long long) self->max_bytes);
        rc = KF_REFCACHE_TOO_BIG;
        goto done;
    }
    if (mkdir (self->dir, 0700) && errno != EEXIST) {
        snprintf (why, why_size, "reference cache: cannot make %s: %s", self->dir,
                  strerror (errno));
        goto done;
    }
    char tmp[4400], final[4400], name[96];
    snprintf (tmp, sizeof tmp, "%s/.d-%s.bin.%d.%lu", self->dir, key, (int) getpid (),
              __atomic_add_fetch (&counter, 1, __ATOMIC_RELAXED));
    snprintf (final, sizeof final, "%s/d-%s.bin", self->dir, key);
    if (rename (path, tmp) == 0)
        chmod (tmp, 0444);
    else if (errno != EXDEV) {
        snprintf (why, why_size, "reference cache: cannot move the data into %s: %s",
                  self->dir, strerror (errno));
        goto done;
    }
    else {
        //  Another file system: room for it first (the trim below may
        //  free some, but not an entry another job is about to link).
        uint64_t room = s_free_bytes (self->dir);
        if (room < size) {
            snprintf (why, why_size, "reference data is %llu bytes and %s has %llu bytes "
                      "free", (unsigned long long) size, self->dir, (unsigned long long) room);
            rc = KF_REFCACHE_TOO_BIG;
            goto done;
        }
        if (s_copy (fd, tmp, size)) {
            bool full = errno == ENOSPC || errno == EDQUOT || errno == EFBIG;
            snprintf (why, why_size, "reference cache: cannot copy %llu bytes into %s: %s",
                      (unsigned long long) size, self->dir, strerror (errno));
            rc = full ? KF_REFCACHE_TOO_BIG : -1;
            goto done;
        }
    }
    if (rename (tmp, final)) {
        snprintf (why, why_size, "reference cache: cannot rename into %s: %s", self->dir,
                  strerror (errno));
        unlink (tmp);
        goto done;
    }
    json_object_set_new (meta, "bytes", json_integer ((json_int_t) size));
    char *text = json_dumps (meta, JSON_COMPACT);
    snprintf (name, sizeof name, "d-%s.json", key);
    if (!text || kf_file_replace (self->dir, name, text, strlen (text))) {
        snprintf (why, why_size, "reference cache: cannot write %s/%s: %s", self->dir, name,
                  strerror (errno));
        free (text);
        goto done;
    }
    free (text);
    kf_refcache_trim (self);
    rc = 0;
done:
    if (fd >= 0)
        close (fd);
    unlink (path);
    return rc;
}

//  DIR/NAME as a JSON object, or NULL.
static json_t *
s_load (kf_refcache_t *self, const char *name)
{
    char path[4400];
    snprintf (path, sizeof path, "%s/%s", self->dir, name);
    size_t size;
    char *text = kf_file_read (path, (size_t) 64 << 20, &size);
    if (!text)
        return NULL;
    json_t *obj = json_loadb (text, size, 0, NULL);
    free (text);
    if (obj && !json_is_object (obj)) {
        json_decref (obj);
        obj = NULL;
    }
    if (obj)
        //  Used now: trimming removes the least recently used first.
        utimensat (AT_FDCWD, path, NULL, 0);
    return obj;
}

json_t *
kf_refcache_get_data (kf_refcache_t *self, const char *key)
{
    char name[96], path[4400];
    snprintf (name, sizeof name, "d-%s.json", key);
    json_t *meta = s_load (self, name);
    if (!meta)
        return NULL;
    snprintf (path, sizeof path, "%s/d-%s.bin", self->dir, key);
    struct stat st;
    json_t *bytes = json_object_get (meta, "bytes");
    if (lstat (path, &st) || !S_ISREG (st.st_mode) || !json_is_integer (bytes)
        || (json_int_t) st.st_size != json_integer_value (bytes)) {
        //  Half an entry (another worker's, say, or a trim between the
        //  two names): a miss, which the next put repairs.
        json_decref (meta);
        return NULL;
    }
    return meta;
}

int
kf_refcache_link_data (kf_refcache_t *self, const char *key, const char *dest, char *why,
                       size_t why_size)
{
    char path[4400];
    snprintf (path, sizeof path, "%s/d-%s.bin", self->dir, key);
    if (link (path, dest) == 0)
        return 0;
    if (errno != EXDEV && errno != EPERM) {
        snprintf (why, why_size, "reference data %s: cannot link it: %s", key, strerror (errno));
        return -1;
    }
    int fd = open (path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    struct stat st;
    int rc = fd >= 0 && fstat (fd, &st) == 0 ? s_copy (fd, dest, (uint64_t) st.st_size) : -1;
    if (rc)
        snprintf (why, why_size, "reference data %s: cannot copy it: %s", key, strerror (errno));
    if (fd >= 0)
        close (fd);
    return rc;
}

void
kf_refcache_put_result (kf_refcache_t *self, const char *key, json_t *result)
{
    char name[96];
    snprintf (name, sizeof name, "r-%s.json", key);
    char *text = json_dumps (result, JSON_COMPACT);
    if (!text || kf_file_replace (self->dir, name, text, strlen (text)))
        kf_warn ("reference cache: cannot store %s in %s: %s", name, self->dir, strerror (errno));
    free (text);
}

json_t *
kf_refcache_get_result (kf_refcache_t *self, const char *key)
{
    char name[96];
    snprintf (name, sizeof name, "r-%s.json", key);
    return s_load (self, name);
}

void
kf_refcache_trim (kf_refcache_t *self)
{
    kf_file_trim (self->dir, (size_t) self->max_bytes, s_markers, s_exts);
}
