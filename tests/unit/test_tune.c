/*  test_tune.c - the tuning sweep, piece by piece (kf_tune's reading of
 *  kf-tune lines and its choice of points are test_tune_space's): the
 *  compile handler builds every point of a small space and reports the
 *  one that does not build without failing the others;
 *  the sweep's plan (kf_sweep.c) with an evaluator of figures on a clock
 *  of its own: limits derived from the first correct config, a config
 *  past its limit, a sweep cut short by the job's time, the best few
 *  timed in full; then the exec handler on real kernels: each built
 *  config screened, a wrong one incorrect, a hanging one a timeout under
 *  the derived limit, the best two fully timed and the fastest of those
 *  picked, a sweep whose time holds only the first config. The
 *  evaluation child re-executes this program (--eval-child DIR), as in
 *  test_eval. */
#include "../../compile-worker/kf_compile.h"
#include "../../exec-worker/kf_exec.h"
#include "../../exec-worker/kf_runner.h"
#include "../../exec-worker/kf_sweep.h"
#include "kf_tune.h"
#include "../kf_test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

//  Doubles its input. MODE picks how: `slow` does the work 30 times over,
//  `wrong` triples, `hang` never returns, `broken` does not compile. The
//  default is slow, so the sweep has to find `fast`.
static const char *s_tuned =
    "#include \"kf_kernel.h\"\n"
    "/* kf-tune: MODE=fast,slow,wrong,broken,hang */\n"
    "#ifndef MODE\n#define MODE slow\n#endif\n"
    "#define fast 1\n#define slow 2\n#define wrong 3\n#define broken 4\n#define hang 5\n"
    "#if MODE == broken\n#error this config does not build\n#endif\n"
    "int kf_forward (const kf_tensor_t *in, int n_in, kf_tensor_t *out, int n_out,\n"
    "                const kf_ctx_t *ctx)\n"
    "{\n"
    "    (void) n_in; (void) n_out; (void) ctx;\n"
    "    const float *x = in[0].data; float *y = out[0].data;\n"
    "    for (volatile int forever = MODE == hang; forever; )\n"
    "        ;\n"
    "    int reps = MODE == slow ? 30 : 1;\n"
    "    float k = MODE == wrong ? 3.0f : 2.0f;\n"
    "    for (int r = 0; r < reps; r++)\n"
    "        for (int64_t i = 0; i < kf_numel (&in[0]); i++)\n"
    "            ((volatile float *) y)[i] = k * x[i];\n"
    "    return 0;\n"
    "}\n";

static const char *s_reference =
    "#include \"kf_kernel.h\"\n"
    "int kf_forward (const kf_tensor_t *in, int n_in, kf_tensor_t *out, int n_out,\n"
    "                const kf_ctx_t *ctx)\n"
    "{\n"
    "    (void) n_in; (void) n_out; (void) ctx;\n"
    "    const float *x = in[0].data; float *y = out[0].data;\n"
    "    for (int64_t i = 0; i < kf_numel (&in[0]); i++) y[i] = 2 * x[i];\n"
    "    return 0;\n"
    "}\n";

static char *
s_source (const char *head, const char *tail)
{
    size_t n = strlen (head) + strlen (tail) + 1;
    char *s = malloc (n);
    snprintf (s, n, "%s%s", head, tail);
    return s;
}

static kf_job_result_t
s_compile (const char *source, int max_configs)
{
    kf_compile_config_t cfg = { .tune_max_configs = max_configs, .tune_parallel = 2 };
    kf_job_t job = { .job_id = 1, .kind = "compile" };
    job.payload = json_pack ("{s:s, s:{s:s}, s:i}", "language", "c", "target", "backend", "host",
                             "tune_max_configs", 16);
    job.frames = zmsg_new ();
    zmsg_addmem (job.frames, source, strlen (source));
    kf_job_result_t res;
    kf_compile_handle (&cfg, &job, &res);
    json_decref (job.payload);
    zmsg_destroy (&job.frames);
    return res;
}

static void
s_result_free (kf_job_result_t *res)
{
    json_decref (res->result);
    zmsg_destroy (&res->frames);
    free (res->error);
}

//  The sweeps below: a config's limit 2 x what config 0 took + 2 s, so
//  the hanging config costs seconds, not a minute.
static const kf_exec_config_t s_exec_cfg = { .time_limit_s = 60, .sweep_time_limit_s = 120,
                                             .sweep_limit_factor = 2, .sweep_limit_floor_s = 2,
                                             .sweep_full_configs = 2 };

static json_t *
s_eval_with (const kf_exec_config_t *cfg, zmsg_t *frames, json_t *configs, char **error)
{
    kf_job_t job = { .job_id = 2, .kind = "evaluate", .frames = frames };
    job.payload = json_pack (
        "{s:{s:[{s:s, s:[i,i], s:s}], s:[{s:s, s:[i,i], s:s}], s:{}},"
        " s:i, s:{s:f, s:i, s:f, s:i}}",
        "task", "inputs", "name", "x", "shape", 64, 512, "dtype", "f32",
                "outputs", "name", "y", "shape", 64, 512, "dtype", "f32", "scalars",
        "seed", 7,
        "timing", "min_time_s", 0.1, "min_samples", 5, "warmup_s", 0.02, "warmup_calls", 2);
    if (configs)
        json_object_set (job.payload, "configs", configs);
    kf_job_result_t res;
    kf_exec_handle ((void *) cfg, &job, &res);
    json_decref (job.payload);
    zmsg_destroy (&res.frames);
    *error = res.error;
    if (!res.ok) {
        json_decref (res.result);
        return NULL;
    }
    return res.result;
}

static json_t *
s_eval (zmsg_t *frames, json_t *configs, char **error)
{
    return s_eval_with (&s_exec_cfg, frames, configs, error);
}

static const char *
s_str (json_t *r, const char *key)
{
    const char *s = json_string_value (json_object_get (r, key));
    return s ? s : "";
}

//  --- The plan, with an evaluator of figures: config I "takes" TAKES[I]
//  seconds of a clock of the test's own (CPU[I] of CPU), and answers
//  VERDICT[I] with SPEEDUP[I] on a screen, FULL[I] on a full run (told
//  apart by the payload's min_samples); past its limit it is a timeout
//  that took the limit.
typedef struct {
    double clock;
    double takes[16], cpu[16], speedup[16], full[16];
    const char *verdict[16];
    double latest_end;        /* the latest a child could have ended */
    int screens, fulls;
} s_fake_t;

static void
s_fake_evaluate (void *arg, json_t *payload, int frame, double limit_s, kf_job_result_t *res,
                 double *cpu_s)
{
    s_fake_t *f = arg;
    memset (res, 0, sizeof *res);
    if (f->clock + limit_s > f->latest_end)
        f->latest_end = f->clock + limit_s;
    bool full = json_integer_value (json_object_get (json_object_get (payload, "timing"),
                                                     "min_samples")) == 10;
    f->fulls += full;
    f->screens += !full;
    const char *v = f->verdict[frame] ? f->verdict[frame] : "correct";
    if (!strcmp (v, "reference_failed")) {
        res->error = strdup ("reference failed: it raised");
        return;
    }
    double took = f->takes[frame] + (full ? 0.7 : 0);
    res->ok = true;
    *cpu_s = f->cpu[frame] ? f->cpu[frame] : took;
    if (took > limit_s) {
        f->clock += limit_s;
        char d[128];
        snprintf (d, sizeof d, "evaluation exceeded the %.3g s limit while the candidate was running",
                  limit_s);
        res->result = json_pack ("{s:s, s:s, s:n, s:f}", "verdict", "timeout", "detail", d,
                                 "speedup", "wall_s", limit_s);
        return;
    }
    f->clock += took;
    double sp = full ? f->full[frame] : f->speedup[frame];
    if (!strcmp (v, "correct"))
        res->result = json_pack ("{s:s, s:s, s:f, s:f, s:{s:f}, s:{s:f}, s:{s:f}, s:{s:f}}",
                                 "verdict", v, "detail", "all checks passed", "speedup", sp,
                                 "wall_s", took, "candidate", "median_ns", 1000 / sp,
                                 "reference", "median_ns", 1000.0, "phases_s", "timing", 0.1,
                                 "host_load", "others_cpu_share", 0.1 * frame);
    else
        res->result = json_pack ("{s:s, s:s, s:n, s:f}", "verdict", v, "detail", "wrong",
                                 "speedup", "wall_s", took);
}

static double
s_fake_now (void *arg)
{
    return ((s_fake_t *) arg)->clock;
}

static json_t *
s_plan_as (s_fake_t *f, const kf_sweep_limits_t *lim, int n, const char *fidelity, char **error)
{
    json_t *configs = json_array ();
    for (int i = 0; i < n; i++)
        json_array_append_new (configs, json_pack ("{s:{s:i}, s:i}", "params", "P", i, "frame", i));
    json_t *payload = json_pack ("{s:{}, s:{s:f, s:i, s:f, s:i}}", "task", "timing",
                                 "min_time_s", 1.0, "min_samples", 10, "warmup_s", 1.0,
                                 "warmup_calls", 10);
    if (fidelity) {
        //  The coordinator's screen: its own short protocol.
        json_object_set_new (payload, "fidelity", json_string (fidelity));
        json_object_set_new (json_object_get (payload, "timing"), "min_samples", json_integer (5));
    }
    kf_sweep_ops_t ops = { .evaluate = s_fake_evaluate, .now = s_fake_now, .arg = f };
    kf_job_result_t res;
    kf_sweep_run (lim, &ops, payload, configs, n, &res);
    json_decref (configs);
    json_decref (payload);
    *error = res.error;
    return res.ok ? res.result : NULL;
}

static json_t *
s_plan (s_fake_t *f, const kf_sweep_limits_t *lim, int n, char **error)
{
    return s_plan_as (f, lim, n, NULL, error);
}

static json_t *
s_cfg_row (json_t *r, int i)
{
    return json_array_get (json_object_get (r, "configs"), (size_t) i);
}

static int
s_count_fidelity (json_t *r, const char *fidelity)
{
    int k = 0;
    size_t i;
    json_t *row;
    json_array_foreach (json_object_get (r, "configs"), i, row)
        k += json_is_string (json_object_get (row, "fidelity"))
             && !strcmp (json_string_value (json_object_get (row, "fidelity")), fidelity);
    return k;
}

static void
s_test_plan (void)
{
    kf_sweep_limits_t lim = { .job_limit_s = 100, .eval_limit_s = 20, .limit_factor = 3,
                              .limit_floor_s = 1, .full_configs = 2 };
    char *error = NULL;

    //  Config 0 takes 2 s: the others' limit is 3 x 2 + 1 = 7 s, so the
    //  12 s config is a timeout that says so, while the rest are judged.
    //  The two best screens (configs 2 and 1) are timed in full, and the
    //  full runs decide: config 1 is the best.
    s_fake_t f = { .takes = { 2, 2, 2, 12, 2, 2 }, .speedup = { 1.0, 1.5, 2.0, 3, 1.2, 0.9 },
                   .full = { 1.0, 1.9, 1.8, 3, 1.2, 0.9 } };
    json_t *r = s_plan (&f, &lim, 6, &error);
    CHECK (r != NULL);
    json_t *t = json_object_get (r, "tuning");
    printf ("  plan: limit %.3g s (%s); %d screens, %d full\n",
            json_number_value (json_object_get (t, "sweep_time_limit_s")),
            s_str (t, "limit_why"), f.screens, f.fulls);
    CHECK (json_number_value (json_object_get (t, "first_limit_s")) == 20);
    CHECK (json_number_value (json_object_get (t, "sweep_time_limit_s")) == 7);
    CHECK (json_integer_value (json_object_get (t, "measured_by")) == 0);
    CHECK (strstr (s_str (t, "limit_why"), "3 x the 2.00 s config 0 took + a 1 s floor"));
    json_t *slow = s_cfg_row (r, 3);
    printf ("  the slow config: %s: %s\n", s_str (slow, "verdict"), s_str (slow, "detail"));
    CHECK (!strcmp (s_str (slow, "verdict"), "timeout"));
    CHECK (strstr (s_str (slow, "detail"), "exceeded the 7 s limit"));
    CHECK (strstr (s_str (slow, "detail"), "config 3's limit 7 s: 3 x the 2.00 s config 0 took"));
    CHECK (f.screens == 6 && f.fulls == 2);
    //  Each point keeps the host's load it was timed under (round 25).
    CHECK (json_number_value (json_object_get (json_object_get (s_cfg_row (r, 2), "host_load"),
                                               "others_cpu_share")) > 0.19);
    CHECK (s_count_fidelity (r, "full") == 2 && s_count_fidelity (r, "screen") == 4);
    CHECK (!strcmp (s_str (s_cfg_row (r, 1), "fidelity"), "full"));
    CHECK (!strcmp (s_str (s_cfg_row (r, 2), "fidelity"), "full"));
    CHECK (json_number_value (json_object_get (s_cfg_row (r, 1), "speedup")) == 1.9);
    CHECK (json_number_value (json_object_get (s_cfg_row (r, 1), "screen_speedup")) == 1.5);
    CHECK (json_integer_value (json_object_get (json_object_get (r, "best_config"), "P")) == 1);
    CHECK (json_number_value (json_object_get (r, "speedup")) == 1.9);
    CHECK (!strcmp (s_str (r, "fidelity"), "full"));
    CHECK (json_is_null (json_object_get (t, "stopped")));
    CHECK (json_integer_value (json_object_get (t, "fully_timed")) == 2);
    CHECK (f.latest_end <= lim.job_limit_s);
    json_decref (r);

    //  A harness on several threads: config 0 took 2 s of wall and 16 s
    //  of CPU, and the child's CPU-time limit follows its wall limit, so
    //  the limit is 16 + 2 x 2 + 1 = 21 s, capped at config 0's 20 s, and
    //  a 15 s config is judged (3 x 2 + 1 = 7 s would have ended it).
    s_fake_t g = { .takes = { 2, 15, 2 }, .cpu = { 16, 0, 0 }, .speedup = { 1, 2, 3 },
                   .full = { 1, 2, 3 } };
    r = s_plan (&g, &lim, 3, &error);
    CHECK (r && json_number_value (json_object_get (json_object_get (r, "tuning"),
                                                    "sweep_time_limit_s")) == 20);
    CHECK (r && strstr (s_str (json_object_get (r, "tuning"), "limit_why"), "16.00 s of CPU time"));
    CHECK (r && strstr (s_str (json_object_get (r, "tuning"), "limit_why"), "capped at config 0's 20 s"));
    CHECK (r && !strcmp (s_str (s_cfg_row (r, 1), "verdict"), "correct"));
    json_decref (r);

    //  The job's time holds five configs: config 0 takes 4 s, a screen's
    //  limit is 13 s and 15.1 s stay kept for the full run of the best, so
    //  after config 4 the sweep stops; configs 5 to 7 did not run, and
    //  say why. The two best are still timed in full, within the job.
    lim.job_limit_s = 45;
    s_fake_t h = { .takes = { 4, 4, 4, 4, 4, 4, 4, 4 }, .speedup = { 1, 2, 3, 4, 5, 6, 7, 8 },
                   .full = { 1, 2, 3, 4, 5, 6, 7, 8 } };
    r = s_plan (&h, &lim, 8, &error);
    CHECK (r != NULL);
    t = json_object_get (r, "tuning");
    printf ("  cut short: %s\n", s_str (t, "stopped"));
    CHECK (h.screens == 5 && h.fulls == 2);
    CHECK (json_integer_value (json_object_get (t, "screened")) == 5);
    CHECK (json_integer_value (json_object_get (t, "not_run")) == 3);
    CHECK (strstr (s_str (t, "stopped"), "time ran out after config 4"));
    CHECK (strstr (s_str (t, "stopped"), "config 0 took 4.00 s"));
    for (int i = 0; i < 8; i++) {
        json_t *row = s_cfg_row (r, i);
        CHECK (json_is_boolean (json_object_get (row, "ran")));
        CHECK (json_is_true (json_object_get (row, "ran")) == (i < 5));
        if (i >= 5) {
            CHECK (!strcmp (s_str (row, "verdict"), "not_run"));
            CHECK (json_is_null (json_object_get (row, "fidelity")));
            CHECK (strstr (s_str (row, "skipped_reason"), "time ran out after config 4"));
        }
    }
    CHECK (!strcmp (s_str (s_cfg_row (r, 4), "fidelity"), "full"));
    CHECK (!strcmp (s_str (s_cfg_row (r, 3), "fidelity"), "full"));
    CHECK (json_integer_value (json_object_get (json_object_get (r, "best_config"), "P")) == 4);
    CHECK (h.clock <= lim.job_limit_s && h.latest_end <= lim.job_limit_s);
    json_decref (r);

    //  The best screen took three times as long as config 0: its full
    //  run's limit (3 x 6.4 + 1 s, capped at 20 s) does not fit what is left, so it stays
    //  a screen and says why; the next best is timed in full and counts.
    lim.job_limit_s = 26;
    s_fake_t k = { .takes = { 2, 6, 2, 2, 2 }, .speedup = { 1, 5, 2, 1.5, 1.2 },
                   .full = { 1, 5, 2, 1.5, 1.2 } };
    r = s_plan (&k, &lim, 5, &error);
    CHECK (r != NULL);
    json_t *best = s_cfg_row (r, 1);
    printf ("  the best screen: %s\n", s_str (best, "skipped_reason"));
    CHECK (!strcmp (s_str (best, "fidelity"), "screen") && json_is_true (json_object_get (best, "ran")));
    CHECK (strstr (s_str (best, "skipped_reason"), "not timed with the full protocol"));
    CHECK (!strcmp (s_str (s_cfg_row (r, 2), "fidelity"), "full"));
    CHECK (json_integer_value (json_object_get (json_object_get (r, "best_config"), "P")) == 2);
    CHECK (!strcmp (s_str (s_cfg_row (r, 4), "verdict"), "not_run"));
    CHECK (k.latest_end <= lim.job_limit_s);
    json_decref (r);

    //  Config 0 wrong: the first correct config (1) sets the limit.
    lim.job_limit_s = 100;
    s_fake_t m = { .takes = { 0.5, 3, 3 }, .verdict = { "incorrect" }, .speedup = { 0, 1, 2 },
                   .full = { 0, 1, 2 } };
    r = s_plan (&m, &lim, 3, &error);
    CHECK (r && json_integer_value (json_object_get (json_object_get (r, "tuning"), "measured_by")) == 1);
    CHECK (r && json_number_value (json_object_get (json_object_get (r, "tuning"),
                                                    "sweep_time_limit_s")) == 10);
    json_decref (r);

    //  No config correct: config 0's verdict, no best config.
    s_fake_t w = { .takes = { 1, 1 }, .verdict = { "incorrect", "incorrect" } };
    r = s_plan (&w, &lim, 2, &error);
    CHECK (r && !strcmp (s_str (r, "verdict"), "incorrect") && w.fulls == 0);
    CHECK (r && json_is_null (json_object_get (r, "best_config")));
    json_decref (r);

    //  One config: timed in full at once.
    s_fake_t o = { .takes = { 1 }, .speedup = { 2 }, .full = { 2.5 } };
    r = s_plan (&o, &lim, 1, &error);
    CHECK (r && o.fulls == 1 && o.screens == 0);
    CHECK (r && !strcmp (s_str (s_cfg_row (r, 0), "fidelity"), "full"));
    json_decref (r);

    //  A job that is itself the coordinator's screen: every config is
    //  screened with the job's timing as it is, none is timed in full
    //  here (the coordinator times the config picked), and the best
    //  screen gives the top level.
    s_fake_t q = { .takes = { 1, 1, 1 }, .speedup = { 1, 3, 2 } };
    r = s_plan_as (&q, &lim, 3, "screen", &error);
    CHECK (r && q.screens == 3 && q.fulls == 0);
    CHECK (r && json_integer_value (json_object_get (json_object_get (r, "best_config"), "P")) == 1);
    CHECK (r && !strcmp (s_str (r, "fidelity"), "screen") && s_count_fidelity (r, "full") == 0);
    CHECK (r && json_integer_value (json_object_get (json_object_get (
               json_object_get (r, "tuning"), "sweep_timing"), "min_samples")) == 5);
    CHECK (r && json_number_value (json_object_get (json_object_get (
               json_object_get (r, "tuning"), "sweep_timing"), "min_time_s")) == 1);
    json_decref (r);

    //  The reference failing in any child fails the job.
    s_fake_t x = { .takes = { 1, 1 }, .verdict = { "correct", "reference_failed" },
                   .speedup = { 1 } };
    r = s_plan (&x, &lim, 2, &error);
    CHECK (r == NULL && error && strstr (error, "reference failed"));
    free (error);
}

static void
s_test_sweep (void)
{
    kf_job_result_t ref = s_compile (s_reference, 16);
    CHECK (ref.ok && ref.frames && zmsg_size (ref.frames) == 1);
    CHECK (json_object_get (ref.result, "configs") == NULL);

    kf_job_result_t res = s_compile (s_tuned, 16);
    CHECK (res.ok);
    json_t *configs = json_object_get (res.result, "configs");
    CHECK (json_array_size (configs) == 5);
    CHECK (json_is_true (json_object_get (res.result, "compiled")));
    CHECK (res.frames && zmsg_size (res.frames) == 4);
    json_t *tune = json_object_get (res.result, "tune");
    CHECK (json_integer_value (json_object_get (tune, "space")) == 5);
    CHECK (json_integer_value (json_object_get (tune, "compiled")) == 4);
    CHECK (json_integer_value (json_object_get (tune, "skipped")) == 0);
    size_t i;
    json_t *row;
    int failed = 0;
    json_array_foreach (configs, i, row) {
        char label[128];
        kf_tune_params_label (json_object_get (row, "params"), label, sizeof label);
        printf ("  compiled %-12s %s frame %lld\n", label,
                json_is_true (json_object_get (row, "compiled")) ? "yes" : "no ",
                (long long) json_integer_value (json_object_get (row, "frame")));
        if (!json_is_true (json_object_get (row, "compiled"))) {
            failed++;
            CHECK (!strcmp (label, "MODE=broken"));
            CHECK (strstr (s_str (row, "log"), "does not build") != NULL);
            CHECK (json_object_get (row, "frame") == NULL);
        }
        else    /* the built ones, in order */
            CHECK (json_integer_value (json_object_get (row, "frame")) == (json_int_t) i - failed);
    }
    CHECK (failed == 1);
    row = json_array_get (configs, 0);
    CHECK (!strcmp (s_str (json_object_get (row, "params"), "MODE"), "slow"));
    CHECK (!strcmp (s_str (row, "artifact_hash"), s_str (res.result, "artifact_hash")));

    //  The evaluate job as the coordinator makes it: the built configs,
    //  their frames, the reference last.
    json_t *eval_configs = json_array ();
    zmsg_t *frames = zmsg_new ();
    json_array_foreach (configs, i, row)
        if (json_is_true (json_object_get (row, "compiled")))
            json_array_append_new (eval_configs, json_pack ("{s:O, s:O}", "params",
                                   json_object_get (row, "params"), "frame",
                                   json_object_get (row, "frame")));
    for (zframe_t *f = zmsg_first (res.frames); f; f = zmsg_next (res.frames))
        zmsg_addmem (frames, zframe_data (f), zframe_size (f));
    zframe_t *ref_so = zmsg_first (ref.frames);
    zmsg_addmem (frames, zframe_data (ref_so), zframe_size (ref_so));
    char *error = NULL;
    json_t *r = s_eval (frames, eval_configs, &error);
    CHECK (r != NULL);
    if (r) {
        //  The pick is checked against the speedups the sweep recorded,
        //  not against how fast the configs are: on a busy machine the
        //  timings are the machine's, the rule (of the two best screens,
        //  timed again in full, the one with the higher full speedup) is
        //  the product's. That `fast` beats `slow` is a figure, printed
        //  here.
        json_t *rows = json_object_get (r, "configs");
        json_t *want = NULL;
        double want_speedup = 0;
        int full = 0;
        json_array_foreach (rows, i, row) {
            char label[128];
            kf_tune_params_label (json_object_get (row, "params"), label, sizeof label);
            double speedup = json_number_value (json_object_get (row, "speedup"));
            printf ("  evaluated %-12s %-10s %-6s speedup %.2f (screen %.2f) limit %.3g s, "
                    "took %.2f s\n", label, s_str (row, "verdict"), s_str (row, "fidelity"),
                    speedup, json_number_value (json_object_get (row, "screen_speedup")),
                    json_number_value (json_object_get (row, "limit_s")),
                    json_number_value (json_object_get (row, "wall_s")));
            const char *mode = s_str (json_object_get (row, "params"), "MODE");
            const char *expect = !strcmp (mode, "wrong") ? "incorrect"
                                 : !strcmp (mode, "hang") ? "timeout" : "correct";
            CHECK (!strcmp (s_str (row, "verdict"), expect));
            CHECK (json_is_true (json_object_get (row, "ran")));
            CHECK (json_object_get (row, "skipped_reason") == NULL);
            bool is_full = !strcmp (s_str (row, "fidelity"), "full");
            //  The two correct configs are the two best: timed in full.
            CHECK (is_full == !strcmp (expect, "correct"));
            CHECK (is_full || !strcmp (s_str (row, "fidelity"), "screen"));
            full += is_full;
            if (!strcmp (s_str (row, "verdict"), "correct")) {
                //  Each recorded speedup is the row's own timings'.
                CHECK (speedup > 0 && json_number_value (json_object_get (row, "median_ns")) > 0
                       && json_number_value (json_object_get (row, "reference_ns")) > 0);
                CHECK (json_number_value (json_object_get (row, "screen_speedup")) > 0);
                if (is_full && (!want || speedup > want_speedup)) {
                    want = json_object_get (row, "params");
                    want_speedup = speedup;
                }
            }
            else
                CHECK (json_is_null (json_object_get (row, "speedup")));
            if (!strcmp (mode, "hang")) {
                //  Ended by the limit config 0's time set, and says so.
                printf ("  hang: %s\n", s_str (row, "detail"));
                CHECK (strstr (s_str (row, "detail"), "exceeded the") != NULL);
                CHECK (strstr (s_str (row, "detail"), "config 0 took") != NULL);
                CHECK (strstr (s_str (row, "detail"), "+ a 2 s floor") != NULL);
            }
        }
        CHECK (json_array_size (rows) == 4);
        CHECK (full == 2);
        CHECK (!strcmp (s_str (r, "verdict"), "correct"));
        CHECK (!strcmp (s_str (r, "fidelity"), "full"));
        CHECK (want && json_equal (json_object_get (r, "best_config"), want));
        CHECK (json_number_value (json_object_get (r, "speedup")) == want_speedup);
        //  The screens' protocol is short; the full runs are the job's.
        json_t *t = json_object_get (r, "tuning");
        json_t *sweep = json_object_get (t, "sweep_timing");
        CHECK (json_number_value (json_object_get (sweep, "min_time_s")) < 0.1);
        CHECK (json_number_value (json_object_get (sweep, "min_time_s")) >= 0.05);
        CHECK (json_integer_value (json_object_get (sweep, "min_samples")) == 5);
        CHECK (json_integer_value (json_object_get (json_object_get (t, "full_timing"),
                                                    "min_samples")) == 5);
        CHECK (json_integer_value (json_object_get (t, "measured_by")) == 0);
        CHECK (json_integer_value (json_object_get (t, "fully_timed")) == 2);
        CHECK (json_is_null (json_object_get (t, "stopped")));
        CHECK (json_number_value (json_object_get (t, "elapsed_s")) <= 120);
        char *ph = json_dumps (json_object_get (r, "phases_s"), JSON_COMPACT | JSON_REAL_PRECISION (3));
        printf ("  the best's full run: phases %s\n", ph);
        free (ph);
        printf ("  best %s, speedup %.2f; limits: config 0 %.3g s (%s), the others %.3g s (%s)\n",
                s_str (json_object_get (r, "best_config"), "MODE"),
                json_number_value (json_object_get (r, "speedup")),
                json_number_value (json_object_get (t, "first_limit_s")), s_str (t, "first_limit_why"),
                json_number_value (json_object_get (t, "sweep_time_limit_s")), s_str (t, "limit_why"));
    }
    else
        fprintf (stderr, "  sweep failed: %s\n", error);
    json_decref (r);
    free (error);

    //  A sweep whose time holds config 0 alone: with a floor that big a
    //  config's limit is config 0's (three quarters of 40 s), and the full
    //  run of config 0 is kept 30 s, so after config 0 the rest cannot
    //  fit; they are reported as not run, and config 0 is timed in full,
    //  all within the 40 s.
    kf_exec_config_t tight = { .time_limit_s = 30, .sweep_time_limit_s = 40,
                               .sweep_limit_factor = 3, .sweep_limit_floor_s = 1000,
                               .sweep_full_configs = 2 };
    r = s_eval_with (&tight, frames, eval_configs, &error);
    CHECK (r != NULL);
    if (r) {
        json_t *t = json_object_get (r, "tuning");
        printf ("  tight: %s; took %.2f s\n", s_str (t, "stopped"),
                json_number_value (json_object_get (t, "elapsed_s")));
        CHECK (strstr (s_str (t, "stopped"), "time ran out after config 0") != NULL);
        CHECK (json_integer_value (json_object_get (t, "screened")) == 1);
        CHECK (json_integer_value (json_object_get (t, "not_run")) == 3);
        CHECK (json_number_value (json_object_get (t, "elapsed_s")) <= 40);
        json_array_foreach (json_object_get (r, "configs"), i, row) {
            CHECK (json_is_true (json_object_get (row, "ran")) == (i == 0));
            if (i > 0) {
                CHECK (!strcmp (s_str (row, "verdict"), "not_run"));
                CHECK (strstr (s_str (row, "skipped_reason"), "config 0 took") != NULL);
            }
        }
        CHECK (!strcmp (s_str (s_cfg_row (r, 0), "fidelity"), "full"));
        CHECK (!strcmp (s_str (r, "verdict"), "correct") && !strcmp (s_str (r, "fidelity"), "full"));
        CHECK (!strcmp (s_str (json_object_get (r, "best_config"), "MODE"), "slow"));
    }
    else
        fprintf (stderr, "  tight sweep failed: %s\n", error);
    json_decref (r);
    free (error);

    //  Only the wrong config: no config is right, the verdict is its own.
    json_t *only_wrong = json_pack ("[{s:{s:s}, s:i}]", "params", "MODE", "wrong", "frame", 2);
    r = s_eval (frames, only_wrong, &error);
    if (!r)
        fprintf (stderr, "  only the wrong config: job failed: %s\n", error ? error : "?");
    CHECK (r && !strcmp (s_str (r, "verdict"), "incorrect"));
    CHECK (r && json_is_null (json_object_get (r, "best_config")));
    CHECK (r && json_array_size (json_object_get (r, "configs")) == 1);
    json_decref (r);
    free (error);
    json_decref (only_wrong);

    //  A config naming the reference's frame, or none, is a bad job.
    json_t *bad = json_pack ("[{s:{s:s}, s:i}]", "params", "MODE", "fast", "frame", 4);
    r = s_eval (frames, bad, &error);
    CHECK (r == NULL && error && strstr (error, "configs[0]"));
    free (error);
    json_decref (bad);

    json_decref (eval_configs);
    zmsg_destroy (&frames);
    s_result_free (&res);

    //  A default point that does not build: the source does not compile,
    //  whatever the others do; the table still says which did.
    char *bad_default = s_source ("#define MODE broken\n", s_tuned);
    res = s_compile (bad_default, 16);
    CHECK (res.ok && json_is_false (json_object_get (res.result, "compiled")));
    CHECK (res.frames == NULL);
    CHECK (json_array_size (json_object_get (res.result, "configs")) == 5);
    s_result_free (&res);
    free (bad_default);

    //  A cap of 1 turns the sweep off: today's single build.
    res = s_compile (s_tuned, 1);
    CHECK (res.ok && res.frames && zmsg_size (res.frames) == 1);
    CHECK (json_object_get (res.result, "configs") == NULL);
    s_result_free (&res);
    s_result_free (&ref);
}

int
main (int argc, char **argv)
{
    if (argc >= 3 && strcmp (argv[1], "--eval-runner") == 0)
        return kf_runner_main (argc, argv);
    if (argc >= 3 && strcmp (argv[1], "--eval-child") == 0)
        return kf_exec_child_main (argv[2]);
    s_test_plan ();
    s_test_sweep ();
    return kf_test_done ("test_tune");
}
