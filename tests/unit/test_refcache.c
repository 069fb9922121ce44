/*  test_refcache.c - the exec host's reference store (kf_refcache.h): data
 *  moved in whole or not at all, found by key, linked into an evaluation's
 *  folder, hashed with XXH3-128 over a checked layout, refused past its
 *  cap with the sizes named, and trimmed least recently used first (an
 *  evaluation holding a link keeps its bytes while the entry goes). */
#include "../../exec-worker/kf_refcache.h"
#include "../kf_test.h"
#include "kf_file.h"
#include "kf_subproc.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

//  Writes SIZE bytes of FILL as DIR/NAME; returns its path (static).
static const char *
s_make (const char *dir, const char *name, size_t size, int fill)
{
    static char path[4200];
    char *data = malloc (size ? size : 1);
    memset (data, fill, size);
    CHECK (kf_file_write (dir, name, data, size) == 0);
    free (data);
    snprintf (path, sizeof path, "%s/%s", dir, name);
    return path;
}

//  A manifest of two tensors: an input of A bytes, then an output of B.
static json_t *
s_tensors (long a, long b)
{
    return json_pack ("[{s:s, s:i, s:i}, {s:s, s:i, s:i}]", "role", "input", "bytes", (int) a,
                      "offset", 0, "role", "output", "bytes", (int) b, "offset", (int) a);
}

static void
s_age (const char *dir, const char *key, time_t when)
{
    char path[4200];
    snprintf (path, sizeof path, "%s/d-%s.json", dir, key);
    struct timespec ts[2] = { { when, 0 }, { when, 0 } };
    CHECK (utimensat (AT_FDCWD, path, ts, 0) == 0);
}

static bool
s_present (kf_refcache_t *c, const char *key)
{
    json_t *meta = kf_refcache_get_data (c, key);
    json_decref (meta);
    return meta != NULL;
}

int
main (void)
{
    char work[] = "/tmp/kf-refcache-test-XXXXXX";
    CHECK (mkdtemp (work) != NULL);
    char store[4200];
    snprintf (store, sizeof store, "%s/store", work);
    char why[600], p2[4300];

    //  Hashing: the layout is checked, outputs are not in inputs_hash.
    const char *path = s_make (work, "a.bin", 3000, 'a');
    int fd = open (path, O_RDONLY);
    char h1[33], i1[33], h2[33], i2[33];
    json_t *t = s_tensors (1000, 2000);
    CHECK (kf_refcache_hash (fd, 3000, t, h1, i1, why, sizeof why) == 0);
    CHECK (strlen (h1) == 32 && strlen (i1) == 32 && strcmp (h1, i1) != 0);
    json_decref (t);
    t = s_tensors (1000, 1999);
    CHECK (kf_refcache_hash (fd, 3000, t, h2, i2, why, sizeof why) == -1);
    printf ("  a short layout: %s\n", why);
    CHECK (strstr (why, "cover 2999 of its 3000 bytes") != NULL);
    json_decref (t);
    close (fd);
    //  The same input bytes with other outputs: same inputs_hash.
    char *mixed = malloc (3000);
    memset (mixed, 'a', 1000);
    memset (mixed + 1000, 'b', 2000);
    CHECK (kf_file_write (work, "b.bin", mixed, 3000) == 0);
    free (mixed);
    snprintf (p2, sizeof p2, "%s/b.bin", work);
    fd = open (p2, O_RDONLY);
    t = s_tensors (1000, 2000);
    CHECK (kf_refcache_hash (fd, 3000, t, h2, i2, why, sizeof why) == 0);
    CHECK (strcmp (h1, h2) != 0 && strcmp (i1, i2) == 0);
    json_decref (t);
    close (fd);

    //  A store of 10 000 bytes. Puts move the file in; a get finds it.
    kf_refcache_t *c = kf_refcache_new (store, 10000);
    CHECK (c != NULL && kf_refcache_max_bytes (c) == 10000);
    const char *keys[] = { "k1", "k2", "k3", "k4" };
    for (int i = 0; i < 3; i++) {
        char name[16];
        snprintf (name, sizeof name, "%d.bin", i);
        path = s_make (work, name, 3000, 'x' + i);
        json_t *meta = json_pack ("{s:s}", "hash", "h");
        CHECK (kf_refcache_put_data (c, keys[i], path, meta, why, sizeof why) == 0);
        CHECK (json_integer_value (json_object_get (meta, "bytes")) == 3000);
        json_decref (meta);
        CHECK (access (path, F_OK) != 0);   //  moved, not copied
        s_age (store, keys[i], 1000000 + i * 100);
    }
    json_t *meta = kf_refcache_get_data (c, "k2");
    CHECK (meta && json_integer_value (json_object_get (meta, "bytes")) == 3000);
    json_decref (meta);
    snprintf (p2, sizeof p2, "%s/d-k2.bin", store);
    struct stat st;
    CHECK (stat (p2, &st) == 0 && (st.st_mode & 0777) == 0444);

    //  k1 is the oldest; using k2 made it the newest. An evaluation holds
    //  k1 through a link.
    s_age (store, "k1", 900000);
    char held[4300];
    snprintf (held, sizeof held, "%s/held.bin", work);
    CHECK (kf_refcache_link_data (c, "k1", held, why, sizeof why) == 0);
    //  A fourth entry passes the cap: k1, the least recently used, goes.
    path = s_make (work, "3.bin", 3000, 'z');
    meta = json_object ();
    CHECK (kf_refcache_put_data (c, "k4", path, meta, why, sizeof why) == 0);
    json_decref (meta);
    CHECK (!s_present (c, "k1"));
    CHECK (s_present (c, "k2") && s_present (c, "k3") && s_present (c, "k4"));
    printf ("  eviction: k1 (least recently used) gone, k2 k3 k4 kept\n");
    //  ... and the evaluation's link still has its 3000 bytes.
    size_t size = 0;
    char *bytes = kf_file_read (held, 1 << 20, &size);
    CHECK (bytes && size == 3000 && bytes[0] == 'x' && bytes[2999] == 'x');
    free (bytes);
    CHECK (kf_refcache_link_data (c, "k1", held, why, sizeof why) == -1);

    //  Over the cap: refused with both sizes, and the file is gone.
    path = s_make (work, "big.bin", 10001, 'q');
    meta = json_object ();
    CHECK (kf_refcache_put_data (c, "big", path, meta, why, sizeof why) == KF_REFCACHE_TOO_BIG);
    printf ("  over the cap: %s\n", why);
    CHECK (strstr (why, "10001 bytes") && strstr (why, "cap of 10000 bytes"));
    CHECK (access (path, F_OK) != 0 && !s_present (c, "big"));
    json_decref (meta);

    //  Half an entry (a .bin whose size disagrees with its .json) is a
    //  miss; a leftover temporary file is never an entry.
    snprintf (p2, sizeof p2, "%s/d-k3.bin", store);
    CHECK (truncate (p2, 10) == 0);
    CHECK (!s_present (c, "k3"));
    s_make (store, ".d-k9.bin.1.1", 100, 't');
    CHECK (!s_present (c, "k9"));

    //  Results: stored and found.
    json_t *r = json_pack ("{s:s}", "data_key", "k2");
    kf_refcache_put_result (c, "res", r);
    json_decref (r);
    r = kf_refcache_get_result (c, "res");
    CHECK (r && !strcmp (json_string_value (json_object_get (r, "data_key")), "k2"));
    json_decref (r);
    kf_refcache_destroy (&c);
    kf_refcache_destroy (&c);
    CHECK (c == NULL);

    //  No folder: a private one, gone with the store.
    c = kf_refcache_new (NULL, 0);
    CHECK (c && kf_refcache_max_bytes (c) == (uint64_t) 4 << 30);
    char private_dir[4200];
    snprintf (private_dir, sizeof private_dir, "%s", c ? kf_refcache_dir (c) : "");
    CHECK (access (private_dir, F_OK) == 0);
    kf_refcache_destroy (&c);
    CHECK (access (private_dir, F_OK) != 0);

    kf_subproc_rmtree (work);
    return kf_test_done ("test_refcache");
}
