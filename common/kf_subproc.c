/*  kf_subproc.c - run a program in a sandboxed child process.
 *
 *  Every compiler run and every evaluation goes through here, so this is
 *  the one place that decides what a misbehaving candidate can do to the
 *  host: it gets its own process group (the whole group is killed on the
 *  wall-clock limit and again after the leader ends), resource limits, no
 *  network where the kernel lets us unshare it, and, when the worker runs
 *  as root, an unprivileged uid - root ignores RLIMIT_NPROC, so without
 *  the drop a fork bomb would take the host.
 *
 *  That uid is the run's own, from a pool: RLIMIT_NPROC counts processes
 *  per uid, so with one shared sandbox user a fork bomb in one evaluation
 *  made a concurrent job's compiler fail to fork. And a uid that only one
 *  run holds can be emptied when the run ends: every process still
 *  running as it is killed, whatever process group or session it moved
 *  to, before the uid goes back to the pool. Other worker processes on the
 *  host (a compile and an exec worker side by side) draw from the same
 *  range, so a taken uid is also locked with flock in a root-only
 *  directory; a worker that dies drops its locks with it, and the next
 *  holder kills what the dead one's runs left.
 *
 *  Job threads call this concurrently, so the child does only
 *  async-signal-safe work between fork and exec: everything it needs
 *  (environment, argv) is prepared in the parent first, and every pipe is
 *  close-on-exec so a sibling job's child cannot hold our pipe open.
 */
#include "kf_subproc.h"
#include "kf_log.h"
#include "kf_sandbox.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <grp.h>
#include <math.h>
#include <poll.h>
#include <pthread.h>
#include <pwd.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

static double
s_now (void)
{
    struct timespec ts;
    clock_gettime (CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

void
kf_subproc_limits_default (kf_subproc_limits_t *limits)
{
    memset (limits, 0, sizeof *limits);
    limits->time_limit_s = 10;
    limits->output_cap = 64 * 1024;
    limits->memory_bytes = (size_t) 4 << 30;
    limits->file_bytes = (size_t) 256 << 20;
    limits->max_procs = 64;
    limits->no_network = true;
    if (geteuid () != 0)
        return;
    limits->drop_privileges = true;

    //  uid 0 (left so) means a uid of the pool, taken when the run starts.
    const char *user = getenv ("KF_SANDBOX_USER");
    if (!user || !*user)
        return;
    //  An operator's explicit choice of one account for every run.
    //  getpwnam_r because job threads fill limits concurrently.
    struct passwd pw, *found = NULL;
    char buf[4096];
    if (getpwnam_r (user, &pw, buf, sizeof buf, &found) == 0 && found) {
        limits->uid = found->pw_uid;
        limits->gid = found->pw_gid;
    }
    else {
        //  An unknown user must not silently mean "stay root" (nor the
        //  pool, which the operator chose against); fall back to the
        //  conventional overflow ids, which own nothing.
        limits->uid = 65534;
        limits->gid = 65534;
    }
}

//  ---------------------------------------------------------------------
//  The uid pool

#define S_POOL_MAX          4096
#define S_UID_BASE_DEFAULT  2000000000ULL
#define S_UID_COUNT_DEFAULT 64
#define S_LOCK_DIR          "/run/kf-sandbox"
//  How long a run's end waits for the processes of its uid to die (they
//  have SIGKILL; only one stuck in the kernel takes longer).
#define S_KILL_WAIT_S       5.0
//  How soon a free uid that still had processes (zombies waiting for
//  init to reap them count against RLIMIT_NPROC) is tried again.
#define S_DIRTY_RETRY_S     0.1

typedef enum { S_FREE = 0, S_BUSY, S_RETIRED } s_slot_state_t;

typedef struct {
    s_slot_state_t state;
    int lock_fd;             //  its flock, held while busy or retired
    double retry_at;         //  free but still had processes: not before
    bool clean;              //  we emptied it last, and wrote MARK then
    char mark[48];
} s_slot_t;

static struct {
    pthread_once_t once;
    pthread_mutex_t lock;
    pthread_cond_t freed;    //  on CLOCK_MONOTONIC
    int error;               //  errno for a pool that cannot be used
    uid_t base;
    int size;
    int next;                //  round robin, so a uid rests between runs
    unsigned long marks;     //  numbers the marks this process writes
    int dir_fd;              //  S_LOCK_DIR (or KF_SANDBOX_LOCK_DIR), where uids are locked
    s_slot_t slots[S_POOL_MAX];
} s_pool = { .once = PTHREAD_ONCE_INIT, .lock = PTHREAD_MUTEX_INITIALIZER };

//  Reads NAME as a decimal number from LO to HI, DEFAULT when unset.
static int
s_env_number (const char *name, unsigned long long lo, unsigned long long hi,
              unsigned long long dflt, unsigned long long *value)
{
    const char *text = getenv (name);
    *value = dflt;
    if (!text || !*text)
        return 0;
    char *end = NULL;
    errno = 0;
    unsigned long long n = strtoull (text, &end, 10);
    if (errno || *end || *text < '0' || *text > '9' || n < lo || n > hi) {
        kf_error ("%s=%s: want a number from %llu to %llu; no sandboxed run can start",
                  name, text, lo, hi);
        return -1;
    }
    *value = n;
    return 0;
}

//  Whether ids FIRST..FIRST+COUNT-1 lie in one extent of MAP_FILE
//  (/proc/self/uid_map or gid_map): in a user namespace that maps only a
//  few ids (a rootless container), setuid to an unmapped one fails.
static bool
s_ids_mapped (const char *map_file, unsigned long long first, unsigned long long count)
{
    FILE *f = fopen (map_file, "re");
    if (!f)
        return true;   //  no user namespaces here: every id exists
    unsigned long long inside, outside, length;
    bool mapped = false;
    while (!mapped && fscanf (f, "%llu %llu %llu", &inside, &outside, &length) == 3)
        mapped = first >= inside && first + count <= inside + length;
    fclose (f);
    return mapped;
}

static void
s_pool_init (void)
{
    pthread_condattr_t attr;
    pthread_condattr_init (&attr);
    pthread_condattr_setclock (&attr, CLOCK_MONOTONIC);
    pthread_cond_init (&s_pool.freed, &attr);
    pthread_condattr_destroy (&attr);
    s_pool.dir_fd = -1;
    for (int i = 0; i < S_POOL_MAX; i++)
        s_pool.slots[i].lock_fd = -1;

    //  The default base sits in a range no convention hands out: above
    //  regular and system accounts, nobody (65534), systemd's dynamic
    //  users, the usual /etc/subuid ranges (100000 up, 65536 a user) and
    //  systemd-nspawn's container ranges (to 0x6FFFFFFF), below 2^31.
    unsigned long long base, size;
    if (s_env_number ("KF_SANDBOX_UID_BASE", 1, 0xFFFFFFFEULL, S_UID_BASE_DEFAULT, &base)
        || s_env_number ("KF_SANDBOX_UID_COUNT", 1, S_POOL_MAX, S_UID_COUNT_DEFAULT, &size)) {
        s_pool.error = EINVAL;
        return;
    }
    if (base + size - 1 > 0xFFFFFFFEULL) {
        kf_error ("KF_SANDBOX_UID_BASE %llu + KF_SANDBOX_UID_COUNT %llu pass the last uid; "
                  "no sandboxed run can start", base, size);
        s_pool.error = EINVAL;
        return;
    }
    if (!s_ids_mapped ("/proc/self/uid_map", base, size)
        || !s_ids_mapped ("/proc/self/gid_map", base, size)) {
        kf_error ("sandbox uids %llu-%llu are not all mapped in this user namespace "
                  "(/proc/self/uid_map, gid_map): set KF_SANDBOX_UID_BASE inside the "
                  "mapped range; no sandboxed run can start", base, base + size - 1);
        s_pool.error = EINVAL;
        return;
    }
    s_pool.base = (uid_t) base;
    s_pool.size = (int) size;

    //  Root-only, so no sandboxed child can take or hold a lock. Without
    //  it workers on one host would hand out the same uids (and each
    //  run's end would kill the other's processes): no run rather than
    //  that. KF_SANDBOX_LOCK_DIR names another folder, one the host's
    //  workers share (a container's own /run is not).
    const char *dir = getenv ("KF_SANDBOX_LOCK_DIR");
    if (!dir || !*dir)
        dir = S_LOCK_DIR;
    int fd = -1;
    struct stat st;
    if (mkdir (dir, 0700) != 0 && errno != EEXIST)
        kf_error ("cannot make %s (%s): sandbox uids could not be shared safely with other "
                  "workers on this host; no sandboxed run can start", dir, strerror (errno));
    else if ((fd = open (dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0
             || fstat (fd, &st) != 0 || st.st_uid != geteuid () || (st.st_mode & 022) != 0) {
        kf_error ("%s is not a directory only root can write: sandbox uids could not be "
                  "shared safely with other workers on this host; no sandboxed run can start",
                  dir);
        if (fd >= 0)
            close (fd);
        fd = -1;
    }
    if (fd < 0) {
        s_pool.error = EACCES;
        return;
    }
    s_pool.dir_fd = fd;
}

int
kf_subproc_uid_pool (uid_t *base, int *size)
{
    const char *user = getenv ("KF_SANDBOX_USER");
    if (geteuid () != 0 || (user && *user))
        return -1;
    pthread_once (&s_pool.once, s_pool_init);
    if (s_pool.error) {
        errno = s_pool.error;
        return -1;
    }
    *base = s_pool.base;
    *size = s_pool.size;
    return 0;
}

//  Replaces the content of the lock file FD with TEXT.
static void
s_mark_write (int fd, const char *text)
{
    if (ftruncate (fd, 0) != 0 || pwrite (fd, text, strlen (text), 0) < 0)
        return;   //  then the next reader sees a mismatch: a kill it did not need
}

//  Locks slot I's uid against other worker processes. Pool lock held.
//  Every holder writes its mark into the lock file, so a uid this process
//  emptied at its last release stays known to be empty only while the
//  file still holds the mark written then: nobody has held it since.
static int
s_slot_lock (int i)
{
    s_slot_t *s = &s_pool.slots[i];
    if (s_pool.dir_fd < 0)
        return -1;   //  never: the pool is unusable without its folder
    char name[16];
    snprintf (name, sizeof name, "%u", (unsigned) (s_pool.base + (uid_t) i));
    int fd = openat (s_pool.dir_fd, name, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0)
        return -1;
    if (flock (fd, LOCK_EX | LOCK_NB) != 0) {
        close (fd);
        return -1;
    }
    char seen[sizeof s->mark] = "";
    ssize_t n = pread (fd, seen, sizeof seen - 1, 0);
    seen[n > 0 ? n : 0] = 0;
    if (strcmp (seen, s->mark) != 0)
        s->clean = false;
    snprintf (s->mark, sizeof s->mark, "held by %ld #%lu\n", (long) getpid (), ++s_pool.marks);
    s_mark_write (fd, s->mark);
    s->lock_fd = fd;
    return 0;
}

static void
s_slot_unlock (int i)
{
    s_slot_t *s = &s_pool.slots[i];
    if (s->lock_fd >= 0) {
        if (s->clean) {
            snprintf (s->mark, sizeof s->mark, "emptied by %ld #%lu\n", (long) getpid (),
                      ++s_pool.marks);
            s_mark_write (s->lock_fd, s->mark);
        }
        close (s->lock_fd);
    }
    s->lock_fd = -1;
}

//  Kills every process of UID and says whether UID is left with none:
//  0 none, 1 some (dying, zombies, or one that got in first), -1 no
//  helper. The helper becomes UID, because kill(-1) from a user signals
//  exactly that user's processes - wherever they moved, and atomically
//  with respect to their forks (a fork that races the kill is undone).
//  It then counts them with RLIMIT_NPROC: at 2, its own fork succeeds
//  only while it and the new child are all there is. kill(-1) itself
//  cannot tell: it succeeds whenever any process exists.
static int
s_kill_uid (uid_t uid, gid_t gid)
{
    if (uid == 0)
        return -1;   //  kill(-1) as root would end the host
    pid_t pid = fork ();
    if (pid == 0) {
        //  Only async-signal-safe calls: other threads may hold locks.
        struct rlimit any = { RLIM_INFINITY, RLIM_INFINITY };
        struct rlimit two = { 2, 2 };
        setrlimit (RLIMIT_NPROC, &any);
        if (setgroups (0, NULL) != 0 || setgid (gid) != 0 || setuid (uid) != 0
            || getuid () != uid || geteuid () != uid || setuid (0) == 0)
            _exit (3);
        kill (-1, SIGKILL);
        if (setrlimit (RLIMIT_NPROC, &two) != 0)
            _exit (3);
        //  vfork: no copy of the worker's page tables for a child that
        //  only ends (with the bare system call: no exit hooks run in
        //  memory it shares with the helper).
        pid_t probe = vfork ();
        if (probe == 0)
            syscall (SYS_exit_group, 0);
        if (probe < 0)
            _exit (errno == EAGAIN ? 1 : 3);
        waitpid (probe, NULL, 0);
        _exit (0);
    }
    if (pid < 0)
        return -1;
    int status = 0;
    while (waitpid (pid, &status, 0) < 0)
        if (errno != EINTR)
            return -1;
    if (WIFSIGNALED (status))
        return 1;    //  a process of UID killed the helper first
    if (!WIFEXITED (status) || WEXITSTATUS (status) > 1)
        return -1;
    return WEXITSTATUS (status);
}

//  Whether a process whose real or saved uid is UID is still running
//  (zombies are dead; they wait only for their parent, often init).
static bool
s_uid_running (uid_t uid)
{
    DIR *proc = opendir ("/proc");
    if (!proc)
        return false;   //  cannot tell; every one of them has SIGKILL
    bool found = false;
    struct dirent *e;
    while (!found && (e = readdir (proc)) != NULL) {
        if (e->d_name[0] < '1' || e->d_name[0] > '9')
            continue;
        char path[300], buf[2048];
        snprintf (path, sizeof path, "/proc/%s/status", e->d_name);
        int fd = open (path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
            continue;
        ssize_t n = read (fd, buf, sizeof buf - 1);
        close (fd);
        if (n <= 0)
            continue;
        buf[n] = 0;
        const char *state = strstr (buf, "\nState:\t");
        const char *ids = strstr (buf, "\nUid:\t");
        unsigned long real, effective, saved;
        if (!state || !ids
            || sscanf (ids, "\nUid:\t%lu\t%lu\t%lu", &real, &effective, &saved) != 3)
            continue;
        if (state[8] != 'Z' && state[8] != 'X')
            found = real == uid || saved == uid;
    }
    closedir (proc);
    return found;
}

//  Kills UID's processes until none runs. 0 when none is left, 1 when
//  only the dead are (not reaped yet), -1 when some would not die.
static int
s_empty_uid (uid_t uid, gid_t gid)
{
    double until = s_now () + S_KILL_WAIT_S;
    for (;;) {
        int rc = s_kill_uid (uid, gid);
        if (rc == 0)
            return 0;
        if (rc > 0 && !s_uid_running (uid))
            return 1;
        if (s_now () >= until)
            return -1;
        struct timespec pause = { 0, 2 * 1000 * 1000 };
        nanosleep (&pause, NULL);
    }
}

//  Takes a uid of the pool for one run, waiting while none is free, and
//  empties it of anything a crashed holder's runs left. Returns its slot,
//  or -1 with errno.
static int
s_pool_take (void)
{
    pthread_once (&s_pool.once, s_pool_init);
    if (s_pool.error) {
        errno = s_pool.error;
        return -1;
    }
    double since = s_now ();
    bool warned = false;
    pthread_mutex_lock (&s_pool.lock);
    for (;;) {
        int slot = -1;
        bool soon = false;   //  a uid may come free without our signal
        double now = s_now ();
        for (int k = 0; k < s_pool.size && slot < 0; k++) {
            int i = (s_pool.next + k) % s_pool.size;
            s_slot_t *s = &s_pool.slots[i];
            if (s->state != S_FREE)
                continue;
            if (s->retry_at > now || s_slot_lock (i) != 0)
                soon = true;   //  still emptying, or another worker's
            else
                slot = i;
        }
        if (slot >= 0) {
            s_slot_t *s = &s_pool.slots[slot];
            s->state = S_BUSY;
            s_pool.next = (slot + 1) % s_pool.size;
            if (s->clean) {
                //  We emptied it and no one has held it since.
                s->clean = false;
                pthread_mutex_unlock (&s_pool.lock);
                return slot;
            }
            //  Perhaps a worker that died while holding it left processes.
            pthread_mutex_unlock (&s_pool.lock);
            uid_t uid = s_pool.base + (uid_t) slot;
            int rc = s_kill_uid (uid, (gid_t) uid);   //  it forks: not under the lock
            pthread_mutex_lock (&s_pool.lock);
            if (rc == 0) {
                pthread_mutex_unlock (&s_pool.lock);
                return slot;
            }
            s_slot_unlock (slot);
            s->state = S_FREE;
            s->retry_at = s_now () + S_DIRTY_RETRY_S;
            pthread_cond_broadcast (&s_pool.freed);
            if (rc < 0) {
                pthread_mutex_unlock (&s_pool.lock);
                errno = EAGAIN;
                return -1;
            }
            continue;
        }
        if (!warned && s_now () - since > 10) {
            kf_warn ("a sandboxed run has waited 10 s for one of the %d sandbox uids "
                     "(KF_SANDBOX_UID_COUNT)", s_pool.size);
            warned = true;
        }
        //  Timed even when only our own runs hold them all, so that the
        //  warning above comes when it is due.
        long wait_ns = soon ? 20 * 1000 * 1000 : 500 * 1000 * 1000;
        struct timespec until;
        clock_gettime (CLOCK_MONOTONIC, &until);
        until.tv_nsec += wait_ns;
        if (until.tv_nsec >= 1000 * 1000 * 1000) {
            until.tv_sec++;
            until.tv_nsec -= 1000 * 1000 * 1000;
        }
        pthread_cond_timedwait (&s_pool.freed, &s_pool.lock, &until);
    }
}

//  Gives SLOT back. LEFT is what s_empty_uid said: a uid whose processes
//  would not die is retired (and stays locked) rather than handed out.
static void
s_pool_give (int slot, int left)
{
    pthread_mutex_lock (&s_pool.lock);
    s_slot_t *s = &s_pool.slots[slot];
    if (left < 0) {
        s->state = S_RETIRED;
        kf_error ("sandbox uid %u still has processes that SIGKILL did not end; "
                  "it is not used again by this worker",
                  (unsigned) (s_pool.base + (uid_t) slot));
    }
    else {
        s->clean = left == 0;
        s_slot_unlock (slot);
        s->state = S_FREE;
        s->retry_at = left > 0 ? s_now () + S_DIRTY_RETRY_S : 0;
    }
    pthread_cond_broadcast (&s_pool.freed);
    pthread_mutex_unlock (&s_pool.lock);
}

//  ---------------------------------------------------------------------
//  Handing the working directory to the run's uid and back

//  Deeper than any compiler or evaluation nests; past it nothing moves
//  (the worker, root, can still read and remove it).
#define S_WALK_DEPTH 64

//  Gives the inode at FD (open with O_PATH, or a directory) with ST to
//  TO:GID when FROM owns it. Never through a link: FD came from
//  O_NOFOLLOW, and a child's processes are all dead or locked out (the
//  top directory is 0700) while this runs. Returns whether it moved.
static bool
s_move_inode (int fd, const struct stat *st, uid_t from, uid_t to, gid_t gid,
              bool to_sandbox)
{
    if (st->st_uid != from)
        return false;   //  not the job's; perhaps another uid's
    //  A non-directory with several names may be a hard link the child
    //  made to a file that is not the job's (no rights on the file are
    //  needed where fs.protected_hardlinks is 0): never give such a file
    //  to a sandbox uid. Back to the worker is safe.
    if (to_sandbox && !S_ISDIR (st->st_mode) && st->st_nlink > 1)
        return false;
    if (fchownat (fd, "", to, gid, AT_EMPTY_PATH) != 0)
        return false;
    //  No set-id bits (chown clears them on files; directories too), and
    //  nothing others may write through a name they kept.
    mode_t bad = S_ISUID | S_ISGID | S_IWGRP | S_IWOTH;
    if ((S_ISREG (st->st_mode) || S_ISDIR (st->st_mode)) && (st->st_mode & bad)) {
        char path[40];
        snprintf (path, sizeof path, "/proc/self/fd/%d", fd);
        if (chmod (path, st->st_mode & 07777 & ~bad) != 0)
            return false;
    }
    return true;
}

//  Moves what is in the directory open at DIR_FD (which it takes).
static void
s_move_entries (int dir_fd, uid_t from, uid_t to, gid_t gid, bool to_sandbox, int depth)
{
    DIR *dir = fdopendir (dir_fd);
    if (!dir) {
        close (dir_fd);
        return;
    }
    struct dirent *e;
    while ((e = readdir (dir)) != NULL) {
        if (!strcmp (e->d_name, ".") || !strcmp (e->d_name, ".."))
            continue;
        int fd = openat (dirfd (dir), e->d_name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0)
            continue;
        struct stat st;
        if (fstat (fd, &st) == 0 && s_move_inode (fd, &st, from, to, gid, to_sandbox)
            && S_ISDIR (st.st_mode) && depth < S_WALK_DEPTH) {
            int sub = openat (fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
            if (sub >= 0)
                s_move_entries (sub, from, to, gid, to_sandbox, depth + 1);
        }
        close (fd);
    }
    closedir (dir);
}

//  Gives DIR and everything in it that FROM owns to TO:GID, DIR itself
//  0700 so that no other uid enters. Towards the sandbox only a private
//  directory of the worker's moves (a caller's mistake must not hand a
//  shared one, /tmp say, to a candidate); back from it, whatever the
//  child made of the modes.
static void
s_move_tree (const char *dir, uid_t from, uid_t to, gid_t gid, bool to_sandbox)
{
    int fd = open (dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return;
    struct stat st;
    if (fstat (fd, &st) != 0 || st.st_uid != from
        || (to_sandbox && (st.st_mode & 077) != 0)
        || fchmod (fd, 0700) != 0 || fchown (fd, to, gid) != 0) {
        close (fd);
        return;
    }
    s_move_entries (fd, from, to, gid, to_sandbox, 1);
}

//  The child's environment, built in the parent (setenv is not
//  async-signal-safe): the caller's, with TMPDIR pointing at the workdir
//  so compiler temporaries stay inside the job's private directory, and,
//  when the child drops to a sandbox uid, USER and LOGNAME naming it. A
//  pool uid has no passwd entry, and programs that ask who they are
//  (Python's getpass.getuser, which torch.compile's cache path uses) read
//  those first rather than fail. The strings it formats go in OWNED.
typedef struct {
    char tmpdir[4096 + 8];
    char home[4096 + 8];
    char user[64 + 8];
    char logname[64 + 8];
} s_env_owned_t;

bool
kf_subproc_env_kept (const char *entry)
{
    static const char *const kept[] = {
        "PATH=", "HOME=", "LANG=", "LANGUAGE=", "LC_", "TZ=", "TERM=", "USER=", "LOGNAME=",
        "LD_LIBRARY_PATH=", "CUDA_", "NVIDIA_", "ZE_", "SYCL_", "OMP_", "GOMP_", "KMP_",
        "MKL_", "OPENBLAS_", "PYTHON", "TORCH", "TRITON_", "XDG_CACHE_HOME=", "ASAN_OPTIONS=",
        "LSAN_OPTIONS=", "UBSAN_OPTIONS=", "KF_CUDART=", "KF_ZE_LOADER=", NULL
    };
    for (int i = 0; kept[i]; i++)
        if (strncmp (entry, kept[i], strlen (kept[i])) == 0)
            return true;
    return false;
}

//  The child's environment: the allow-list (or all of ours for a trusted
//  program), TMPDIR its working directory, USER and LOGNAME its uid's;
//  in a private view (ISOLATED) HOME is the working directory too, since
//  the worker's home is not in it.
static char **
s_child_env (const kf_subproc_limits_t *limits, bool isolated, s_env_owned_t *owned)
{
    size_t n = 0;
    while (environ && environ[n])
        n++;
    char **env = calloc (n + 5, sizeof *env);
    if (!env)
        return NULL;
    bool named = limits->drop_privileges && geteuid () == 0;
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (limits->workdir && strncmp (environ[i], "TMPDIR=", 7) == 0)
            continue;
        if (isolated && limits->workdir && strncmp (environ[i], "HOME=", 5) == 0)
            continue;
        if (named && (strncmp (environ[i], "USER=", 5) == 0
                      || strncmp (environ[i], "LOGNAME=", 8) == 0))
            continue;
        if (!limits->keep_env && !kf_subproc_env_kept (environ[i]))
            continue;
        env[k++] = environ[i];
    }
    if (limits->workdir) {
        if ((size_t) snprintf (owned->tmpdir, sizeof owned->tmpdir, "TMPDIR=%s",
                               limits->workdir) >= sizeof owned->tmpdir) {
            free (env);
            errno = ENAMETOOLONG;
            return NULL;
        }
        env[k++] = owned->tmpdir;
        if (isolated) {
            snprintf (owned->home, sizeof owned->home, "HOME=%s", limits->workdir);
            env[k++] = owned->home;
        }
    }
    if (named) {
        char name[64];
        struct passwd pw, *found = NULL;
        char buf[4096];
        if (getpwuid_r (limits->uid, &pw, buf, sizeof buf, &found) == 0 && found)
            snprintf (name, sizeof name, "%s", found->pw_name);
        else
            snprintf (name, sizeof name, "kf-sandbox-%lu", (unsigned long) limits->uid);
        snprintf (owned->user, sizeof owned->user, "USER=%s", name);
        snprintf (owned->logname, sizeof owned->logname, "LOGNAME=%s", name);
        env[k++] = owned->user;
        env[k++] = owned->logname;
    }
    env[k] = NULL;
    return env;
}

static void
s_limit (int resource, rlim_t value)
{
    struct rlimit rl = { value, value };
    setrlimit (resource, &rl);
}

//  Reports errno to the parent through the close-on-exec error pipe and
//  ends the child. Only async-signal-safe calls.
static void
s_child_fail (int errfd, int stage)
{
    int msg[2] = { stage, errno };
    ssize_t rc = write (errfd, msg, sizeof msg);
    (void) rc;
    _exit (127);
}

static void
s_child (char *const argv[], char **env, const kf_subproc_limits_t *limits,
         bool no_new_privs, const kf_sandbox_plan_t *plan, pid_t parent, int outfd,
         int errfd)
{
    setpgid (0, 0);
    //  The parent may have blocked or ignored signals; a candidate should
    //  start with the defaults.
    sigset_t none;
    sigemptyset (&none);
    sigprocmask (SIG_SETMASK, &none, NULL);
    signal (SIGPIPE, SIG_DFL);

    int devnull = open ("/dev/null", O_RDONLY);
    if (devnull >= 0) {
        dup2 (devnull, 0);
        if (devnull > 2)
            close (devnull);
    }
    if (dup2 (outfd, 1) < 0 || dup2 (outfd, 2) < 0)
        s_child_fail (errfd, 1);
    if (limits->pass_fd > 2) {
        //  The error pipe may sit on fd 3 itself: move it out of the way.
        if (errfd == 3 && (errfd = fcntl (errfd, F_DUPFD_CLOEXEC, 4)) < 0)
            _exit (127);
        int rc = limits->pass_fd == 3 ? fcntl (3, F_SETFD, 0) : dup2 (limits->pass_fd, 3);
        if (rc < 0)
            s_child_fail (errfd, 1);
    }

    if (plan) {
        //  The sandbox's first two processes never exec: they must not
        //  keep a copy of any other descriptor of the worker's (another
        //  job's pipe would not reach its end until this run's did).
        if (errfd != 4 && (dup3 (errfd, 4, O_CLOEXEC) < 0 || (errfd = 4) < 0))
            _exit (127);
        if (limits->pass_fd <= 2)
            close (3);
        syscall (SYS_close_range, 5u, ~0u, 0u);
        if (kf_sandbox_enter (plan, parent, errfd) != 0)
            s_child_fail (errfd, KF_SANDBOX_STAGE_NS);
    }
    //  Needs CAP_SYS_ADMIN, so before the drop; EPERM (no privilege,
    //  or a container that forbids it) just leaves the network as is.
    else if (limits->no_network)
        unshare (CLONE_NEWNET);

    if (limits->workdir && chdir (limits->workdir) != 0)
        s_child_fail (errfd, 2);

    if (limits->memory_bytes)
        s_limit (RLIMIT_AS, limits->memory_bytes);
    if (limits->file_bytes)
        s_limit (RLIMIT_FSIZE, limits->file_bytes);
    if (limits->max_procs > 0)
        s_limit (RLIMIT_NPROC, (rlim_t) limits->max_procs);
    if (limits->time_limit_s > 0) {
        //  A second line of defence behind the wall clock: a CPU hog that
        //  somehow escapes the group kill still dies. The limit counts
        //  every thread's time, so it is the wall limit on every core: a
        //  harness with a thread per core (or a GPU runtime's busy wait
        //  beside it) would otherwise be killed long before its wall
        //  limit, as every sweep config at 16384 x 4096 on the H200 was.
        long cores = sysconf (_SC_NPROCESSORS_ONLN);
        s_limit (RLIMIT_CPU, (rlim_t) (ceil (limits->time_limit_s) * (cores > 0 ? cores : 1)) + 1);
    }
    s_limit (RLIMIT_CORE, 0);

    if (limits->drop_privileges && geteuid () == 0) {
        if (setgroups (0, NULL) != 0)
            s_child_fail (errfd, 3);
        if (setgid (limits->gid) != 0)
            s_child_fail (errfd, 3);
        if (setuid (limits->uid) != 0)
            s_child_fail (errfd, 3);
        //  Paranoia: if the drop did not stick we must not run as root.
        if (setuid (0) == 0)
            s_child_fail (errfd, 3);
        //  With uids that pass from run to run, a set-user-id file one run
        //  leaves behind (in /tmp, say) would let a later run become that
        //  uid while a third holds it: no set-id exec at all.
        if (no_new_privs && prctl (PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
            s_child_fail (errfd, 3);
    }
    //  In the sandbox no set-id program raises anyone either.
    if (plan && prctl (PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
        s_child_fail (errfd, 3);
    //  A worker killed with -9 must not leave its candidate running: die
    //  with the parent. Set last, because a credential change clears it.
    //  (In the sandbox the parent is the namespace's init, pid 1, whose
    //  end kills every process of the namespace.)
    prctl (PR_SET_PDEATHSIG, SIGKILL);
    if (!plan && getppid () == 1)
        _exit (126);   //  the parent died before the line above
    execvpe (argv[0], argv, env);
    s_child_fail (errfd, 4);
}

//  pidfd_open lets poll() wake on the child's exit as well as on output;
//  on kernels without it we fall back to short poll slices.
static int
s_pidfd_open (pid_t pid)
{
#ifdef SYS_pidfd_open
    return (int) syscall (SYS_pidfd_open, pid, 0);
#else
    (void) pid;
    errno = ENOSYS;
    return -1;
#endif
}

static int
s_run_once (char *const argv[], const kf_subproc_limits_t *limits, bool no_new_privs,
            kf_subproc_result_t *result)
{
    memset (result, 0, sizeof *result);
    result->exit_code = -1;
    if (!argv || !argv[0] || !limits) {
        errno = EINVAL;
        return -1;
    }
    result->uid = limits->drop_privileges && geteuid () == 0 ? limits->uid : geteuid ();

    size_t cap = limits->output_cap;
    result->output = malloc (cap + 1);
    if (!result->output)
        return -1;
    result->output[0] = 0;

    //  The operator's own program (keep_env) sees the host as the worker
    //  does; everything else gets namespaces and a private view.
    kf_sandbox_plan_t *plan = NULL;
    bool isolated = kf_sandbox_isolation () && !limits->keep_env;
    if (isolated && !(plan = kf_sandbox_plan_new (argv[0], limits->workdir))) {
        kf_subproc_result_free (result);
        return -1;
    }
    s_env_owned_t owned;
    char **env = s_child_env (limits, isolated, &owned);
    int outp[2] = { -1, -1 }, errp[2] = { -1, -1 };
    if (!env || pipe2 (outp, O_CLOEXEC) != 0 || pipe2 (errp, O_CLOEXEC) != 0) {
        kf_sandbox_plan_destroy (&plan);
        free (env);
        if (outp[0] >= 0) {
            close (outp[0]);
            close (outp[1]);
        }
        kf_subproc_result_free (result);
        return -1;
    }

    double start = s_now ();
    pid_t parent = getpid ();
    pid_t pid = fork ();
    if (pid == 0)
        s_child (argv, env, limits, no_new_privs, plan, parent, outp[1], errp[1]);
    close (outp[1]);
    close (errp[1]);
    free (env);
    kf_sandbox_plan_destroy (&plan);
    if (pid < 0) {
        close (outp[0]);
        close (errp[0]);
        kf_subproc_result_free (result);
        return -1;
    }
    //  Also from the parent, so a kill right after fork finds the group.
    setpgid (pid, pid);

    //  Did exec succeed? The error pipe closes on exec, or carries errno.
    int msg[2];
    ssize_t got;
    do
        got = read (errp[0], msg, sizeof msg);
    while (got < 0 && errno == EINTR);
    close (errp[0]);
    if (got == (ssize_t) sizeof msg) {
        int status;
        waitpid (pid, &status, 0);
        close (outp[0]);
        kf_subproc_result_free (result);
        if (msg[0] >= KF_SANDBOX_STAGE_NS && msg[0] <= KF_SANDBOX_STAGE_INIT)
            kf_sandbox_failed (msg[0], msg[1]);
        errno = msg[1];
        return -1;
    }
    result->started = true;

    int pidfd = s_pidfd_open (pid);
    bool pipe_open = true, exited = false;
    int status = 0;
    double deadline = limits->time_limit_s > 0 ? start + limits->time_limit_s : 0;
    double drain_until = 0;
    char chunk[4096];

    while (pipe_open || !exited) {
        if (!exited && waitpid (pid, &status, WNOHANG) == pid) {
            exited = true;
            //  Anything the leader left behind in its group goes now;
            //  such stragglers would otherwise keep our pipe open.
            kill (-pid, SIGKILL);
            drain_until = s_now () + 0.5;
        }
        double now = s_now ();
        if (!exited && deadline && now >= deadline) {
            result->timed_out = true;
            kill (-pid, SIGKILL);
            kill (pid, SIGKILL);
            waitpid (pid, &status, 0);
            exited = true;
            kill (-pid, SIGKILL);
            drain_until = s_now () + 0.5;
        }
        if (exited && (!pipe_open || now >= drain_until))
            break;

        int timeout_ms = pidfd >= 0 ? 1000 : 10;
        if (!exited && deadline) {
            int left = (int) ceil ((deadline - now) * 1000);
            if (left < timeout_ms)
                timeout_ms = left > 0 ? left : 0;
        }
        if (exited) {
            timeout_ms = (int) ceil ((drain_until - now) * 1000);
            if (timeout_ms < 0)
                timeout_ms = 0;
        }
        struct pollfd fds[2];
        int nfds = 0;
        if (pipe_open)
            fds[nfds++] = (struct pollfd) { outp[0], POLLIN, 0 };
        if (pidfd >= 0 && !exited)
            fds[nfds++] = (struct pollfd) { pidfd, POLLIN, 0 };
        int rc = poll (fds, nfds, timeout_ms);
        if (rc < 0 && errno != EINTR)
            break;
        if (rc > 0 && pipe_open && fds[0].revents) {
            ssize_t n = read (outp[0], chunk, sizeof chunk);
            if (n > 0) {
                size_t keep = 0;
                if (result->output_len < cap)
                    keep = cap - result->output_len < (size_t) n
                         ? cap - result->output_len : (size_t) n;
                memcpy (result->output + result->output_len, chunk, keep);
                result->output_len += keep;
                if (keep < (size_t) n)
                    result->output_truncated = true;
            }
            else if (n == 0 || (errno != EINTR && errno != EAGAIN))
                pipe_open = false;
        }
    }
    if (!exited) {
        kill (-pid, SIGKILL);
        waitpid (pid, &status, 0);
    }
    if (pidfd >= 0)
        close (pidfd);
    close (outp[0]);
    result->output[result->output_len] = 0;
    result->wall_s = s_now () - start;
    if (WIFEXITED (status)) {
        result->exit_code = WEXITSTATUS (status);
        result->signal = 0;
    }
    else if (WIFSIGNALED (status)) {
        result->exit_code = -1;
        result->signal = WTERMSIG (status);
    }
    return 0;
}

//  A run under a uid of the pool: taken, the workdir handed to it, the
//  run, every process of the uid killed, the workdir handed back, the uid
//  given back. The kill comes before the hand-back so that nothing of the
//  run's can race the walk.
static int
s_run_pooled (char *const argv[], const kf_subproc_limits_t *limits,
              kf_subproc_result_t *result)
{
    if (!argv || !argv[0])
        return s_run_once (argv, limits, false, result);
    int slot = s_pool_take ();
    if (slot < 0) {
        int saved = errno;
        memset (result, 0, sizeof *result);
        result->exit_code = -1;
        errno = saved;
        return -1;
    }
    kf_subproc_limits_t mine = *limits;
    mine.uid = s_pool.base + (uid_t) slot;
    mine.gid = (gid_t) mine.uid;
    uid_t worker = geteuid ();
    gid_t group = getegid ();
    if (mine.workdir)
        s_move_tree (mine.workdir, worker, mine.uid, mine.gid, true);
    int rc = s_run_once (argv, &mine, true, result);
    int saved = errno;
    int left = s_empty_uid (mine.uid, mine.gid);
    if (mine.workdir)
        s_move_tree (mine.workdir, mine.uid, worker, group, false);
    s_pool_give (slot, left);
    errno = saved;
    return rc;
}

//  A run as the one account KF_SANDBOX_USER names. Its process budget is
//  shared with every other run, so while another job's fork bomb holds
//  it our exec fails with EAGAIN; that bomb dies at its own time limit,
//  so waiting a little is better than failing the job. Nothing but the
//  process group can be killed at the end: other runs share the uid.
static int
s_run_shared (char *const argv[], const kf_subproc_limits_t *limits,
              kf_subproc_result_t *result)
{
    uid_t worker = geteuid ();
    gid_t group = getegid ();
    if (limits->workdir)
        s_move_tree (limits->workdir, worker, limits->uid, limits->gid, true);
    int rc;
    for (int attempt = 0; ; attempt++) {
        rc = s_run_once (argv, limits, false, result);
        if (rc == 0 || errno != EAGAIN || attempt >= 100)
            break;
        struct timespec pause = { 0, 100 * 1000 * 1000 };
        nanosleep (&pause, NULL);
    }
    int saved = errno;
    if (limits->workdir)
        s_move_tree (limits->workdir, limits->uid, worker, group, false);
    errno = saved;
    return rc;
}

int
kf_subproc_run (char *const argv[], const kf_subproc_limits_t *limits,
                kf_subproc_result_t *result)
{
    if (!limits || !limits->drop_privileges || geteuid () != 0)
        return s_run_once (argv, limits, false, result);
    if (limits->uid == 0)
        return s_run_pooled (argv, limits, result);
    return s_run_shared (argv, limits, result);
}

void
kf_subproc_result_free (kf_subproc_result_t *result)
{
    if (!result)
        return;
    free (result->output);
    result->output = NULL;
    result->output_len = 0;
}

char *
kf_subproc_mkdtemp (const kf_subproc_limits_t *limits)
{
    const char *base = getenv ("TMPDIR");
    if (!base || !*base)
        base = "/tmp";
    size_t len = strlen (base) + 16;
    char *path = malloc (len);
    if (!path)
        return NULL;
    snprintf (path, len, "%s/kf-XXXXXX", base);
    if (!mkdtemp (path)) {
        free (path);
        return NULL;
    }
    //  mkdtemp gives 0700, ours. No chown: each run hands the directory
    //  to its own uid for as long as it lasts (kf_subproc_run).
    (void) limits;
    return path;
}

static int
s_unlink_one (const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void) sb;
    (void) ftw;
    if (flag == FTW_DP || flag == FTW_D)
        rmdir (path);
    else
        unlink (path);
    return 0;
}

void
kf_subproc_rmtree (const char *dir)
{
    if (!dir || !*dir)
        return;
    //  FTW_PHYS: never follow a link the sandboxed child planted.
    nftw (dir, s_unlink_one, 16, FTW_DEPTH | FTW_PHYS);
}

