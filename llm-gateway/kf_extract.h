/*  kf_extract.h - the kernel source out of a model's reply.
 *
 *  Models wrap code in Markdown fences, add prose around it, give several
 *  blocks (a sketch, then the kernel; a host file, then a test), or send
 *  bare code. kf_extract_code picks the block in the requested language
 *  that holds the entry point, and says clearly when there is none.
 */
#ifndef KF_EXTRACT_H
#define KF_EXTRACT_H

typedef enum {
    KF_EXTRACT_OK = 0,
    KF_EXTRACT_EMPTY,            /* nothing but white space */
    KF_EXTRACT_NO_CODE           /* text, but no code in it */
} kf_extract_rc_t;

/* Finds the code for LANGUAGE (c, cuda, opencl, sycl) in TEXT. On
 * KF_EXTRACT_OK *CODE is the caller's; otherwise *DETAIL says what was
 * seen (caller's). */
kf_extract_rc_t kf_extract_code (const char *text, const char *language, char **code,
                                 char **detail);

/* "empty", "no_code" (the error_kind of a result). */
const char *kf_extract_rc_name (kf_extract_rc_t rc);

#endif
