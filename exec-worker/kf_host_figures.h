/*  kf_host_figures.h - the host's measured figures, kept for the boot.
 *
 *  The capabilities' one-core figures (kf_host_caps_measure) and the
 *  all-core ceilings evaluations are judged against
 *  (kf_eval_host_ceilings) are measured at the first call of either, in
 *  one go, and written to a file; a later worker start or standalone
 *  `--eval` on the same boot of the same CPU reads them back instead of
 *  measuring again. The measurement copies about 400 MiB, writes 64 to
 *  256 MiB more for the load latency, and runs FMA on every core:
 *  seconds of a machine's time at every start, and on a virtual machine
 *  whose freed memory goes back to its host (a first touch at 40-200
 *  MB/s) most of a short evaluation's wall time.
 *
 *  The file is used only when it was written on this boot
 *  (/proc/sys/kernel/random/boot_id), for this CPU model and number of
 *  CPUs, by this version of the measurement, is owned by this user and
 *  writable by no one else, and every figure in it is a finite positive
 *  number; anything else is measured again and the file rewritten.
 *  Figures measured beside other work (kf_host_figures_quiet) are kept
 *  marked "busy", in place of no quiet file: a start that reads them
 *  uses them as the start that measured them did (the ceilings carry
 *  `busy`), and a later quiet measurement (kf_host_figures_again)
 *  replaces them. On a host that is never quiet (a test suite beside
 *  other work) every start then reads one measurement instead of
 *  making its own.
 *  `--remeasure` (kf_host_figures_use_file's REMEASURE) measures anew
 *  and rewrites it. The thread start cost takes milliseconds and is
 *  measured again at every start that reads the file: the lower of the
 *  two figures is used (a start beside other work measures a wait for a
 *  CPU, round 11's 700.5 us against 25-72 us quiet).
 */
#ifndef KF_HOST_FIGURES_H
#define KF_HOST_FIGURES_H

#include <jansson.h>
#include <stdbool.h>

/* The measurement's version, kept in the file as "version": raised
 * whenever a figure is measured differently, so a file of the old
 * measurement is not read as the new one, nor a file without a figure
 * the measurement now makes (7: read_l2_all_cores_gbs; 8:
 * copy_stream_all_cores_gbs, and figures kept only where other processes
 * took little of the CPUs, so a file kept by the FMA rule alone is
 * measured again; 9: the rsqrt, load, broadcast, FMA-from-L1 and
 * divide-with-square-root costs of kf_host_vec.h; 10: the other vector
 * instructions alone and beside FMAs; 11: the streaming-store writes of
 * one core and all cores; 12: vroundps, vpslld, vmaxps, vcvtdq2ps and
 * vhaddps alone and beside FMAs; 13: one core's load latency from
 * memory and from L2, in ns and cycles; 14: the pages one core's first-
 * and second-level data TLBs cover; test_host_caps lists the keys of
 * this version). */
#define KF_HOST_FIGURES_VERSION 14

/* The most of the CPUs' time that other processes may take while the
 * figures are measured, for the figures to be kept. */
#define KF_HOST_FIGURES_OTHERS_MAX 0.10

/* Whether CAPS (kf_host_caps_measure's figures) were measured on a quiet
 * host of CPUS logical CPUs: the FMA loop on every CPU at once did at
 * least half of CPUS times what one thread did alone, and other
 * processes took at most KF_HOST_FIGURES_OTHERS_MAX of the CPUs' time
 * over the whole measurement (OTHERS_SHARE, from /proc/stat less the
 * measuring process's own CPU time; below 0: not known, the FMA rule
 * alone). Figures measured beside other work are used by the process
 * that measured them and kept marked busy: a low copy or compute ceiling
 * kept unmarked for the boot would hold every honest kernel for audit. */
bool kf_host_figures_quiet (json_t *caps, double others_share, long cpus);

/* What kept figures hold for: {version, boot_id, cpu, cpus} of this
 * boot, CPU model and CPU count (caller's); NULL when no boot id can be
 * read (nothing then ties a file to this boot). */
json_t *kf_host_figures_key (void);

/* Keeps the figures in PATH (copied; NULL: measured in this process and
 * kept nowhere, the default). REMEASURE: measure even when PATH holds
 * this boot's figures. Call before the first kf_host_caps_measure or
 * kf_eval_host_ceilings. */
void kf_host_figures_use_file (const char *path, bool remeasure);

/* Where the figures came from once either call above ran: "measured"
 * (and kept where a file was given), "measured, kept marked busy (the
 * host was busy)" (kf_host_figures_quiet), "measured, not kept (the host
 * was busy)" (no file given, or the file holds quiet figures), "measured,
 * not kept (a figure could not be measured)", "file" (read back), "file,
 * marked busy (measured beside other work)", or NULL before. The busy
 * ones' ceilings carry `busy` (kf_eval_check.h). */
const char *kf_host_figures_source (void);

/* Sets CAPS' thread start (thread_start_join_us) to US where US is the
 * lower, or none was kept: a start is never slower than measured, and the
 * higher figure holds a wait for a CPU. */
void kf_host_figures_lower_start (json_t *caps, double us);

/* One try at measuring the figures again (kf_host_figures_again). */
typedef struct {
    bool quiet;              /* taken: the figures in use (and the file's) from now on */
    bool glance_only;        /* busy at a first glance (half a second of
                              * /proc/stat), so nothing was measured */
    double others_share;     /* others' share of the CPUs meanwhile; -1 not known */
    double was_read_gbs, read_gbs;   /* all cores' cold read, before and measured now */
    double was_copy_gbs, copy_gbs;   /* the copy ceiling, the same */
} kf_host_figures_again_t;

/* Where the figures in use were measured beside other work (the source
 * above names them busy): a glance at the host, and where
 * others took at most KF_HOST_FIGURES_OTHERS_MAX of the CPUs over it,
 * every figure measured again (a second or two of every core: call it
 * off the heartbeat's thread, with no job running). Figures that pass
 * kf_host_figures_quiet become the ones in use, the source says
 * "measured", and the file keeps them as at a quiet start; others are
 * dropped. Returns 0 with *OUT filled, or -1 (nothing done) where the
 * figures in use were not measured busy. */
int kf_host_figures_again (kf_host_figures_again_t *out);

#endif
