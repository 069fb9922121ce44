/*  kf_host_figures.c - the host's measured figures, kept for the boot
 *  (kf_host_figures.h): the one place kf_host_caps_measure and
 *  kf_eval_host_ceilings take them from.
 */
#include "kf_host_figures.h"
#include "kf_eval_check.h"
#include "kf_file.h"
#include "kf_host_caps.h"
#include "kf_host_load.h"
#include "kf_host_measure.h"

#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define S_FILE_MAX ((size_t) 64 << 10)
#define S_FMA_AGREE 1.5                 // the vector FMA's cycles against the peak's
#define S_BUSY "measured, not kept (the host was busy)"
#define S_BUSY_KEPT "measured, kept marked busy (the host was busy)"
#define S_BUSY_FILE "file, marked busy (measured beside other work)"

static char *s_path;
static bool s_remeasure;
static const char *s_source;
static bool s_busy;                    // the figures in use were measured beside other work
static json_t *s_caps;                 // one core's figures
static kf_eval_ceilings_t s_ceil;      // the all-core ceilings
static pthread_once_t s_once = PTHREAD_ONCE_INIT;
//  Held where the figures are read or replaced after the first
//  measurement (kf_host_figures_again runs beside jobs' threads).
static pthread_mutex_t s_lock = PTHREAD_MUTEX_INITIALIZER;

void
kf_host_figures_use_file (const char *path, bool remeasure)
{
    free (s_path);
    s_path = path ? strdup (path) : NULL;
    s_remeasure = remeasure;
}

const char *
kf_host_figures_source (void)
{
    pthread_mutex_lock (&s_lock);
    const char *source = s_source;
    pthread_mutex_unlock (&s_lock);
    return source;
}

json_t *
kf_host_figures_key (void)
{
    char boot[64] = "", model[256] = "";
    FILE *f = fopen ("/proc/sys/kernel/random/boot_id", "r");
    if (f) {
        if (!fgets (boot, sizeof boot, f))
            boot[0] = 0;
        boot[strcspn (boot, "\n")] = 0;
        fclose (f);
    }
    kf_host_cpu_model (model, sizeof model);
    //  No boot id (not Linux, or /proc hidden): nothing ties a file to
    //  this boot, so none is used.
    if (!boot[0])
        return NULL;
    return json_pack ("{s:i, s:s, s:s, s:I}", "version", KF_HOST_FIGURES_VERSION, "boot_id", boot, "cpu", model,
                      "cpus", (json_int_t) kf_host_cpus ());
}

static bool
s_positive (json_t *v)
{
    double x = json_number_value (v);
    return json_is_number (v) && isfinite (x) && x > 0;
}

//  The ISA names the FMA loops report, as the static strings a
//  kf_eval_ceilings_t points at.
static const char *
s_isa (const char *name)
{
    static const char *const known[] = { "avx512f", "avx2+fma", "sse" };
    for (size_t i = 0; name && i < sizeof known / sizeof known[0]; i++)
        if (!strcmp (name, known[i]))
            return known[i];
    return NULL;
}

//  Reads the figures PATH holds for KEY into *CAPS (a new reference),
//  *CEIL and *BUSY (kept marked busy). Returns 0 when every check of
//  kf_host_figures.h passed.
static int
s_read (const char *path, json_t *key, json_t **caps_out, kf_eval_ceilings_t *ceil_out,
        bool *busy_out)
{
    size_t size = 0;
    char *text = kf_file_read_own (path, S_FILE_MAX, &size);
    json_t *doc = text ? json_loadb (text, size, 0, NULL) : NULL;
    free (text);
    json_t *caps = json_object_get (doc, "caps"), *ceil = json_object_get (doc, "ceilings");
    json_t *busy = json_object_get (doc, "busy");
    int rc = -1;
    const char *key_name, *source = NULL;
    json_t *v;
    if (!json_is_object (caps) || !json_is_object (ceil) || (busy && !json_is_boolean (busy)))
        goto done;
    json_object_foreach (key, key_name, v)
        if (!json_equal (v, json_object_get (doc, key_name)))
            goto done;
    json_object_foreach (caps, key_name, v)
        if (!s_positive (v))
            goto done;
    //  Figures kept marked busy say so; unmarked ones must look quiet.
    if (!json_is_true (busy) && !kf_host_figures_quiet (caps, -1, kf_host_cpus ()))
        goto done;
    if (!s_positive (json_object_get (ceil, "copy_gbs"))
        || !s_positive (json_object_get (ceil, "peak_gflops"))
        || !(source = s_isa (json_string_value (json_object_get (ceil, "peak_source")))))
        goto done;
    *caps_out = json_incref (caps);
    *ceil_out = (kf_eval_ceilings_t) {
        .copy_gbs = json_number_value (json_object_get (ceil, "copy_gbs")),
        .peak_gflops = json_number_value (json_object_get (ceil, "peak_gflops")),
        .peak_source = source
    };
    *busy_out = json_is_true (busy);
    rc = 0;
done:
    json_decref (doc);
    return rc;
}

//  Whether PATH holds figures for KEY measured on a quiet host.
static bool
s_quiet_file (const char *path, json_t *key)
{
    json_t *caps = NULL;
    kf_eval_ceilings_t ceil;
    bool busy = true;
    int rc = s_read (path, key, &caps, &ceil, &busy);
    json_decref (caps);
    return rc == 0 && !busy;
}

//  Writes the figures CEIL and CAPS with KEY to PATH (through a rename:
//  a worker starting beside reads the old file or the new, never half of
//  one).
static void
s_save (const char *path, json_t *key, const kf_eval_ceilings_t *ceil, json_t *caps, bool busy)
{
    json_t *doc = json_deep_copy (key);
    if (busy)
        json_object_set_new (doc, "busy", json_true ());
    json_object_set (doc, "caps", caps);
    json_object_set_new (doc, "ceilings", json_pack ("{s:f, s:f, s:s}", "copy_gbs", ceil->copy_gbs,
                                                     "peak_gflops", ceil->peak_gflops,
                                                     "peak_source", ceil->peak_source));
    char *text = json_dumps (doc, JSON_INDENT (1));
    if (text)
        kf_file_replace_path (path, text, strlen (text));
    free (text);
    json_decref (doc);
}

static double
s_clock_s (clockid_t clock)
{
    struct timespec t;
    return clock_gettime (clock, &t) == 0 ? (double) t.tv_sec + (double) t.tv_nsec * 1e-9 : 0;
}

//  Measures every figure into *CEIL and *CAPS (caller's); returns the
//  share of the CPUs' time that other processes took meanwhile (-1: not
//  known).
static double
s_measure (kf_eval_ceilings_t *ceil, json_t **caps)
{
    kf_host_load_t load = { .own_cpu_s = 0 };
    kf_host_load_snap ("/proc/stat", &load.before);
    double wall0 = s_clock_s (CLOCK_MONOTONIC), own0 = s_clock_s (CLOCK_PROCESS_CPUTIME_ID);
    //  The copy first, then the FMA loops (whose figures the caps share):
    //  the order a worker's start measured them in before.
    ceil->copy_gbs = kf_eval_measure_copy_gbs ();
    kf_host_fma_peaks_t p;
    kf_host_fma_peaks (&p);
    ceil->peak_gflops = p.summed / 1e9;
    ceil->peak_source = p.summed > 0 ? p.isa : NULL;
    *caps = kf_host_measure_caps ();
    kf_host_load_snap ("/proc/stat", &load.after);
    load.wall_s = s_clock_s (CLOCK_MONOTONIC) - wall0;
    load.own_cpu_s = s_clock_s (CLOCK_PROCESS_CPUTIME_ID) - own0;
    json_t *o = kf_host_load_json (&load);
    double share = kf_eval_num (o, "others_cpu_share", -1);
    json_decref (o);
    return share;
}

bool
kf_host_figures_quiet (json_t *caps, double others_share, long cpus)
{
    double one = kf_eval_num (caps, "peak_gflops_one_core", 0);
    double all = kf_eval_num (caps, "peak_gflops_all_threads", 0);
    //  The FMA loops take a moment of the measurement; the copies and
    //  reads are taken at others. Stop 39's check 33 kept FMA figures that
    //  looked quiet (208.2 GFLOP/s on all threads, 199.9 on one) beside a
    //  copy of 16.87 GB/s (about 64 quiet) and all cores' L2 read of 128.7
    //  GB/s (one core: 199.0), measured beside a busy loop: what the other
    //  processes took of the CPUs over the whole measurement says so.
    if (!(one > 0 && cpus > 0 && all >= 0.5 * (double) cpus * one
          && !(others_share > KF_HOST_FIGURES_OTHERS_MAX)))
        return false;
    //  Round 29: a file kept as quiet said an FMA takes 1.99 cycles (one
    //  vector every two) beside a one-core peak of 210 GFLOP/s at 3409
    //  MHz, which is 0.52 cycles for 16 lanes: the vector costs were
    //  timed while something shared the core's units. The two are
    //  measured apart, so they must agree within S_FMA_AGREE.
    double lanes = kf_eval_num (caps, "vec_lanes", 0), fma = kf_eval_num (caps, "vec_fma_cycles", 0);
    double mhz = kf_eval_num (caps, "clock_mhz_measured", 0);
    if (lanes > 0 && fma > 0 && mhz > 0) {
        double implied = lanes * 2 * mhz * 1e6 / (one * 1e9);
        if (fma > S_FMA_AGREE * implied || implied > S_FMA_AGREE * fma)
            return false;
    }
    return true;
}

//  Takes CEIL and CAPS (measured while others took OTHERS of the CPUs)
//  as the figures in use, and keeps them in the file where KEY (the
//  file's key; NULL: no file) is given and they are whole: marked busy
//  where they are not quiet, and then only in place of no quiet file.
//  Returns whether they were quiet.
static bool
s_take (const kf_eval_ceilings_t *ceil, json_t *caps, double others, json_t *key)
{
    bool quiet = caps && kf_host_figures_quiet (caps, others, kf_host_cpus ());
    bool whole = caps && ceil->copy_gbs > 0 && ceil->peak_source;
    const char *source = "measured";
    //  Only whole figures are kept: one that could not be measured
    //  (no AVX2, no threads) is measured again next time. Figures taken
    //  beside other work (round 8: a copy ceiling of 3 GB/s measured
    //  beside the test suite) are kept marked busy, as the process that
    //  measured them uses them: the ceilings then carry `busy`, so they
    //  hold no honest kernel for audit, and a later quiet measurement
    //  (kf_host_figures_again) replaces them. A start beside other work
    //  reads them instead of measuring again (seconds of every core).
    if (key && whole && quiet)
        s_save (s_path, key, ceil, caps, false);
    else if (key && whole && !s_quiet_file (s_path, key)) {
        s_save (s_path, key, ceil, caps, true);
        source = S_BUSY_KEPT;
    }
    else if (caps && !quiet)
        source = S_BUSY;
    else if (key)
        source = "measured, not kept (a figure could not be measured)";
    pthread_mutex_lock (&s_lock);
    json_t *old = s_caps;
    s_caps = caps;
    s_ceil = *ceil;
    s_source = source;
    s_busy = caps && !quiet;
    pthread_mutex_unlock (&s_lock);
    json_decref (old);
    return quiet;
}

//  The thread start cost measured now, where it is lower than the kept
//  one (or none was kept): kf_host_figures.h.
static void
s_spawn_lower (void)
{
    kf_host_figures_lower_start (s_caps, kf_host_measure_spawn_s () * 1e6);
}

void
kf_host_figures_lower_start (json_t *caps, double us)
{
    json_t *kept = json_object_get (caps, "thread_start_join_us");
    if (us > 0 && (!kept || us < json_number_value (kept)))
        json_object_set_new (caps, "thread_start_join_us", json_real (round (us * 10) / 10));
}

static void
s_figures (void)
{
    json_t *key = s_path ? kf_host_figures_key () : NULL;
    if (key && !s_remeasure && s_read (s_path, key, &s_caps, &s_ceil, &s_busy) == 0) {
        s_source = s_busy ? S_BUSY_FILE : "file";
        s_spawn_lower ();
    }
    else {
        kf_eval_ceilings_t ceil = { 0 };
        json_t *caps = NULL;
        double others = s_measure (&ceil, &caps);
        s_take (&ceil, caps, others, key);
    }
    json_decref (key);
}

int
kf_host_caps_measure (json_t *device)
{
    if (!json_is_object (device))
        return 0;
    pthread_once (&s_once, s_figures);
    pthread_mutex_lock (&s_lock);
    int n = s_caps ? (int) json_object_size (s_caps) : 0;
    if (s_caps)
        json_object_update (device, s_caps);
    pthread_mutex_unlock (&s_lock);
    return n;
}

void
kf_eval_host_ceilings (kf_eval_ceilings_t *c)
{
    pthread_once (&s_once, s_figures);
    pthread_mutex_lock (&s_lock);
    *c = s_ceil;
    c->read_gbs = kf_eval_num (s_caps, "read_cold_all_cores_gbs", 0);
    c->stream_gbs = fmax (kf_eval_num (s_caps, "copy_stream_one_core_gbs", 0),
                          kf_eval_num (s_caps, "copy_stream_all_cores_gbs", 0));
    c->write_gbs = kf_eval_num (s_caps, "write_stream_all_cores_gbs", 0);
    c->busy = s_busy;
    pthread_mutex_unlock (&s_lock);
}

//  How long the glance before a measurement again looks at the host.
#define S_GLANCE_S 0.5

int
kf_host_figures_again (kf_host_figures_again_t *out)
{
    *out = (kf_host_figures_again_t) { .others_share = -1 };
    kf_eval_ceilings_t was;
    kf_eval_host_ceilings (&was);
    out->was_read_gbs = was.read_gbs;
    out->was_copy_gbs = was.copy_gbs;
    if (!was.busy)
        return -1;
    //  A glance first: where others hold the CPUs now, the measurement
    //  (a second or two of every core) would only be thrown away.
    kf_host_load_t glance = { .own_cpu_s = 0 };
    kf_host_load_snap ("/proc/stat", &glance.before);
    double wall0 = s_clock_s (CLOCK_MONOTONIC), own0 = s_clock_s (CLOCK_PROCESS_CPUTIME_ID);
    struct timespec step = { 0, (long) (S_GLANCE_S * 1e9) };
    nanosleep (&step, NULL);
    kf_host_load_snap ("/proc/stat", &glance.after);
    glance.wall_s = s_clock_s (CLOCK_MONOTONIC) - wall0;
    glance.own_cpu_s = s_clock_s (CLOCK_PROCESS_CPUTIME_ID) - own0;
    double share = kf_host_load_share (&glance);
    if (share > KF_HOST_FIGURES_OTHERS_MAX) {
        out->others_share = share;
        out->glance_only = true;
        return 0;
    }
    kf_host_fma_peaks_again ();
    kf_eval_ceilings_t ceil = { 0 };
    json_t *caps = NULL;
    out->others_share = s_measure (&ceil, &caps);
    out->read_gbs = kf_eval_num (caps, "read_cold_all_cores_gbs", 0);
    out->copy_gbs = ceil.copy_gbs;
    //  Figures beside other work again: those in use stay.
    if (!caps || !kf_host_figures_quiet (caps, out->others_share, kf_host_cpus ())) {
        json_decref (caps);
        return 0;
    }
    json_t *key = s_path ? kf_host_figures_key () : NULL;
    out->quiet = s_take (&ceil, caps, out->others_share, key);
    json_decref (key);
    return 0;
}
