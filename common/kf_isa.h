/*  kf_isa.h - the instruction sets a host kernel is compiled for.
 *
 *  The compile host and the exec host of a host kernel need not be the
 *  same machine: `-march=native` on the first can emit instructions the
 *  second lacks (an illegal-instruction crash judged as the kernel's), or
 *  leave out ones it has. So the exec host names its SIMD extensions
 *  (capabilities devices[].isa, exec-worker/kf_host_caps.c), the
 *  coordinator puts those that every live host exec worker shares into a
 *  host compile job's target.arch, and the cc toolchain turns the list
 *  into a portable baseline plus one -m flag per extension. The prompt
 *  states the same flags (coordinator/kf_prompt_target.c).
 */
#ifndef KF_ISA_H
#define KF_ISA_H

#include <stdbool.h>
#include <stddef.h>

/* The compiler flags for ISA (space-separated extension names as
 * kf_host_caps.c writes them: "sse4.2 avx avx2 fma avx512f"): on x86
 * "-march=x86-64" then -msse4.2, -mavx, ... for each extension named
 * that the compiler has long known (GCC 8 and clang 6 onwards); on ARM
 * "-march=armv8-a" (NEON is part of it). With no known name at all,
 * "-march=native": nothing is known of the exec host. Fills FLAGS with
 * static strings, at most MAX; returns how many. */
size_t kf_isa_flags (const char *isa, const char **flags, size_t max);

/* The same flags as one line into BUF ("-march=x86-64 -mavx2 ..."). */
char *kf_isa_flags_line (const char *isa, char *buf, size_t size);

/* The extensions of ISA that kf_isa_flags enables (ENABLED true: those
 * with an -m flag, or NEON under -march=armv8-a), or those it leaves out
 * (ENABLED false: avx512bf16, amx-tile, sve, ...: present on the host,
 * but their intrinsics do not compile), in ISA's order, space-separated
 * (caller frees); NULL on allocation failure. */
char *kf_isa_select (const char *isa, bool enabled);

/* Whether the space-separated ISA list names NAME ("avx2" in "sse4.2 avx
 * avx2 fma"); false for a NULL list. */
bool kf_isa_has (const char *isa, const char *name);

/* The words of A that B holds too, in A's order, space-separated (caller
 * frees); NULL on allocation failure. A NULL B keeps all of A. */
char *kf_isa_common (const char *a, const char *b);

#endif
