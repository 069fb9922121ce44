/*  kf_prompt_cores.c - what all cores buy against one on the exec host,
 *  by the measured pairs (FMA peaks, streaming copies, cold reads) and,
 *  for a task bound by memory, by its own bytes at the cold rates
 *  (kf_prompt_threads.h). Moved out of kf_prompt_threads.c.
 */
#include "kf_prompt_threads.h"
#include "kf_json.h"
#include "kf_prompt_budget.h"
#include "kf_prompt_class.h"
#include "kf_prompt_target.h"
#include <stdbool.h>
#include <stdio.h>

//  The pair of figures named ONE and ALL of device D into *G, WHAT and
//  UNIT its words; false where either is not measured.
static bool
s_pair (json_t *d, const char *one, const char *all, const char *what, const char *unit,
        kf_prompt_cores_gain_t *g)
{
    *g = (kf_prompt_cores_gain_t) { .what = what, .unit = unit, .one = kf_jnum (d, one, 0),
                                    .all = kf_jnum (d, all, 0), .cores = kf_jnum (d, "cores", 0) };
    return g->one > 0 && g->all > 0 && g->cores >= 2;
}

//  The memory's pair of D: all cores' and one core's streaming copy
//  (what a kernel that reads and writes meets), else their cold reads.
bool
kf_prompt_memory_pair (json_t *d, kf_prompt_cores_gain_t *g)
{
    return s_pair (d, "copy_stream_one_core_gbs", "copy_stream_all_cores_gbs",
                   "copy rate with streaming stores (read plus written)", "GB/s", g)
           || s_pair (d, "read_cold_one_core_gbs", "read_cold_all_cores_gbs", "cold read rate",
                      "GB/s", g);
}

//  A task whose time is its bytes: plain elementwise work, a row
//  reduction, a scan (not a product's or attention's multiply-adds, nor
//  an elementwise formula of costly calls).
bool
kf_prompt_memory_task (json_t *spec)
{
    kf_task_class_t c = kf_prompt_task_class (spec);
    return (c == KF_CLASS_ELEMENTWISE && !kf_prompt_costly_math (spec))
           || c == KF_CLASS_ROW_REDUCTION || c == KF_CLASS_SCAN;
}

//  A memory task's bytes (inputs read, outputs written) at D's cold rates
//  on one core and on all (kf_prompt_cold_ms) into *ONE and *ALL, ms;
//  false for another task or where they are not measured.
bool
kf_prompt_memory_cold (json_t *spec, json_t *d, double *one, double *all)
{
    if (!kf_prompt_memory_task (spec))
        return false;
    double n = kf_prompt_side_bytes (spec, "inputs"), m = kf_prompt_side_bytes (spec, "outputs");
    //  Writes at the read rate would be a guess (kf_prompt_cold_ms): the
    //  copies' pair stands where the write rates are not measured.
    if (m > 0 && !(kf_prompt_write_gbs (d, false) > 0 && kf_prompt_write_gbs (d, true) > 0))
        return false;
    *one = kf_prompt_cold_ms (n, m, d, false);
    *all = kf_prompt_cold_ms (n, m, d, true);
    return *one > 0 && *all > 0;
}

bool
kf_prompt_cores_no_gain (json_t *hardware, json_t *spec, kf_prompt_cores_gain_t *gain)
{
    json_t *d = json_array_get (json_object_get (hardware, "devices"), 0);
    kf_prompt_cores_gain_t fma, copy;
    bool has_fma = s_pair (d, "peak_gflops_one_core", "peak_gflops_all_threads",
                           "f32 FMA peak", "GFLOP/s", &fma);
    bool has_copy = kf_prompt_memory_pair (d, &copy);
    kf_task_class_t c = kf_prompt_task_class (spec);
    bool compute = c == KF_CLASS_MATMUL || c == KF_CLASS_ATTENTION;
    bool memory = kf_prompt_memory_task (spec);
    const kf_prompt_cores_gain_t *g;
    if ((compute && has_fma) || !has_copy)
        g = has_fma ? &fma : NULL;
    else if (memory || !has_fma)
        g = &copy;
    else
        g = fma.all / fma.one >= copy.all / copy.one ? &fma : &copy;
    if (!g || g->all >= KF_PROMPT_CORES_GAIN_MIN * g->one)
        return false;
    if (gain)
        *gain = *g;
    return true;
}

void
kf_prompt_cores_gain_text (FILE *f, const kf_prompt_cores_gain_t *g)
{
    fprintf (f, " Measured by the exec worker at start, this host's %s was %.1f %s with a "
             "thread on each of its %.0f logical CPUs against %.1f on one core alone (%.2fx, "
             "under the %.0f%% gain that would make threads a win to expect): whether other "
             "work held the other CPUs then or they share one core's units, this idea is no "
             "sure win here, and threads gain only from CPUs that are free while the kernel is "
             "timed.", g->what, g->all, g->unit, g->cores, g->one,
             g->all / g->one, 100 * (KF_PROMPT_CORES_GAIN_MIN - 1));
}
