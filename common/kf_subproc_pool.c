/*  kf_subproc_pool.c - the run's own uid (kf_subproc_pool.h): the pool
 *  of sandbox uids a run as root takes one of, their locks, emptying a
 *  uid of every process when its run ends, and the run's working
 *  directory handed to the uid for the run and back after.
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
 */
#include "kf_subproc.h"
#include "kf_log.h"
#include "kf_subproc_pool.h"
#include "kf_clock.h"
#include "kf_file.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

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
    unsigned long gives;     //  counts the uids given back
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
        if (kf_file_read_proc (path, buf, sizeof buf) <= 0)
            continue;
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

int
kf_subproc_kill_uid (uid_t uid, gid_t gid)
{
    return s_kill_uid (uid, gid);
}

//  Kills UID's processes until none runs. 0 when none is left, 1 when
//  only the dead are (not reaped yet), -1 when some would not die.
int
kf_subproc_empty_uid (uid_t uid, gid_t gid)
{
    double until = kf_clock_now () + S_KILL_WAIT_S;
    for (;;) {
        int rc = s_kill_uid (uid, gid);
        if (rc == 0)
            return 0;
        if (rc > 0 && !s_uid_running (uid))
            return 1;
        if (kf_clock_now () >= until)
            return -1;
        struct timespec pause = { 0, 2 * 1000 * 1000 };
        nanosleep (&pause, NULL);
    }
}

//  Takes a uid of the pool for one run, waiting while none is free, and
//  empties it of anything a crashed holder's runs left. Returns its slot,
//  or -1 with errno.
int
kf_subproc_pool_take (void)
{
    pthread_once (&s_pool.once, s_pool_init);
    if (s_pool.error) {
        errno = s_pool.error;
        return -1;
    }
    double since = kf_clock_now ();
    bool warned = false;
    pthread_mutex_lock (&s_pool.lock);
    for (;;) {
        int slot = -1;
        bool soon = false;   //  a uid may come free without our signal
        double now = kf_clock_now ();
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
            s->retry_at = kf_clock_now () + S_DIRTY_RETRY_S;
            pthread_cond_broadcast (&s_pool.freed);
            if (rc < 0) {
                pthread_mutex_unlock (&s_pool.lock);
                errno = EAGAIN;
                return -1;
            }
            continue;
        }
        if (!warned && kf_clock_now () - since > 10) {
            kf_warn ("a sandboxed run has waited 10 s for one of the %d sandbox uids "
                     "(KF_SANDBOX_UID_COUNT)", s_pool.size);
            warned = true;
        }
        //  Uids held by runs that ended at their final answer come back
        //  once those are reaped: that happens here too, else a worker
        //  whose every uid is held so would wait for ever.
        unsigned long gives = s_pool.gives;
        pthread_mutex_unlock (&s_pool.lock);
        if (kf_subproc_reap (false) > 0)
            soon = true;
        pthread_mutex_lock (&s_pool.lock);
        if (gives != s_pool.gives)
            continue;   //  a uid came back meanwhile: its signal is gone
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

uid_t
kf_subproc_pool_uid (int slot)
{
    return s_pool.base + (uid_t) slot;
}

//  Gives SLOT back. LEFT is what kf_subproc_empty_uid said: a uid whose processes
//  would not die is retired (and stays locked) rather than handed out.
void
kf_subproc_pool_give (int slot, int left)
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
        s->retry_at = left > 0 ? kf_clock_now () + S_DIRTY_RETRY_S : 0;
    }
    s_pool.gives++;
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
void
kf_subproc_move_tree (const char *dir, uid_t from, uid_t to, gid_t gid, bool to_sandbox)
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
