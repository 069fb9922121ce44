/*  kf_file.c - whole-file reads and writes (kf_file.h). */
#include "kf_file.h"
#include "kf_str.h"
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

ssize_t
kf_file_read_proc (const char *path, char *buf, size_t size)
{
    if (!buf || size == 0)
        return -1;
    buf[0] = 0;
    int fd = open (path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    ssize_t n;
    do
        n = read (fd, buf, size - 1);
    while (n < 0 && errno == EINTR);
    close (fd);
    buf[n > 0 ? n : 0] = 0;
    return n;
}

static char *
s_read (const char *path, size_t max, size_t *size, bool own)
{
    int fd = open (path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0)
        return NULL;
    struct stat st;
    if (fstat (fd, &st) != 0 || !S_ISREG (st.st_mode) || (size_t) st.st_size > max
        || (own && (st.st_uid != geteuid () || (st.st_mode & (S_IWGRP | S_IWOTH))))) {
        close (fd);
        return NULL;
    }
    char *data = malloc ((size_t) st.st_size + 1);
    size_t got = 0;
    while (data && got < (size_t) st.st_size) {
        ssize_t n = read (fd, data + got, (size_t) st.st_size - got);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            free (data);
            data = NULL;
        }
        else
            got += (size_t) n;
    }
    close (fd);
    if (data) {
        data[got] = 0;
        *size = got;
    }
    return data;
}

char *
kf_file_read (const char *path, size_t max, size_t *size)
{
    return s_read (path, max, size, false);
}

char *
kf_file_read_own (const char *path, size_t max, size_t *size)
{
    return s_read (path, max, size, true);
}

int
kf_file_write (const char *dir, const char *name, const void *data, size_t size)
{
    char path[4200];
    snprintf (path, sizeof path, "%s/%s", dir, name);
    int fd = open (path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0)
        return -1;
    const char *p = data;
    while (size > 0) {
        ssize_t n = write (fd, p, size);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            close (fd);
            return -1;
        }
        p += n;
        size -= (size_t) n;
    }
    return close (fd);
}

int
kf_file_replace (const char *dir, const char *name, const void *data, size_t size)
{
    static unsigned long counter;
    char tmp[300], from[4400], to[4400];
    snprintf (tmp, sizeof tmp, ".%.200s.%d.%lu", name, (int) getpid (),
              __atomic_add_fetch (&counter, 1, __ATOMIC_RELAXED));
    if (kf_file_write (dir, tmp, data, size))
        return -1;
    snprintf (from, sizeof from, "%s/%s", dir, tmp);
    snprintf (to, sizeof to, "%s/%s", dir, name);
    if (rename (from, to)) {
        unlink (from);
        return -1;
    }
    return 0;
}

int
kf_file_replace_path (const char *path, const void *data, size_t size)
{
    char *dir = strdup (path), *slash = dir ? strrchr (dir, '/') : NULL;
    int rc = -1;
    if (slash && slash[1]) {
        *slash = 0;
        rc = kf_file_replace (*dir ? dir : "/", slash + 1, data, size);
        if (rc == 0)
            chmod (path, 0644);
    }
    free (dir);
    return rc;
}

typedef struct {
    char name[256];
    time_t mtime;
    size_t size;
} s_entry_t;

static int
s_older_first (const void *a, const void *b)
{
    const s_entry_t *x = a, *y = b;
    return (x->mtime > y->mtime) - (x->mtime < y->mtime);
}

void
kf_file_trim (const char *dir, size_t max_bytes, const char *const *markers,
              const char *const *exts)
{
    DIR *d = opendir (dir);
    if (!d)
        return;
    size_t n = 0, cap = 64, total = 0;
    s_entry_t *e = malloc (cap * sizeof *e);
    struct dirent *ent;
    while (e && (ent = readdir (d))) {
        const char *dot = strrchr (ent->d_name, '.');
        size_t stem = dot ? (size_t) (dot - ent->d_name) : 0;
        if (ent->d_name[0] == '.' || !dot || stem >= sizeof e->name
            || !kf_str_in (dot + 1, markers))
            continue;
        char path[4400];
        struct stat st;
        snprintf (path, sizeof path, "%s/%s", dir, ent->d_name);
        if (stat (path, &st))
            continue;
        if (n == cap) {
            s_entry_t *grown = realloc (e, 2 * cap * sizeof *e);
            if (!grown)
                break;
            e = grown;
            cap *= 2;
        }
        snprintf (e[n].name, sizeof e[n].name, "%.*s", (int) stem, ent->d_name);
        e[n].mtime = st.st_mtime;
        e[n].size = 0;
        for (int k = 0; exts[k]; k++) {
            struct stat part;
            snprintf (path, sizeof path, "%s/%s.%s", dir, e[n].name, exts[k]);
            if (stat (path, &part) == 0)
                e[n].size += (size_t) part.st_size;
        }
        total += e[n].size;
        n++;
    }
    closedir (d);
    if (e && total > max_bytes) {
        qsort (e, n, sizeof *e, s_older_first);
        for (size_t i = 0; i < n && total > max_bytes; i++) {
            for (int k = 0; exts[k]; k++) {
                char path[4400];
                snprintf (path, sizeof path, "%s/%s.%s", dir, e[i].name, exts[k]);
                unlink (path);
            }
            total -= e[i].size;
        }
    }
    free (e);
}

char *
kf_file_cache_dir (const char *value, const char *name)
{
    if (value && !strcmp (value, "off"))
        return NULL;
    if (value && *value)
        return strdup (value);
    const char *xdg = getenv ("XDG_CACHE_HOME");
    const char *home = getenv ("HOME");
    char *dir = kf_strdupf ("%s%s/kernelfoundry", xdg && *xdg ? xdg : home ? home : "/tmp",
                            xdg && *xdg ? "" : "/.cache");
    if (!dir)
        return NULL;
    for (char *p = dir; (p = strchr (p + 1, '/'));) {
        *p = 0;
        mkdir (dir, 0755);
        *p = '/';
    }
    mkdir (dir, 0755);
    char *leaf = kf_strdupf ("%s/%s", dir, name);
    free (dir);
    return leaf;
}

const char *
kf_file_stat_field (const char *text, int n)
{
    const char *f = text ? strrchr (text, ')') : NULL;
    for (int field = 2; f && *f && field < n; f++)
        if (*f == ' ')
            field++;
    return f && *f ? f : NULL;
}
