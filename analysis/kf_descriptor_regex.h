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

#endif
