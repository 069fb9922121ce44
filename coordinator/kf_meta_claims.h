/*  kf_meta_claims.h - claims about the toolchain in a meta-prompter's
 *  edits, held against what this host's compiler does.
 *
 *  Round 18: the accepted v2 of run 1 said that sqrtf vectorises under
 *  __attribute__((optimize("no-math-errno"))). GCC 12 at the run's flags
 *  (-O3 -mavx512f ...) keeps a scalar call of sqrtf under that attribute,
 *  under #pragma GCC optimize and for __builtin_sqrtf alike (seen: each
 *  loop compiles to vsqrtss and call sqrtf@PLT; only -fno-math-errno on
 *  the command line, which the run does not pass, gives vsqrtps), and
 *  candidate 7, a plain loop of sqrtf, ran at 19.80x against 451.67x.
 *  The rules checked citations and ranks, not such claims.
 */
#ifndef KF_META_CLAIMS_H
#define KF_META_CLAIMS_H

#include <stddef.h>

/* The mark kept after a sentence of an accepted edit that says a libm
 * function (sqrtf, expf, atan2f, ...) is vectorised, or will be, with no
 * negation in the sentence. Marked, not rejected, as ranks are: the rest
 * of the edit may be sound. */
#define KF_META_CLAIM_MARK " (not so at this run's flags: the compiler keeps a scalar call " \
                           "of every libm function, sqrtf included, whatever attribute, " \
                           "pragma or builtin asks otherwise; only intrinsics or a " \
                           "polynomial vectorise it)"

/* TEXT with KF_META_CLAIM_MARK before the end of each sentence that
 * claims a libm function vectorises, or NULL when none does (or out of
 * memory). *MARKED gets the count, FN (SIZE bytes) the first function
 * named. */
char *kf_meta_claims_mark (const char *text, int *marked, char *fn, size_t size);

#endif
