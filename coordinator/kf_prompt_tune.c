/*  kf_prompt_tune.c - the tuning request (kf_prompt_tune.h).
 *
 *  The point limit and the order points are chosen in are the compile
 *  worker's (common/kf_tune.c): the all-defaults point, its one-parameter
 *  neighbours, then points spread over the rest. Every point is judged
 *  by the evaluator's ordinary checks, so they must agree with the
 *  reference within the tolerance, not with each other bit for bit.
 */
#include "kf_prompt_tune.h"
#include "kf_json.h"
#include "kf_tune.h"
#include <string.h>

//  Parameters that mean something on each kind of target.
static const char *const s_examples[] = {
    [KF_TARGET_HOST] =
        "    /* kf-tune: ROWS_PER_STEP=1,2,4 UNROLL=1,2,4 NTHREADS=1,4,8 */\n"
        "(on this CPU target: rows or tiles per step, unroll depth, accumulators, cache block "
        "sizes in elements, threads to start; not GPU launch sizes)\n",
    [KF_TARGET_CUDA] =
        "    /* kf-tune: BLOCK=128,256,512 VEC=1,2,4 */\n"
        "(threads per block, elements per thread, vector width, tile sizes, rows per block)\n",
    [KF_TARGET_INTEL] =
        "    /* kf-tune: WG=64,128,256 VEC=1,2,4 */\n"
        "(work-group size, sub-group size, elements per work-item, tile sizes)\n",
};

static void
s_table (FILE *f, json_t *configs)
{
    size_t i;
    json_t *row;
    json_array_foreach (configs, i, row) {
        char label[256];
        kf_tune_params_label (json_object_get (row, "params"), label, sizeof label);
        fprintf (f, "- %s: ", label);
        const char *verdict = kf_jstr (row, "verdict");
        if (!*verdict || !strcmp (verdict, "not_run"))
            fprintf (f, "not run%s%s\n", *kf_jstr (row, "skipped_reason") ? " (" : "",
                     *kf_jstr (row, "skipped_reason") ? kf_jstr (row, "skipped_reason") : "");
        else if (json_is_number (json_object_get (row, "speedup")))
            fprintf (f, "%s, %.3fx, %.4g us per call (%s timing)\n", verdict,
                     kf_jnum (row, "speedup", 0), kf_jnum (row, "median_ns", 0) / 1e3,
                     *kf_jstr (row, "fidelity") ? kf_jstr (row, "fidelity") : "?");
        else
            fprintf (f, "%s%s%.200s\n", verdict, *kf_jstr (row, "detail") ? ": " : "",
                     kf_jstr (row, "detail"));
        if (*kf_jstr (row, "skipped_reason") && strcmp (verdict, "not_run") && *verdict)
            fprintf (f, "  (%s)\n", kf_jstr (row, "skipped_reason"));
    }
}

void
kf_prompt_tune_section (FILE *f, const kf_prompt_in_t *in)
{
    kf_target_kind_t kind = kf_prompt_target_kind (in->target, in->language);
    int points = in->tune_points > 0 ? in->tune_points : 8;
    json_t *tol = json_object_get (in->spec, "tolerance");
    fputs ("\n## Tuning parameters\n", f);
    if (in->base && *kf_jstr (in->base, "source"))
        fprintf (f, "Rewrite the kernel under \"Kernel to improve\" (candidate %lld, %.3fx) "
                 "as a template", (long long) kf_jint (in->base, "id"),
                 kf_jnum (in->base, "speedup", 0));
    else
        fputs ("Write the kernel as a template", f);
    fprintf (f, ": its choices that depend on the hardware become parameters. Give each one "
             "a default with\n"
             "    #ifndef NAME\n    #define NAME default\n    #endif\n"
             "and list the values worth trying on one comment line, for example\n%s"
             "At most %d points are built and timed: the all-defaults point first, then the "
             "points that change one parameter from it, then points spread over the rest; "
             "list few values per parameter so the points that matter are among them. Each "
             "is compiled with -DNAME=value and judged like any kernel: every point must "
             "match the reference within the tolerance above (relative error below %g, %g%% "
             "of elements, cosine at least %.6g), not the other points bit for bit. The "
             "fastest correct point counts.\n",
             s_examples[kind], points, kf_jnum (tol, "rtol", 1e-2),
             100 * kf_jnum (tol, "min_match", 0.99), kf_jnum (tol, "min_cosine", 0.99985));
    json_t *configs = json_object_get (in->base, "configs");
    if (json_array_size (configs) > 1) {
        fprintf (f, "The previous tuning of this kernel measured %zu points:\n",
                 json_array_size (configs));
        s_table (f, configs);
        fputs ("Keep the values near the fastest point, drop those that lost clearly, and "
               "try values beyond the edge where the fastest point sits at one.\n", f);
    }
}
