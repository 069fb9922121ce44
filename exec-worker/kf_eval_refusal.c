/*  kf_eval_refusal.c - a kernel's own word on why it refused
 *  (kf_refusal, common/kf_kernel.h), read into a verdict's detail.
 *
 *  A reference that does not fit the task's shapes or dtypes returns
 *  non-zero from kf_forward; alone, that reads "reference kf_forward
 *  returned 1 on set 0", which tells its author nothing. When the kernel
 *  also exports kf_refusal(), the judge asks it why right after the
 *  failed call, on the side of the process that ran it, and says
 *  "reference refused on set 0: expects a square matrix, got 512 x 256".
 *
 *  The text comes from code the judge does not trust: it is read with a
 *  bound (KF_REFUSAL_MAX bytes, up to the first NUL or line break), every
 *  byte outside printable ASCII shown as '?', and the reading runs in
 *  the reference's phase, so a pointer that faults is reported as the
 *  reference's fault, not the harness's. A refusal is deterministic by
 *  the contract (the same inputs are refused again), so the worker fails
 *  its job once, marked final (kf_exec.c, kf_eval_is_refusal).
 *
 *  A candidate is asked in its own process (kf_runner.c), which sends
 *  the reason in its reply; the judge cleans it again, since that process
 *  is the candidate's (kf_eval_cand_returned).
 */
#include "kf_eval_check.h"

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

//  TEXT (untrusted) into OUT as one printable line of at most
//  KF_REFUSAL_MAX bytes. Returns its length.
static size_t
s_clean (const char *text, char *out, size_t cap)
{
    size_t n = 0;
    for (size_t i = 0; i < KF_REFUSAL_MAX && n + 1 < cap; i++) {
        unsigned char c = (unsigned char) text[i];
        if (c == 0 || c == '\n' || c == '\r')
            break;
        out[n++] = c >= 0x20 && c < 0x7f ? (char) c : c == '\t' ? ' ' : '?';
    }
    while (n && out[n - 1] == ' ')
        n--;
    out[n] = 0;
    return n;
}

size_t
kf_eval_refusal_read (kf_refusal_fn *fn, char *out, size_t cap)
{
    if (!cap)
        return 0;
    out[0] = 0;
    const char *text = fn ? fn () : NULL;
    return text ? s_clean (text, out, cap) : 0;
}

void
kf_eval_cand_returned (char *detail, size_t cap, const char *when, int rc, const char *said)
{
    //  SAID comes from the candidate's process: cleaned again here.
    char why[KF_REFUSAL_MAX + 1];
    if (said && s_clean (said, why, sizeof why))
        snprintf (detail, cap, "%s: candidate refused (kf_forward returned %d): %s", when, rc,
                  why);
    else
        snprintf (detail, cap, "%s: candidate kf_forward returned %d", when, rc);
}

kf_refusal_fn *
kf_eval_refusal_beside (const void *forward)
{
    //  The library that holds FORWARD is already loaded: RTLD_NOLOAD
    //  finds it by the name it was loaded under (its file may be gone),
    //  and the handle only counts a reference, dropped at once.
    Dl_info info;
    if (!forward || !dladdr (forward, &info) || !info.dli_fname)
        return NULL;
    void *lib = dlopen (info.dli_fname, RTLD_LAZY | RTLD_NOLOAD);
    if (!lib)
        return NULL;
    kf_refusal_fn *fn = (kf_refusal_fn *) dlsym (lib, "kf_refusal");
    dlclose (lib);
    return fn;
}

void
kf_eval_ref_failed (char *detail, size_t cap, int rc, const char *when, const void *forward)
{
    char why[KF_REFUSAL_MAX + 1];
    kf_eval_set_phase ('R');
    size_t n = kf_eval_refusal_read (kf_eval_refusal_beside (forward), why, sizeof why);
    kf_eval_set_phase ('H');
    if (n)
        snprintf (detail, cap, "%s %s: %s", KF_EVAL_REFUSED, when, why);
    else
        snprintf (detail, cap, "reference kf_forward returned %d on %s (it gave no reason:"
                  " a kernel may export kf_refusal(), docs/kernel-contract.md)", rc, when);
}

bool
kf_eval_is_refusal (const char *detail)
{
    static const char reference[] = "reference: ";
    if (!detail)
        return false;
    if (!strncmp (detail, reference, sizeof reference - 1))
        detail += sizeof reference - 1;
    return !strncmp (detail, KF_EVAL_REFUSED " ", sizeof KF_EVAL_REFUSED);
}
