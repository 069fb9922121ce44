/*  kf_command_argv.c - the command backend's execve argument list
 *  (kf_command_argv.h).
 *
 *  The shell only redirects the prompt and the completion; the operator's
 *  words reach the program as "$@", never parsed by a shell again.
 */
#include "kf_command_argv.h"

#include <stdlib.h>

#define S_FIXED 4   /* /bin/sh, -c, the script, $0 */

char **
kf_command_argv (const char *script, char *const *words, int *count)
{
    int n = 0;
    while (words && words[n])
        n++;
    //  The fixed entries, the words, and the NULL execve stops at.
    char **argv = calloc ((size_t) n + S_FIXED + 1, sizeof *argv);
    if (!argv)
        return NULL;
    argv[0] = "/bin/sh";
    argv[1] = "-c";
    argv[2] = (char *) script;
    argv[3] = "kf-command";
    for (int i = 0; i < n; i++)
        argv[S_FIXED + i] = words[i];
    argv[S_FIXED + n] = NULL;
    if (count)
        *count = S_FIXED + n;
    return argv;
}
