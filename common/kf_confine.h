/*  kf_confine.h - what a process running untrusted code may still do.
 *
 *  The sandbox (kf_subproc.h) bounds a child from outside: limits, a uid,
 *  a process group. A process about to load a candidate narrows itself
 *  from inside too, with two mechanisms any user may apply to itself
 *  (after PR_SET_NO_NEW_PRIVS) and none may undo:
 *
 *  - a seccomp filter: no new processes (threads only), no exec, no
 *    ptrace or cross-process memory access, no sockets, no new session
 *    or process group, signals to itself only. So nothing it starts can
 *    outlive a stop or a kill of this process, or work on while it is
 *    stopped;
 *  - a Landlock ruleset where the kernel has Landlock: reads of the
 *    system's libraries and a few device and /proc/self files, reads of
 *    the files it is given, writes only below its working directory; no
 *    TCP; no signals or abstract sockets outside itself. So it sees no
 *    secret, log, socket or other job's files of its uid.
 *
 *  A kernel without Landlock leaves the filesystem as the uid sees it;
 *  kf_confine_self says so in its report, and the seccomp filter is
 *  applied regardless.
 */
#ifndef KF_CONFINE_H
#define KF_CONFINE_H

#include <stddef.h>

/* Narrows this process: READ_FILES (NULL-terminated, may be NULL) are
 * readable and executable, WRITE_DIRS (NULL-terminated, may be NULL; with
 * everything below them) readable and writable. Returns 0 and a one-line
 * account in REPORT ("seccomp, landlock abi 7" or "seccomp; no landlock:
 * ..."), or -1 with the reason in REPORT when the seccomp filter could
 * not be applied. */
int kf_confine_self (const char *const *read_files, const char *const *write_dirs,
                     char *report, size_t report_size);

/* The Landlock ABI version the kernel offers, 0 when none. */
int kf_confine_landlock_abi (void);

#endif
