/*  kf_subproc_pool.h - what kf_subproc.c and kf_subproc_pool.c share:
 *  the pool of sandbox uids a run as root takes one of, and the hand-over
 *  of the run's working directory to that uid and back. Private to
 *  common/; the public interface is kf_subproc.h.
 */
#ifndef KF_SUBPROC_POOL_H
#define KF_SUBPROC_POOL_H

#include <stdbool.h>
#include <sys/types.h>

/* --- kf_subproc_pool.c */

/* Takes a uid of the pool for one run, waiting while none is free, and
 * empties it of anything a crashed holder's runs left. Returns its slot,
 * or -1 with errno. */
int kf_subproc_pool_take (void);
/* The uid of SLOT (its gid is the same number). */
uid_t kf_subproc_pool_uid (int slot);
/* Kills UID's processes until none runs: 0 when none is left, 1 when
 * only the dead are, -1 when some would not die. */
int kf_subproc_empty_uid (uid_t uid, gid_t gid);
/* Kills every process of UID once, without waiting for them to end:
 * 0 when none is left, 1 when some are (dying, or zombies), -1 when the
 * helper that kills could not run. */
int kf_subproc_kill_uid (uid_t uid, gid_t gid);
/* Gives SLOT back; LEFT is what kf_subproc_empty_uid said (-1 retires
 * the uid). */
void kf_subproc_pool_give (int slot, int left);
/* Hands DIR and what is in it from FROM to TO:GID (TO_SANDBOX: to the
 * run's uid; else back to the worker). */
void kf_subproc_move_tree (const char *dir, uid_t from, uid_t to, gid_t gid, bool to_sandbox);

/* --- kf_subproc_reap.c */

/* Takes PID, the killed child of a run that ended at its final answer,
 * to reap later (kf_subproc_reap). SLOT (-1: none), the uid of the pool
 * the run held (UID, GID), is given back once PID is reaped and the uid
 * has no process left. 0, or -1 when too many wait already: the caller
 * then waits itself. */
int kf_subproc_defer (pid_t pid, int slot, uid_t uid, gid_t gid);

#endif
