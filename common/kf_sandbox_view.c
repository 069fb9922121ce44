/*  kf_sandbox_view.c - the private view of one sandboxed run
 *  (kf_sandbox.h): planned in the parent, built in the child.
 *
 *  Why an allow-list rooted on a fresh tmpfs rather than a deny-list laid
 *  over the host's root: a deny-list has to name every secret, socket and
 *  log on a host we do not know (a PostgreSQL socket in a state folder, a
 *  key beside a config, a coordinator's log), and misses the next one; an
 *  allow-list names what compilers and runtimes need, which is the same
 *  on every host, and the host's root is detached, so nothing left out
 *  can be reached again by a later mount or a nested namespace.
 *
 *  The plan (which paths, which mounts) is made in the parent, where
 *  memory may be allocated; the child only walks it with system calls,
 *  because job threads fork concurrently and a forked child of a threaded
 *  process may call only async-signal-safe functions. The three processes
 *  of a run are described in kf_sandbox.h.
 */
#include "kf_sandbox.h"
#include "kf_take.h"
#include "kf_str.h"
#include "kf_file.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef MOUNT_ATTR_RDONLY
#define MOUNT_ATTR_RDONLY 0x00000001
#define MOUNT_ATTR_NOSUID 0x00000002
#define MOUNT_ATTR_NODEV  0x00000004
#define MOUNT_ATTR_NOEXEC 0x00000008
#endif
#ifndef AT_RECURSIVE
#define AT_RECURSIVE 0x8000
#endif
#ifndef SYS_mount_setattr
#define SYS_mount_setattr 442
#endif

//  The layout of struct mount_attr (linux/mount.h, which clashes with
//  sys/mount.h on older C libraries).
typedef struct {
    uint64_t attr_set, attr_clr, propagation, userns_fd;
} s_mount_attr_t;

#define S_SHARE_MAX  16
#define S_DEFAULT_TMP_MB 512
#define S_DEFAULT_SHM_MB 256

typedef enum {
    S_BIND_RO, S_BIND_RW, S_DEV, S_TMPFS, S_SYMLINK, S_PROC, S_HIDE
} s_kind_t;

typedef struct {
    s_kind_t kind;
    bool dir;                //  a folder (else a file or a device node)
    char path[PATH_MAX];     //  where, inside the view (and, for binds, outside)
    char data[256];          //  tmpfs options, or a link's target
} s_entry_t;

struct kf_sandbox_plan {
    bool userns;             //  not root: a user namespace too
    char uid_map[64], gid_map[64];
    char staging[16];        //  where the new root is put together
    uintptr_t arg_start, arg_end;  //  the worker's arguments, in memory
    int n, cap;
    s_entry_t *e;
    int *fds;                //  per entry: its source, opened in the child
};

//  Folders shared read-write with every run (kf_sandbox_share), and
//  certificates hidden from it (kf_sandbox_hide).
static struct {
    pthread_mutex_t lock;
    int n_share, n_hide;
    char *share[S_SHARE_MAX];
    char *hide[S_SHARE_MAX];
} s_shared = { .lock = PTHREAD_MUTEX_INITIALIZER };

int
kf_sandbox_hide (const char *path)
{
    if (!path || !*path)
        return 0;
    pthread_mutex_lock (&s_shared.lock);
    int rc = -1;
    if (s_shared.n_hide < S_SHARE_MAX && (s_shared.hide[s_shared.n_hide] = strdup (path))) {
        s_shared.n_hide++;
        rc = 0;
    }
    pthread_mutex_unlock (&s_shared.lock);
    return rc;
}

int
kf_sandbox_share (const char *path)
{
    pthread_mutex_lock (&s_shared.lock);
    int rc = -1;
    if (path && *path && s_shared.n_share < S_SHARE_MAX) {
        char *real = realpath (path, NULL);
        s_shared.share[s_shared.n_share++] = real ? real : strdup (path);
        rc = 0;
    }
    pthread_mutex_unlock (&s_shared.lock);
    return rc;
}

// --------------------------------------------------------------------------
//  The plan (parent side)

static bool
s_under (const char *path, const char *dir)
{
    size_t n = strlen (dir);
    if (n == 1 && dir[0] == '/')
        return true;
    return strncmp (path, dir, n) == 0 && (path[n] == '/' || path[n] == 0);
}

static int
s_add (kf_sandbox_plan_t *p, s_kind_t kind, bool dir, const char *path, const char *data)
{
    if (!path || path[0] != '/')
        return 0;
    if (strlen (path) >= PATH_MAX || (data && strlen (data) >= sizeof p->e[0].data)) {
        errno = ENAMETOOLONG;
        return -1;
    }
    for (int i = 0; i < p->n; i++) {
        s_entry_t *e = &p->e[i];
        if (kind == S_HIDE || e->kind == S_HIDE || kind == S_TMPFS)
            continue;
        if (!strcmp (e->path, path)) {
            if (kind == S_BIND_RW && e->kind == S_BIND_RO)
                e->kind = S_BIND_RW;    //  writable wins
            return 0;
        }
        //  Already visible, as it is, under a folder bound whole.
        if (kind == S_BIND_RO && e->kind == S_BIND_RO && e->dir && s_under (path, e->path))
            return 0;
    }
    if (p->n == p->cap) {
        int cap = p->cap ? 2 * p->cap : 64;
        s_entry_t *e = realloc (p->e, (size_t) cap * sizeof *e);
        if (!e)
            return -1;
        p->e = e;
        p->cap = cap;
    }
    s_entry_t *e = &p->e[p->n++];
    memset (e, 0, sizeof *e);
    e->kind = kind;
    e->dir = dir;
    snprintf (e->path, sizeof e->path, "%s", path);
    if (data)
        snprintf (e->data, sizeof e->data, "%s", data);
    return 0;
}

//  A folder or file of the host, read-only (READ_WRITE: writable) at its
//  own path; through its real path, so no link in the view leads to it.
static int
s_add_host (kf_sandbox_plan_t *p, const char *path, bool read_write)
{
    char real[PATH_MAX];
    struct stat st;
    if (!path || path[0] != '/' || !realpath (path, real) || stat (real, &st) != 0)
        return 0;
    return s_add (p, read_write ? S_BIND_RW : S_BIND_RO, S_ISDIR (st.st_mode), real, NULL);
}

//  The folder PROGRAM lives in (and the folder of its real file).
static int
s_add_program (kf_sandbox_plan_t *p, const char *program)
{
    char found[PATH_MAX] = "";
    if (!program || !*program)
        return 0;
    if (strchr (program, '/'))
        snprintf (found, sizeof found, "%s", program);
    else {
        const char *path = getenv ("PATH");
        for (const char *d = path ? path : "/usr/bin:/bin"; d && *d;) {
            const char *end = strchr (d, ':');
            size_t len = end ? (size_t) (end - d) : strlen (d);
            if (len && len + strlen (program) + 2 < sizeof found) {
                snprintf (found, sizeof found, "%.*s/%s", (int) len, d, program);
                if (access (found, X_OK) == 0)
                    break;
            }
            found[0] = 0;
            d = end ? end + 1 : NULL;
        }
    }
    if (!found[0])
        return 0;
    char real[PATH_MAX], dir[PATH_MAX];
    snprintf (dir, sizeof dir, "%s", found);
    char *slash = strrchr (dir, '/');
    if (slash)
        *(slash == dir ? slash + 1 : slash) = 0;
    if (s_add_host (p, dir, false) != 0)
        return -1;
    if (realpath (found, real)) {
        slash = strrchr (real, '/');
        if (slash)
            *(slash == real ? slash + 1 : slash) = 0;
        return s_add_host (p, real, false);
    }
    return 0;
}

//  Each absolute entry of the colon-separated LIST.
static int
s_add_list (kf_sandbox_plan_t *p, const char *list, int how)
{
    for (const char *d = list; d && *d;) {
        const char *end = strchr (d, ':');
        size_t len = end ? (size_t) (end - d) : strlen (d);
        char one[PATH_MAX];
        if (len && len < sizeof one) {
            snprintf (one, sizeof one, "%.*s", (int) len, d);
            int rc = 0;
            if (how == S_HIDE) {
                char real[PATH_MAX];
                struct stat st;
                if (realpath (one, real) && stat (real, &st) == 0)
                    rc = s_add (p, S_HIDE, S_ISDIR (st.st_mode), real, NULL);
            }
            else
                rc = s_add_host (p, one, how == S_BIND_RW);
            if (rc != 0)
                return -1;
        }
        d = end ? end + 1 : NULL;
    }
    return 0;
}

static unsigned long
s_env_mb (const char *name, unsigned long dflt)
{
    const char *text = getenv (name);
    char *end = NULL;
    unsigned long v = text && *text ? strtoul (text, &end, 10) : 0;
    return text && *text && end && !*end && v > 0 && v < (1ul << 30) ? v : dflt;
}

//  The device nodes a compiler or a GPU runtime opens; nothing else of
//  the host's /dev (no disks, no kvm, no ttys of others).
static bool
s_device_kept (const char *name)
{
    static const char *const exact[] = { "null", "zero", "full", "random", "urandom", "kfd",
                                         "dri", "accel", "dxg", NULL };
    return kf_str_in (name, exact) || strncmp (name, "nvidia", 6) == 0;
}

static int
s_add_devices (kf_sandbox_plan_t *p)
{
    char size[64];
    if (s_add (p, S_TMPFS, true, "/dev", "size=64k,nr_inodes=512,mode=0755") != 0)
        return -1;
    DIR *dev = opendir ("/dev");
    struct dirent *e;
    while (dev && (e = readdir (dev)) != NULL) {
        char path[PATH_MAX];
        struct stat st;
        if (!s_device_kept (e->d_name))
            continue;
        snprintf (path, sizeof path, "/dev/%s", e->d_name);
        if (lstat (path, &st) != 0 || !(S_ISCHR (st.st_mode) || S_ISDIR (st.st_mode)))
            continue;
        if (s_add (p, S_DEV, S_ISDIR (st.st_mode), path, NULL) != 0) {
            closedir (dev);
            return -1;
        }
    }
    if (dev)
        closedir (dev);
    static const char *const links[][2] = {
        { "/dev/fd", "/proc/self/fd" }, { "/dev/stdin", "/proc/self/fd/0" },
        { "/dev/stdout", "/proc/self/fd/1" }, { "/dev/stderr", "/proc/self/fd/2" },
    };
    for (size_t i = 0; i < sizeof links / sizeof links[0]; i++)
        if (s_add (p, S_SYMLINK, false, links[i][0], links[i][1]) != 0)
            return -1;
    snprintf (size, sizeof size, "size=%lum,nr_inodes=16384,mode=1777",
              (unsigned long) s_env_mb ("KF_SANDBOX_SHM_MB", S_DEFAULT_SHM_MB));
    return s_add (p, S_TMPFS, true, "/dev/shm", size);
}

static int
s_cmp (const void *a, const void *b)
{
    const s_entry_t *x = a, *y = b;
    int c = strcmp (x->path, y->path);
    return c ? c : (int) x->kind - (int) y->kind;
}

kf_sandbox_plan_t *
kf_sandbox_plan_new (const char *program, const char *workdir)
{
    kf_sandbox_plan_t *p = calloc (1, sizeof *p);
    if (!p)
        return NULL;
    p->userns = geteuid () != 0;
    snprintf (p->uid_map, sizeof p->uid_map, "%lu %lu 1\n", (unsigned long) geteuid (),
              (unsigned long) geteuid ());
    snprintf (p->gid_map, sizeof p->gid_map, "%lu %lu 1\n", (unsigned long) getegid (),
              (unsigned long) getegid ());
    //  The init is a copy of the worker: /proc/1/cmdline in the view would
    //  show the worker's arguments, unless the init clears them.
    char stat_text[1024];
    const char *f = kf_file_read_proc ("/proc/self/stat", stat_text, sizeof stat_text) > 0
                        ? kf_file_stat_field (stat_text, 48)
                        : NULL;
    unsigned long long a0 = 0, a1 = 0;
    if (f && sscanf (f, "%llu %llu", &a0, &a1) == 2 && a1 > a0) {
        p->arg_start = (uintptr_t) a0;
        p->arg_end = (uintptr_t) a1;
    }
    struct stat st;
    const char *staging[] = { "/tmp", "/mnt", "/dev", NULL };
    for (int i = 0; staging[i] && !p->staging[0]; i++)
        if (lstat (staging[i], &st) == 0 && S_ISDIR (st.st_mode))
            snprintf (p->staging, sizeof p->staging, "%s", staging[i]);

    //  The system, read-only; merged-/usr links stay links.
    static const char *const system[] = { "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64",
                                          "/libx32", "/etc", "/opt", "/sys", NULL };
    int rc = 0;
    for (int i = 0; system[i] && rc == 0; i++) {
        char link[256];
        ssize_t n;
        if (lstat (system[i], &st) != 0)
            continue;
        if (S_ISLNK (st.st_mode) && (n = readlink (system[i], link, sizeof link - 1)) > 0
            && link[0] != '/') {
            link[n] = 0;
            rc = s_add (p, S_SYMLINK, false, system[i], link);
        }
        else
            rc = s_add_host (p, system[i], false);
    }
    char tmp[64], self[PATH_MAX];
    snprintf (tmp, sizeof tmp, "size=%lum,nr_inodes=65536,mode=1777",
              (unsigned long) s_env_mb ("KF_SANDBOX_TMP_MB", S_DEFAULT_TMP_MB));
    ssize_t n = readlink ("/proc/self/exe", self, sizeof self - 1);
    if (n > 0)
        self[n] = 0;
    rc = rc ? rc : s_add (p, S_PROC, true, "/proc", NULL);
    rc = rc ? rc : s_add (p, S_TMPFS, true, "/tmp", tmp);
    rc = rc ? rc : s_add_devices (p);
    //  The program, this binary (a test binary or the worker, which an
    //  evaluation child runs again), the libraries the operator points at.
    rc = rc ? rc : s_add_program (p, program);
    rc = rc ? rc : s_add_program (p, n > 0 ? self : NULL);
    rc = rc ? rc : s_add_list (p, getenv ("LD_LIBRARY_PATH"), S_BIND_RO);
    rc = rc ? rc : s_add_list (p, getenv ("KF_SANDBOX_BIND"), S_BIND_RO);
    //  The GPU runtimes the operator named by path (kf_subproc_env_kept
    //  passes the variables on; the files must be there too).
    rc = rc ? rc : s_add_host (p, getenv ("KF_CUDART"), false);
    rc = rc ? rc : s_add_host (p, getenv ("KF_ZE_LOADER"), false);
    rc = rc ? rc : s_add_list (p, getenv ("KF_SANDBOX_SHARE"), S_BIND_RW);
    pthread_mutex_lock (&s_shared.lock);
    for (int i = 0; i < s_shared.n_share && rc == 0; i++)
        rc = s_add_host (p, s_shared.share[i], true);
    pthread_mutex_unlock (&s_shared.lock);
    if (rc == 0 && workdir) {
        char real[PATH_MAX];
        if (!realpath (workdir, real))
            rc = -1;
        else
            rc = s_add (p, S_BIND_RW, true, real, NULL);
        //  The jobs' folders sit side by side under the worker's TMPDIR:
        //  where that folder is inside a visible one (not the private
        //  /tmp), an empty tmpfs covers it, so no other job's is there.
        char *slash = rc == 0 ? strrchr (real, '/') : NULL;
        if (slash && slash != real) {
            *slash = 0;
            bool visible = false;
            for (int i = 0; i < p->n; i++)
                if ((p->e[i].kind == S_BIND_RO || p->e[i].kind == S_BIND_RW)
                    && s_under (real, p->e[i].path))
                    visible = true;
            if (visible)
                rc = s_add (p, S_TMPFS, true, real, "size=64k,nr_inodes=64,mode=0755");
        }
    }

    //  Secrets inside what is visible: the worker's CURVE key (NAME holds
    //  the public key, NAME_secret both), the operator's list, our config.
    pthread_mutex_lock (&s_shared.lock);
    for (int i = -1; i < s_shared.n_hide && rc == 0; i++) {
        const char *cert = i < 0 ? getenv ("KF_CURVE_CERT") : s_shared.hide[i];
        char secret[PATH_MAX + 8];
        if (!cert || !*cert || strchr (cert, ':'))
            continue;
        snprintf (secret, sizeof secret, "%s_secret", cert);
        rc = s_add_list (p, cert, S_HIDE);
        rc = rc ? rc : s_add_list (p, secret, S_HIDE);
    }
    pthread_mutex_unlock (&s_shared.lock);
    rc = rc ? rc : s_add_list (p, getenv ("KF_SANDBOX_HIDE"), S_HIDE);
    rc = rc ? rc : s_add_list (p, "/etc/kernelfoundry:/etc/ssh:/etc/ssl/private:/etc/shadow:"
                                  "/etc/gshadow:/etc/sudoers.d", S_HIDE);
    if (rc != 0) {
        kf_sandbox_plan_destroy (&p);
        return NULL;
    }
    //  A hidden path matters only under something visible; the job's own
    //  folder is never hidden.
    for (int i = 0; i < p->n; i++) {
        if (p->e[i].kind != S_HIDE)
            continue;
        bool visible = false;
        for (int k = 0; k < p->n && !visible; k++)
            if ((p->e[k].kind == S_BIND_RO || p->e[k].kind == S_BIND_RW)
                && s_under (p->e[i].path, p->e[k].path)
                && !(p->e[k].kind == S_BIND_RW && !strcmp (p->e[k].path, p->e[i].path)))
                visible = true;
        if (!visible)
            p->e[i--] = p->e[--p->n];
    }
    qsort (p->e, (size_t) p->n, sizeof *p->e, s_cmp);
    p->fds = malloc ((size_t) (p->n ? p->n : 1) * sizeof *p->fds);
    if (!p->fds || !p->staging[0]) {
        errno = p->fds ? ENOENT : ENOMEM;
        kf_sandbox_plan_destroy (&p);
        return NULL;
    }
    return p;
}

void
kf_sandbox_plan_destroy (kf_sandbox_plan_t **self_p)
{
    kf_sandbox_plan_t *self = KF_TAKE (self_p);
    if (self) {
        free (self->e);
        free (self->fds);
        free (self);
    }
}

// --------------------------------------------------------------------------
//  The child side: system calls only

static void
s_fail (int errfd, int stage)
{
    int msg[2] = { stage, errno };
    ssize_t rc = write (errfd, msg, sizeof msg);
    (void) rc;
    _exit (127);
}

//  DST = A then B, or -1 when it does not fit.
static int
s_join (char *dst, size_t size, const char *a, const char *b)
{
    size_t la = strlen (a), lb = strlen (b);
    if (la + lb + 1 > size) {
        errno = ENAMETOOLONG;
        return -1;
    }
    memcpy (dst, a, la);
    memcpy (dst + la, b, lb + 1);
    return 0;
}

static int
s_write_file (const char *path, const char *text)
{
    int fd = open (path, O_WRONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    ssize_t n = write (fd, text, strlen (text));
    int saved = errno;
    close (fd);
    errno = saved;
    return n == (ssize_t) strlen (text) ? 0 : -1;
}

//  mkdir -p PATH (a path in the view under construction).
static int
s_mkdirs (char *path)
{
    for (char *c = path + 1; ; c++) {
        if (*c == '/' || *c == 0) {
            char was = *c;
            *c = 0;
            int rc = mkdir (path, 0755);
            *c = was;
            if (rc != 0 && errno != EEXIST)
                return -1;
            if (!was)
                return 0;
        }
    }
}

//  A file to mount onto, and the folders above it.
static int
s_touch (char *path)
{
    struct stat st;
    if (lstat (path, &st) == 0)
        return 0;
    char *slash = strrchr (path, '/');
    if (slash && slash != path) {
        *slash = 0;
        int rc = s_mkdirs (path);
        *slash = '/';
        if (rc != 0)
            return -1;
    }
    int fd = open (path, O_WRONLY | O_CREAT | O_CLOEXEC, 0444);
    if (fd < 0)
        return -1;
    close (fd);
    return 0;
}

//  Sets ATTRS on the mount at PATH and every mount below it; on a kernel
//  before mount_setattr (5.12), a remount of the top one that keeps the
//  flags the kernel locks (a user namespace may not clear them).
static int
s_restrict (const char *path, uint64_t attrs)
{
    s_mount_attr_t attr = { .attr_set = attrs };
    if (syscall (SYS_mount_setattr, AT_FDCWD, path, AT_RECURSIVE, &attr, sizeof attr) == 0)
        return 0;
    if (errno != ENOSYS)
        return -1;
    struct statfs sf;
    if (statfs (path, &sf) != 0)
        return -1;
    unsigned long keep = (unsigned long) sf.f_flags & (MS_RDONLY | MS_NOSUID | MS_NODEV
                          | MS_NOEXEC | MS_NOATIME | MS_NODIRATIME | MS_RELATIME);
    unsigned long add = (attrs & MOUNT_ATTR_RDONLY ? MS_RDONLY : 0)
                        | (attrs & MOUNT_ATTR_NOSUID ? MS_NOSUID : 0)
                        | (attrs & MOUNT_ATTR_NODEV ? MS_NODEV : 0)
                        | (attrs & MOUNT_ATTR_NOEXEC ? MS_NOEXEC : 0);
    return mount (NULL, path, NULL, MS_REMOUNT | MS_BIND | keep | add, NULL);
}

static int
s_bind (const kf_sandbox_plan_t *p, int i, char *target)
{
    const s_entry_t *e = &p->e[i];
    if (p->fds[i] < 0)
        return 0;   //  gone since the plan was made
    if ((e->dir ? s_mkdirs (target) : s_touch (target)) != 0)
        return -1;
    char source[32] = "/proc/self/fd/";
    char num[12];
    int k = (int) sizeof num - 1, v = p->fds[i];
    num[k] = 0;
    do
        num[--k] = (char) ('0' + v % 10);
    while ((v /= 10) > 0);
    if (s_join (source, sizeof source, "/proc/self/fd/", num + k) != 0
        || mount (source, target, NULL, MS_BIND | MS_REC, NULL) != 0)
        return -1;
    uint64_t attrs = MOUNT_ATTR_NOSUID;
    if (e->kind == S_BIND_RO)
        attrs |= MOUNT_ATTR_RDONLY | MOUNT_ATTR_NODEV;
    else if (e->kind == S_BIND_RW)
        attrs |= MOUNT_ATTR_NODEV;
    else
        attrs |= MOUNT_ATTR_NOEXEC;     //  a device node or a folder of them
    return s_restrict (target, attrs);
}

//  Builds the view at the staging folder and turns it into the root.
static int
s_build (const kf_sandbox_plan_t *p)
{
    if (mount (NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0)
        return -1;
    //  Every source is opened before the staging mount covers its path.
    for (int i = 0; i < p->n; i++) {
        s_kind_t k = p->e[i].kind;
        p->fds[i] = k == S_BIND_RO || k == S_BIND_RW || k == S_DEV
                    ? open (p->e[i].path, O_PATH | O_CLOEXEC) : -1;
        if (p->fds[i] < 0 && k == S_BIND_RW)
            return -1;   //  the job's folder must be there
    }
    const char *s = p->staging;
    if (mount ("kf-sandbox", s, "tmpfs", MS_NOSUID | MS_NODEV, "size=1m,mode=0755") != 0)
        return -1;
    char empty_file[64], empty_dir[64], target[PATH_MAX + 64];
    if (s_join (empty_file, sizeof empty_file, s, "/.kf-hidden") != 0
        || s_join (empty_dir, sizeof empty_dir, s, "/.kf-hidden-dir") != 0
        || s_touch (empty_file) != 0 || mkdir (empty_dir, 0) != 0)
        return -1;
    for (int i = 0; i < p->n; i++) {
        const s_entry_t *e = &p->e[i];
        if (s_join (target, sizeof target, s, e->path) != 0)
            return -1;
        int rc = 0;
        switch (e->kind) {
        case S_BIND_RO:
        case S_BIND_RW:
        case S_DEV:
            rc = s_bind (p, i, target);
            break;
        case S_TMPFS:
            rc = s_mkdirs (target);
            if (rc == 0)
                rc = mount ("tmpfs", target, "tmpfs", MS_NOSUID | MS_NODEV, e->data);
            break;
        case S_SYMLINK: {
            char *slash = strrchr (target, '/');
            *slash = 0;
            rc = s_mkdirs (target);
            *slash = '/';
            if (rc == 0)
                rc = symlink (e->data, target);
            break;
        }
        case S_PROC:
            //  Needs the host's /proc still in view (a user namespace may
            //  mount proc only where one is already fully visible).
            rc = s_mkdirs (target);
            if (rc == 0)
                rc = mount ("proc", target, "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL);
            break;
        case S_HIDE:
            rc = mount (e->dir ? empty_dir : empty_file, target, NULL, MS_BIND, NULL);
            if (rc == 0)
                rc = s_restrict (target, MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID
                                         | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC);
            break;
        }
        if (rc != 0)
            return -1;
    }
    for (int i = 0; i < p->n; i++)
        if (p->fds[i] >= 0)
            close (p->fds[i]);
    if (unlink (empty_file) != 0 || rmdir (empty_dir) != 0)
        return -1;
    //  The host's root goes: pivot onto the staging folder, the old root
    //  stacked under it, then detached.
    if (chdir (s) != 0 || syscall (SYS_pivot_root, ".", ".") != 0
        || umount2 (".", MNT_DETACH) != 0 || chdir ("/") != 0)
        return -1;
    return mount (NULL, "/", NULL, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV,
                  NULL);
}

//  Whether the reading end of the pipe whose writing end is FD is closed:
//  the process that holds it is gone.
static bool
s_reader_gone (int fd)
{
    struct pollfd pf = { fd, POLLOUT, 0 };
    return poll (&pf, 1, 0) > 0 && (pf.revents & POLLERR);
}

//  Ends this process as STATUS (of a waited-for child) says: the same
//  exit code, or the same signal (never a core: this is the worker's copy).
static void
s_mirror (int status)
{
    if (WIFEXITED (status))
        _exit (WEXITSTATUS (status));
    int sig = WIFSIGNALED (status) ? WTERMSIG (status) : SIGKILL;
    struct rlimit none = { 0, 0 };
    setrlimit (RLIMIT_CORE, &none);
    struct sigaction dfl;
    memset (&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    sigaction (sig, &dfl, NULL);
    sigset_t set;
    sigemptyset (&set);
    sigaddset (&set, sig);
    sigprocmask (SIG_UNBLOCK, &set, NULL);
    kill (getpid (), sig);
    _exit (128 + sig);
}

//  The first process: outside the PID namespace, it waits for the init and
//  ends as the program did (the init reports the program's status: an
//  init cannot die of a signal it sends itself).
static void
s_first (pid_t init, int status_fd)
{
    syscall (SYS_close_range, 0u, (unsigned) status_fd - 1, 0u);
    syscall (SYS_close_range, (unsigned) status_fd + 1, ~0u, 0u);
    int status = 0, own = 0;
    ssize_t n;
    do
        n = read (status_fd, &status, sizeof status);
    while (n < 0 && errno == EINTR);
    while (waitpid (init, &own, 0) < 0 && errno == EINTR)
        ;
    s_mirror (n == (ssize_t) sizeof status ? status : own);
}

//  The init: reaps every orphan, and when the program ends reports its
//  status and ends, which ends the namespace.
static void
s_init (const kf_sandbox_plan_t *plan, pid_t program, int status_fd)
{
    if (plan->arg_end > plan->arg_start)
        memset ((void *) plan->arg_start, 0, plan->arg_end - plan->arg_start);
    syscall (SYS_close_range, 0u, (unsigned) status_fd - 1, 0u);
    syscall (SYS_close_range, (unsigned) status_fd + 1, ~0u, 0u);
    for (;;) {
        int status;
        pid_t got = waitpid (-1, &status, 0);
        if (got == program) {
            ssize_t rc = write (status_fd, &status, sizeof status);
            (void) rc;
            _exit (0);
        }
        if (got < 0 && errno != EINTR)
            _exit (0);
    }
}

int
kf_sandbox_enter (const kf_sandbox_plan_t *plan, pid_t parent, int errfd)
{
    int flags = CLONE_NEWNS | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWPID;
    if (plan->userns)
        flags |= CLONE_NEWUSER;
    if (unshare (flags) != 0)
        return -1;
    //  Outside the PID namespace still: die with the worker.
    prctl (PR_SET_PDEATHSIG, SIGKILL);
    if (getppid () != parent)
        _exit (126);
    if (plan->userns) {
        //  Our own map may be written only while we are dumpable (the
        //  worker made itself not, and /proc/self is then root's).
        prctl (PR_SET_DUMPABLE, 1, 0, 0, 0);
        if ((s_write_file ("/proc/self/setgroups", "deny") != 0 && errno != ENOENT)
            || s_write_file ("/proc/self/uid_map", plan->uid_map) != 0
            || s_write_file ("/proc/self/gid_map", plan->gid_map) != 0)
            s_fail (errfd, KF_SANDBOX_STAGE_NS);
        prctl (PR_SET_DUMPABLE, 0, 0, 0, 0);
    }
    int status[2];
    if (pipe2 (status, O_CLOEXEC) != 0)
        s_fail (errfd, KF_SANDBOX_STAGE_INIT);
    pid_t init = fork ();
    if (init < 0)
        s_fail (errfd, KF_SANDBOX_STAGE_INIT);
    if (init > 0)
        s_first (init, status[0]);

    //  The init, pid 1 of the new namespace.
    close (status[0]);
    prctl (PR_SET_PDEATHSIG, SIGKILL);
    if (s_reader_gone (status[1]))
        _exit (126);
    if (s_build (plan) != 0)
        s_fail (errfd, KF_SANDBOX_STAGE_VIEW);
    pid_t program = fork ();
    if (program < 0)
        s_fail (errfd, KF_SANDBOX_STAGE_INIT);
    if (program == 0) {
        prctl (PR_SET_PDEATHSIG, SIGKILL);
        return 0;
    }
    s_init (plan, program, status[1]);
    return -1;
}

