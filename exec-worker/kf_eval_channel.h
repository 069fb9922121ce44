/*  kf_eval_channel.h - how an evaluation child reports to its worker.
 *
 *  A verdict must come from the judge and from nothing the candidate can
 *  reach. So the child does not write its verdict, its phase byte or its
 *  phase times into files of its directory (a candidate running as the
 *  same uid can rewrite those, or turn them into FIFOs and links): the
 *  worker creates an anonymous shared memory file and gives it to the
 *  child as fd 3 and nowhere else. The child marks it close-on-exec at
 *  once, so no program it starts inherits it, and makes itself
 *  non-dumpable, so no process of its uid can open it through /proc or
 *  read its memory. The worker makes itself non-dumpable too.
 *
 *  Layout: the phase byte ('R' reference, 'C' candidate, 'H' harness) at
 *  0, the KF_EVAL_T_* times at 8, the child's CPU seconds at its result
 *  at 56, the result's length at 64, the result (JSON) from 4096. The
 *  worker reads it after the child has ended, also after a crash or a
 *  kill.
 *
 *  Or as soon as the result is out: the child's result is its last word,
 *  and once it is stored the child writes a byte to the worker's final
 *  pipe (fd 4, KF_SUBPROC_FINAL_FD, kf_eval_final_fd). The worker then
 *  looks at the channel, and when a whole result is there it kills the
 *  child and reads it, without waiting for the kernel to tear the child
 *  down (kf_subproc.h). The byte is no verdict: whoever wrote it, the
 *  worker takes only what is in this channel, which only the judge holds
 *  (the candidate's process is started with neither fd 3 nor fd 4, and
 *  cannot open ours through /proc), and a byte with no whole result here
 *  is ignored (the worker waits for the exit, as without the pipe).
 */
#ifndef KF_EVAL_CHANNEL_H
#define KF_EVAL_CHANNEL_H

#include <jansson.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>

#define KF_EVAL_CHANNEL_FD 3

/* --- Timestamps of the child's phases, kept beside the phase byte. */
enum { KF_EVAL_T_BEGIN, KF_EVAL_T_LOADED, KF_EVAL_T_CHECKED, KF_EVAL_T_TIMED,
       KF_EVAL_T_REPORTED, KF_EVAL_T_N };

/* --- Worker side. */

/* A new channel (close-on-exec memfd), or -1 with errno. The caller gives
 * it to the child (kf_subproc_limits_t.pass_fd) and closes it. */
int kf_eval_channel_new (void);

/* After the child ended: its phase byte ('H' when it never wrote one)
 * and stamps (0 where a phase never started). */
char kf_eval_channel_phase (int fd, double stamps[KF_EVAL_T_N]);

/* The result the child wrote last, or NULL (none, or not a JSON object).
 * Caller owns it. */
json_t *kf_eval_channel_result (int fd);

/* Whether the channel holds a whole result (one kf_eval_channel_result
 * reads): the worker's test of the child's final word. */
bool kf_eval_channel_whole (int fd);

/* The CPU seconds (user and system) the child had used with the
 * processes it started, by its last result; 0 when it wrote none. */
double kf_eval_channel_cpu (int fd);

/* --- Child side. */

/* Maps the channel (fd 3), makes it close-on-exec, makes this process
 * non-dumpable and installs the fault handler (it writes a crash verdict
 * into the channel with plain stores only and exits 3). DIR is the
 * evaluation's directory. Returns 0, or -1 when there is no channel. */
int kf_eval_child_begin (const char *dir);
void kf_eval_set_phase (char phase);

/* The worker hears this child's final word on FD (its final pipe,
 * KF_SUBPROC_FINAL_FD): made close-on-exec here, written to once each
 * result is stored. Call before any process is started. */
void kf_eval_final_fd (int fd);

/* Writes RESULT (or a verdict and detail) as the child's result, its
 * last word: with a final pipe the worker may take it and end this
 * process at once (a later write replaces an earlier one only while the
 * worker has not). DIR is not used: the result goes to the channel,
 * never to a file. */
void kf_eval_write_result (const char *dir, json_t *result);
void kf_eval_write_verdict (const char *dir, const char *verdict, const char *detail);

/* What a fault signal SIG says, for a crash report ("out-of-bounds
 * access (SIGSEGV)" when IN_GUARD, a SIGSEGV in a guard page). Async
 * signal safe. */
const char *kf_eval_fault_what (int sig, int in_guard);

/* Installs HANDLER (SA_SIGINFO, once) for SIGSEGV, SIGBUS, SIGFPE, SIGILL
 * and SIGABRT, on an alternate stack so a kernel that overflows its
 * stack is still reported. */
void kf_eval_on_faults (void (*handler) (int, siginfo_t *, void *));

/* A guard page range: a SIGSEGV inside it reads as an out-of-bounds
 * access rather than an invalid one. */
void kf_eval_add_guard (void *lo, size_t len);

/* CLOCK_MONOTONIC in seconds: comparable between parent and child. */
double kf_eval_now (void);

/* Records the end of a phase (KF_EVAL_T_*) now. kf_eval_write_result
 * stamps KF_EVAL_T_REPORTED itself. */
void kf_eval_stamp (int which);

#endif
