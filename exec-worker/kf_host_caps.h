/*  kf_host_caps.h - what the host exec worker says of its CPU beyond the
 *  name and core count: the data cache sizes and the SIMD instruction
 *  sets, and what one core and all of them can do (measured), for the
 *  prompt's Target section and for the ISA the coordinator asks a host
 *  kernel to be compiled for (docs/search.md, "A model in the loop";
 *  docs/evaluation.md).
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
 * "clock_mhz" with "clock_source" when CPUINFO gives "cpu MHz";
 * "cpu_vendor" (a string, "AuthenticAMD"), "cpu_family" and "cpu_model"
 * (integers, CPUID's display family and model as cpuinfo writes them in
 * decimal) when CPUINFO gives all three ("vendor_id", "cpu family",
 * "model": x86 only); and, when
 * CACHE_DIR is sysfs's ".../cpuN/cache", from the cpuM/topology folders
 * beside it: "logical_cpus", "physical_cores" (distinct package and
 * core_id pairs) and "threads_per_core" (cpu0's thread_siblings_list:
 * 2 or more is SMT, logical CPUs sharing one core's units).
 * A file that cannot be read adds nothing. Returns the number of keys added. */
int kf_host_caps_read (const char *cache_dir, const char *cpuinfo, json_t *device);

/* The CPU's model name from /proc/cpuinfo's first "model name" line,
 * trimmed, into MODEL (SIZE bytes); MODEL unchanged when there is none.
 * Returns 0 when found. */
int kf_host_cpu_model (char *model, size_t size);

/* Where sysfs has no cache folders (some virtual machines), the sizes the
 * C library reads from the CPU itself: SIZES[0..2] are the L1 data, L2
 * and L3 sizes in bytes (sysconf's _SC_LEVEL1_DCACHE_SIZE and the next;
 * 0 or less: unknown). Sets each of "l1d_bytes", "l2_bytes" and
 * "l3_bytes" DEVICE lacks, and "cache_source" "cpuid" when it set one.
 * Returns the number of keys added. */
int kf_host_caps_cpuid_caches (json_t *device, const long sizes[3]);

/* Measures this host's CPU, once per boot (kf_host_figures.h: at the first call; make it
 * at start, with nothing else running; well under a second), and adds
 * the figures to DEVICE (kf_host_measure.c):
 * "peak_gflops_one_core" and "peak_gflops_all_threads", the f32 FMA
 * rates of one thread alone and of one thread per logical CPU started
 * together (kf_host_fma_peaks, kf_host_measure.h); "thread_start_join_us", the lowest of five medians of
 * 51 pthread_create + pthread_join of a thread that returns at once
 * (measured again at every start, the lower figure kept:
 * kf_host_figures.h);
 * "copy_one_core_gbs" and "copy_stream_one_core_gbs", one thread copying
 * "copy_one_core_bytes" bytes with ordinary and with streaming
 * (non-temporal) AVX2 stores, bytes read plus bytes written per second;
 * "copy_one_core_traffic_gbs", the ordinary copy's whole traffic, the
 * read of each destination line that an ordinary store makes first
 * (write-allocate) counted too (1.5x copy_one_core_gbs; a streaming
 * store makes no such read); "read_cold_one_core_gbs", one thread reading
 * "read_cold_one_core_bytes" bytes flushed from every cache level first
 * (clflush), the best of three; "read_cold_all_cores_gbs", one thread
 * per logical CPU each reading its share of "read_cold_all_cores_bytes"
 * (at least 32 MiB in all), flushed first, let go together: the bytes
 * over the time from the first thread's start to the last one's finish,
 * the best of three; "read_l2_one_core_gbs", one thread reading
 * "read_l2_one_core_bytes" (half of cpu0's L2) again and again, warm,
 * the best of twenty runs, where the L2's size is known;
 * "read_l2_all_cores_gbs", one thread per logical CPU each reading its
 * own quarter of an L2 again and again, warm, let go together, all
 * bytes over the first start to the last finish, the best of ten
 * ("read_l2_all_cores_bytes" in all), where one core's was measured and
 * there are two CPUs or more; "write_stream_one_core_gbs", one thread
 * writing "write_stream_one_core_bytes" with streaming stores alone
 * (nothing read), flushed from the caches first, the best of three, and
 * "write_stream_all_cores_gbs", one thread per logical CPU each so
 * writing its share of "write_stream_all_cores_bytes", let go together
 * as the cold read's; the copy, read and write figures need AVX2;
 * "clock_mhz_measured", the clock a chain of dependent
 * integer adds (one per cycle) runs at, on x86; "vec_lanes" and the
 * "vec_OP_cycles" and "vec_OP_latency_cycles" of the widest f32 vector's
 * divide, square root, reciprocal estimate and FMA, in cycles of such an
 * add chain timed beside them, and the throughput of other vector
 * instructions alone and beside FMAs (kf_host_vec.h); "mem_latency_ns"
 * and "l2_latency_ns", one core's dependent loads of random lines from
 * memory (a buffer of 4x the L3, 64 to 256 MiB, flushed first) and from
 * L2 (half of it, warm), the best of several runs, with
 * "mem_latency_cycles" and "l2_latency_cycles" at the measured clock
 * (kf_host_latency.c); "dtlb_l1_pages" and "dtlb_l2_pages", how many 4
 * KiB pages one core's first- and second-level data TLBs cover, where a
 * sweep of dependent loads, one line a page, shows a clear step
 * (kf_host_tlb.c). A figure that could not be measured is left out.
 * Returns the number of keys added. */
int kf_host_caps_measure (json_t *device);

/* The FMA throughput loop in the widest vector unit this CPU has:
 * independent chains of f32 multiply-adds (24 of 512 bits, 12 of 256,
 * 12 of 4 floats in plain C), each in a register, ITERS rounds, the
 * result added to *SINK so no compiler drops it; returns the flops done.
 * *ISA (when not NULL) names the unit: "avx512f", "avx2+fma" or "sse"
 * (plain code the compiler vectorises). One loop for every peak the
 * worker measures (kf_eval_roofline.c's all-core ceiling, the figures
 * above). */
typedef double (*kf_host_fma_fn) (long iters, float *sink);
kf_host_fma_fn kf_host_fma_pick (const char **isa);

#endif
