/*  test_command_argv.c - the command backend's execve argument list ends
 *  with NULL after the operator's words (an earlier list had no room for
 *  it, and execve failed with EFAULT: no command could start). Under
 *  AddressSanitizer a list one entry short is a heap overflow here.
 */
#include "../../llm-gateway/kf_command_argv.h"
#include "../kf_test.h"
#include <stdlib.h>
#include <string.h>

int
main (void)
{
    char *words[] = { "ollama", "run", "llama3", NULL };
    for (int k = 0; k <= 3; k++) {
        char *some[4] = { NULL, NULL, NULL, NULL };
        for (int i = 0; i < k; i++)
            some[i] = words[i];
        int count = -1;
        char **argv = kf_command_argv ("exec \"$@\" < prompt.txt", some, &count);
        CHECK (argv != NULL);
        CHECK (count == 4 + k);
        CHECK (!strcmp (argv[0], "/bin/sh") && !strcmp (argv[1], "-c"));
        CHECK (!strcmp (argv[3], "kf-command"));
        for (int i = 0; i < k; i++)
            CHECK (argv[4 + i] == words[i]);
        //  The entry execve stops at, inside the allocation.
        CHECK (argv[count] == NULL);
        free (argv);
    }
    return kf_test_done ("test_command_argv");
}
