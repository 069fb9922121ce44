/*  Hostile, reading secrets (hardening, issue 13; not something the
 *  evaluator's verdict can catch). kf_forward reads the credentials a
 *  KernelFoundry host holds in its environment (the LLM providers' API
 *  keys, the database URL), prints them as one line on stderr and ends the
 *  process without a verdict, so the line becomes the crash report's
 *  detail, which is stored and shown. It asks for those names only, so the
 *  test's own environment (a CI's tokens) is never printed.
 *  Caught when: nothing secret reaches the evaluating process (the worker
 *  hands its children a clean environment), so no secret is in the
 *  result. */
#define _GNU_SOURCE
#include "kf_kernel.h"
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int
kf_forward (const kf_tensor_t *in, int n_in, kf_tensor_t *out, int n_out,
            const kf_ctx_t *ctx)
{
    (void) in; (void) n_in; (void) out; (void) n_out; (void) ctx;
    static const char *const names[] = { "OPENAI_API_KEY", "ANTHROPIC_API_KEY",
                                         "KF_DATABASE_URL", NULL };
    fprintf (stderr, "found:");
    for (int k = 0; names[k]; k++)
        if (getenv (names[k]))
            fprintf (stderr, " %s=%s", names[k], getenv (names[k]));
    fprintf (stderr, "\n");
    fflush (stderr);
    _exit (1);
}
