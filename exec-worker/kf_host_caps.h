/*  kf_host_caps.h - what the host exec worker says of its CPU beyond the
 *  name and core count: the data cache sizes and the SIMD instruction
 *  sets, for the prompt's Target section and for the ISA the coordinator
 *  asks a host kernel to be compiled for (docs/search.md, "A model in the
 *  loop"; docs/evaluation.md).
 */
#ifndef KF_HOST_CAPS_H
#define KF_HOST_CAPS_H

#include <jansson.h>

/* Adds to DEVICE (a capabilities device object) what CACHE_DIR (a
 * /sys/devices/system/cpu/cpu0/cache folder: indexN/level, type, size)
 * and CPUINFO (a /proc/cpuinfo file: its first "flags" or "Features"
 * line) say: "l1d_bytes", "l2_bytes", "l3_bytes" for the caches found
 * (data or unified), with "l1d_shared_cpus", "l2_shared_cpus",
 * "l3_shared_cpus", the number of logical CPUs each serves (its
 * shared_cpu_list: 1 is per core, the CPU count is shared), and "isa",
 * the SIMD extensions present among those a kernel may target, in the
 * compiler's spelling, space-separated ("sse4.2 avx avx2 fma avx512f").
 * A file that cannot be read adds nothing. Returns the number of keys added. */
int kf_host_caps_read (const char *cache_dir, const char *cpuinfo, json_t *device);

#endif
