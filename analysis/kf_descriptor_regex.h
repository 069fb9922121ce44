/*  kf_descriptor_regex.h - the descriptors' regular expressions, compiled
 *  once per reader (kf_descriptor_host.c, kf_descriptor_flow.c,
 *  kf_descriptor_algo.c).
 */
#ifndef KF_DESCRIPTOR_REGEX_H
#define KF_DESCRIPTOR_REGEX_H

#include <regex.h>
#include <stdbool.h>

/* Compiles the N PATTERNS (extended syntax) into RE; false, with a line
 * on stderr naming WHO and the pattern, where one does not compile. */
bool kf_descriptor_regcomp (regex_t *re, const char *const *patterns, int n, const char *who);

/* Copies TEXT[SO, EO) into SNIP (KF_HOST_SNIP bytes), white space
 * squeezed, "..." where it is cut. */
void kf_descriptor_snip (char *snip, const char *text, regoff_t so, regoff_t eo);

/* The matches of RE in TEXT; the first's text to SNIP when not NULL. */
int kf_descriptor_count (const regex_t *re, const char *text, char *snip);

#endif
