/*  kf_command_argv.h - the argument list the command backend hands to
 *  execve: /bin/sh -c SCRIPT kf-command WORD..., ended by NULL.
 *
 *  Its own module so the one property that matters (the NULL at the end,
 *  which an earlier version left out: execve then read past the array and
 *  failed with EFAULT, so no command ever started) is tested on its own.
 */
#ifndef KF_COMMAND_ARGV_H
#define KF_COMMAND_ARGV_H

/* { "/bin/sh", "-c", SCRIPT, "kf-command", WORDS[0], ..., NULL } for the
 * NULL-ended WORDS. The array is the caller's to free (free() on it
 * alone: its strings are borrowed from SCRIPT and WORDS); NULL when out
 * of memory. *COUNT, when COUNT is not NULL, gets the entries before the
 * NULL. */
char **kf_command_argv (const char *script, char *const *words, int *count);

#endif
