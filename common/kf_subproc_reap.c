/*  kf_subproc_reap.c - the runs that ended at their final answer
 *  (kf_subproc.h, final_whole): killed, not waited for, reaped here.
 *
 *  Waiting for a killed process is waiting for the kernel to tear it
 *  down, which for a GPU context is a tenth of a second a run; nothing of
 *  the run runs meanwhile (every process has SIGKILL), so the run's caller
 *  need not wait. What must wait is what would let the run's processes
 *  meet a later run: the uid of the pool the run held goes back only once
 *  its child is reaped (in a PID namespace the first process, which ends
 *  only after the namespace's last process is gone) and no process of
 *  the uid is left; and this process does not exit before every one is
 *  gone, so a standalone evaluation leaves nothing behind it.
 *
 *  Each run's start reaps what is gone without waiting (trylock: one
 *  thread at a time does it, the others need not), a run that waits for
 *  a uid of the pool too, the exit waits for all.
 */
#include "kf_subproc.h"
#include "kf_subproc_pool.h"
#include "kf_clock.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

//  More dying runs than this at once: the next one is waited for at
//  once, as before (memory stays bounded whatever the callers do).
#define S_DYING_MAX 256
//  How long a reaped run's uid may keep processes (dying escapees of a
//  run without a namespace) before it is emptied the slow way.
#define S_UID_WAIT_S 5.0

typedef struct {
    pid_t pid;               //  0 once reaped
    int slot;                //  of the uid pool, -1 for none
    uid_t uid;
    gid_t gid;
    double since;            //  when it was killed
} s_dying_t;

static struct {
    pthread_mutex_t lock;
    pthread_once_t once;
    pid_t owner;             //  the process whose children these are
    int n;
    s_dying_t runs[S_DYING_MAX];
} s_dying = { .lock = PTHREAD_MUTEX_INITIALIZER, .once = PTHREAD_ONCE_INIT };

static void
s_reap_at_exit (void)
{
    //  A fork that exits has a copy of the list (and perhaps of a lock
    //  another thread held at the fork): none of these are its children.
    if (__atomic_load_n (&s_dying.owner, __ATOMIC_RELAXED) == getpid ())
        kf_subproc_reap (true);
}

static void
s_once (void)
{
    atexit (s_reap_at_exit);
}

int
kf_subproc_defer (pid_t pid, int slot, uid_t uid, gid_t gid)
{
    pthread_once (&s_dying.once, s_once);
    pthread_mutex_lock (&s_dying.lock);
    if (s_dying.owner != getpid ()) {
        //  A fork of ours inherited someone else's children: not its own.
        s_dying.owner = getpid ();
        s_dying.n = 0;
    }
    int rc = -1;
    if (s_dying.n < S_DYING_MAX) {
        s_dying.runs[s_dying.n++] = (s_dying_t) { pid, slot, uid, gid, kf_clock_now () };
        rc = 0;
    }
    pthread_mutex_unlock (&s_dying.lock);
    return rc;
}

//  Whether RUN is over: its child reaped (WAIT: waited for) and its uid,
//  if any, empty and given back. Lock held.
static bool
s_reap_one (s_dying_t *run, bool wait)
{
    if (run->pid > 0) {
        int status;
        pid_t got;
        do
            got = waitpid (run->pid, &status, wait ? 0 : WNOHANG);
        while (got < 0 && errno == EINTR);
        if (got == 0)
            return false;
        run->pid = 0;   //  reaped (or, ECHILD, not ours to reap)
    }
    if (run->slot < 0)
        return true;
    //  In a namespace its end was the uid's end; without one, an escapee
    //  of the group may still be dying (it has SIGKILL since the run
    //  returned) or be a zombie whose parent is not us.
    int left = kf_subproc_kill_uid (run->uid, run->gid);
    if (left > 0 && !wait && kf_clock_now () - run->since < S_UID_WAIT_S)
        return false;
    if (left != 0)
        left = kf_subproc_empty_uid (run->uid, run->gid);
    kf_subproc_pool_give (run->slot, left);
    return true;
}

int
kf_subproc_reap (bool wait)
{
    if (wait)
        pthread_mutex_lock (&s_dying.lock);
    else if (pthread_mutex_trylock (&s_dying.lock) != 0)
        return 1;   //  another thread is at it; some are dying still
    if (s_dying.owner != getpid ())
        s_dying.n = 0;   //  a fork's copy: these are not our children
    int kept = 0;
    for (int i = 0; i < s_dying.n; i++)
        if (!s_reap_one (&s_dying.runs[i], wait))
            s_dying.runs[kept++] = s_dying.runs[i];
    s_dying.n = kept;
    pthread_mutex_unlock (&s_dying.lock);
    return kept;
}
