/*  test_target_round13.c - round 13 of the model in the loop on the
 *  Target section (coordinator/kf_prompt_budget.c; the probe's side is
 *  test_host_caps.c's):
 *  - the cold-cache read of all cores at once stands beside one core's,
 *    and one core's L2 read rate is stated for the host;
 *  - the task's traffic line gives its time at the cold read rates, the
 *    writes at the read rate said to be an estimate;
 *  - an elementwise task gets a budget of cycles per vector at one core
 *    and at all cores, and the vector FMAs a cycle the peak implies;
 *  - each line is absent when a figure it rests on is.
 */
#include "../../coordinator/kf_prompt_class.h"
#include "../../coordinator/kf_prompt_target.h"
#include "../kf_test.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

static char *
s_target (json_t *hw, const char *target)
{
    char *text = NULL;
    size_t size = 0;
    FILE *f = open_memstream (&text, &size);
    if (!f)
        return NULL;
    kf_prompt_target_section (f, target, !strcmp (target, "cuda") ? "cuda" : "c", hw, NULL);
    fclose (f);
    return text;
}

//  The erf-GELU of round 13 over R x C floats.
static json_t *
s_gelu (int r, int c)
{
    return json_pack ("{s:s, s:s, s:s, s:[{s:s, s:[i,i], s:s}], s:[{s:s, s:[i,i], s:s}],"
                      " s:{s:s, s:s}, s:{s:f, s:f}}",
                      "name", "gelu_erf", "op", "gelu_erf", "description", "a task", "inputs",
                      "name", "x", "shape", r, c, "dtype", "f32", "outputs", "name", "out0",
                      "shape", r, c, "dtype", "f32", "reference", "language", "pytorch",
                      "source",
                      "class Model(nn.Module):\n    def forward(self, x):\n"
                      "        return 0.5 * x * (1.0 + torch.erf(x / math.sqrt(2.0)))\n",
                      "tolerance", "rtol", 0.01, "atol", 1e-5);
}

static json_t *
s_matmul (void)
{
    return json_pack ("{s:s, s:s, s:s, s:[{s:s, s:[i,i], s:s}, {s:s, s:[i,i], s:s}],"
                      " s:[{s:s, s:[i,i], s:s}], s:{s:s, s:s}, s:{s:f, s:f}}",
                      "name", "mm", "op", "mm", "description", "a task", "inputs", "name", "a",
                      "shape", 512, 512, "dtype", "f32", "name", "b", "shape", 512, 512, "dtype",
                      "f32", "outputs", "name", "out0", "shape", 512, 512, "dtype", "f32",
                      "reference", "language", "pytorch", "source",
                      "class Model(nn.Module):\n    def forward(self, a, b):\n"
                      "        return torch.matmul(a, b)\n",
                      "tolerance", "rtol", 0.01, "atol", 1e-5);
}

//  A 2-CPU AMD host as its worker reports it (figures of this machine),
//  with the run's TASK.
static json_t *
s_hw (json_t *task)
{
    json_t *hw = json_pack (
        "{s:s, s:s, s:[{s:s, s:i, s:f, s:f, s:s, s:f, s:f, s:f, s:f, s:f, s:f, s:I, s:f,"
        " s:f, s:i, s:i, s:i, s:s, s:f, s:I, s:f, s:I, s:f, s:I}]}",
        "backend", "host", "arch", "x86_64", "devices", "name", "AMD EPYC", "cores", 2,
        "copy_bandwidth_gbs", 62.0, "peak_gflops", 420.0, "peak_source", "avx512f",
        "peak_gflops_one_core", 204.0, "peak_gflops_all_threads", 400.0,
        "thread_start_join_us", 60.0, "copy_one_core_gbs", 44.3, "copy_one_core_traffic_gbs",
        66.5, "copy_stream_one_core_gbs", 53.8, "copy_one_core_bytes", (json_int_t) 33554432,
        "clock_mhz", 2096.0, "clock_mhz_measured", 3400.0, "logical_cpus", 2,
        "physical_cores", 2, "threads_per_core", 1, "isa", "sse4.2 avx avx2 fma avx512f",
        "read_cold_one_core_gbs", 31.5, "read_cold_one_core_bytes", (json_int_t) 33554432,
        "read_cold_all_cores_gbs", 43.2, "read_cold_all_cores_bytes", (json_int_t) 33554432,
        "read_l2_one_core_gbs", 195.2, "read_l2_one_core_bytes", (json_int_t) 524288);
    if (task)
        json_object_set (hw, "task", task);
    return hw;
}

static json_t *
s_dev (json_t *hw)
{
    return json_array_get (json_object_get (hw, "devices"), 0);
}

//  The number after AFTER in TEXT, or -1.
static double
s_after (const char *text, const char *after)
{
    const char *p = text ? strstr (text, after) : NULL;
    double v = -1;
    if (!p || sscanf (p + strlen (after), "%lf", &v) != 1)
        fprintf (stderr, "no number after \"%s\"\n", after);
    return v;
}

//  Whether GOT is WANT within the rounding the text uses (whole numbers
//  from 10, one decimal below) and a 1% margin.
static bool
s_near (double got, double want)
{
    double step = want >= 10 ? 0.5 : 0.05;
    bool ok = fabs (got - want) <= step + 0.01 * want;
    if (!ok)
        fprintf (stderr, "got %g, want %g\n", got, want);
    return ok;
}

static void
s_reads (void)
{
    json_t *spec = s_matmul ();
    json_t *hw = s_hw (spec);
    char *p = s_target (hw, "host");
    printf ("%s\n", p ? p : "");
    CHECK (kf_test_has (p, "Memory read by one core with cold caches: 31.5 GB/s"));
    CHECK (kf_test_has (p, "  Memory read by all cores at once with cold caches: 43.2 GB/s in all (one "
                           "thread on each of the 2 logical CPUs reading its share of 32.0 MiB flushed "
                           "first, let go together and timed from the first start to the last finish, "
                           "the best of three; bytes read), 1.4x one core's: the rate a threaded "
                           "kernel's inputs arrive at in the timing.\n"));
    //  The L2 for a matrix product's blocks: 195.2e9 / 3.4e9 = 57 bytes
    //  a cycle, 6.2x the cold read.
    CHECK (kf_test_has (p, "  One core reading from its L2: 512 KiB (half the L2) read again and "
                           "again, warm, 195 GB/s, 57 bytes a cycle at 3400 MHz, 6.2x its cold read "
                           "from memory (the best of twenty runs; bytes read)"));
    //  No budget for a matrix product.
    CHECK (p && !strstr (p, "Arithmetic budget"));
    //  Round 17: no line on all cores' L2 where none was measured.
    CHECK (p && !strstr (p, "reading from L2 at once"));
    free (p);
    //  Round 17: all cores' L2 read beside one core's (two threads of an
    //  L2-bound tile kernel scaled poorly, and nothing said why).
    json_object_set_new (s_dev (hw), "read_l2_all_cores_gbs", json_real (380.0));
    json_object_set_new (s_dev (hw), "read_l2_all_cores_bytes", json_integer (524288));
    p = s_target (hw, "host");
    CHECK (kf_test_has (p, "  Every logical CPU reading from L2 at once (512 KiB in all, a quarter "
                           "of an L2 each, let go together): 380 GB/s, 1.95x one core's; threads "
                           "whose blocks stay in L2 can draw about 1.9x one core's reads.\n"));
    free (p);
    json_object_set_new (s_dev (hw), "read_l2_all_cores_gbs", json_real (201.0));
    p = s_target (hw, "host");
    //  Round 35: beside a topology of no SMT siblings, said as such.
    CHECK (kf_test_has (p, "201 GB/s, 1.03x one core's; near one core's, so threads whose blocks "
                           "stay in L2 gain little in their reads (this host reports no SMT "
                           "siblings, but a virtual machine's CPUs may still share a physical "
                           "core and its L2 beneath it).\n"));
    free (p);
    json_object_del (s_dev (hw), "physical_cores");
    p = s_target (hw, "host");
    CHECK (kf_test_has (p, "gain little in their reads (the logical CPUs may share a core and its "
                           "L2).\n"));
    free (p);
    json_object_del (s_dev (hw), "read_l2_all_cores_gbs");
    //  All cores no faster than one: said what it means.
    json_object_set_new (s_dev (hw), "read_cold_all_cores_gbs", json_real (33.0));
    p = s_target (hw, "host");
    CHECK (kf_test_has (p, "1.0x one core's: the rate a threaded kernel's inputs arrive at in the "
                           "timing; near one core's, so by this figure more threads speed the "
                           "arithmetic, not the reads.\n"));
    free (p);
    //  Neither measured: neither line.
    json_object_del (s_dev (hw), "read_cold_all_cores_gbs");
    json_object_set_new (s_dev (hw), "read_l2_one_core_gbs", json_real (0));
    p = s_target (hw, "host");
    CHECK (p && !strstr (p, "Memory read by all cores"));
    CHECK (p && !strstr (p, "from its L2"));
    CHECK (kf_test_has (p, "Memory read by one core with cold caches"));
    free (p);
    //  A GPU target says none of it.
    json_decref (hw);
    hw = s_hw (spec);
    p = s_target (hw, "cuda");
    CHECK (p && !strstr (p, "cold caches") && !strstr (p, "from its L2"));
    free (p);
    json_decref (hw);
    json_decref (spec);
}

static void
s_traffic (void)
{
    json_t *spec = s_gelu (4096, 4096);
    json_t *hw = s_hw (spec);
    CHECK (kf_prompt_task_class (spec) == KF_CLASS_ELEMENTWISE);
    char *p = s_target (hw, "host");
    //  64 MiB read, 64 MiB written.
    double n = 4096.0 * 4096 * 4, m = n;
    //  Round 17: N + 2M too, the floor of ordinary stores.
    char want[800];
    snprintf (want, sizeof want, ". With the timing's cold caches, reading N takes about %.3g ms "
              "at one core's cold read rate (31.5 GB/s) and %.3g ms at all cores' (43.2 GB/s); "
              "with the writes at that rate too (an estimate: no write rate was measured cold), "
              "N + M, the cold estimate with streaming stores, takes about %.3g ms on one core and "
              "%.3g ms on all cores, and N + 2M = 192.0 MiB, the cold estimate with ordinary stores "
              "(each reads its line first), about %.3g ms on one core and %.3g ms on all "
              "cores.", n / 31.5e6, n / 43.2e6, (n + m) / 31.5e6, (n + m) / 43.2e6,
              (n + 2 * m) / 31.5e6, (n + 2 * m) / 43.2e6);
    CHECK (kf_test_has (p, "This task reads N = 64.0 MiB and writes M = 64.0 MiB: at these one-core "
                           "(warm-cache) copy rates"));
    CHECK (kf_test_has (p, want));
    //  Round 18: the copies' saving and the floors' told apart.
    //  Round 23: estimates, not bounds.
    CHECK (kf_test_has (p, "cores. The two savings differ because the cold estimates count bytes "
                           "alone, the writes at the read rate, while the copies above time each "
                           "kind of store as it runs: take the copies' figure for what streaming "
                           "stores save, and the estimates for about how far a kernel is from "
                           "done. They are estimates, not bounds: a core overlaps its reads and "
                           "writes in part, so a kernel may come in under them.\n"));
    free (p);
    //  One core's cold rate alone.
    json_object_del (s_dev (hw), "read_cold_all_cores_gbs");
    p = s_target (hw, "host");
    snprintf (want, sizeof want, "reading N takes about %.3g ms at one core's cold read rate "
              "(31.5 GB/s); with the writes at that rate too (an estimate: no write rate was "
              "measured cold), N + M, the cold estimate with streaming stores, takes about %.3g ms on "
              "one core, and N + 2M = 192.0 MiB, the cold estimate with ordinary stores (each reads its "
              "line first), about %.3g ms on one core.", n / 31.5e6, (n + m) / 31.5e6,
              (n + 2 * m) / 31.5e6);
    CHECK (kf_test_has (p, want));
    CHECK (p && !strstr (p, "at all cores'"));
    free (p);
    //  No cold rate: the warm line as before.
    json_object_del (s_dev (hw), "read_cold_one_core_gbs");
    p = s_target (hw, "host");
    CHECK (kf_test_has (p, "This task reads N = 64.0 MiB"));
    CHECK (p && !strstr (p, "With the timing's cold caches"));
    free (p);
    json_decref (hw);
    json_decref (spec);
}

//  The budget's figures, computed here from the inputs: the task's N + M
//  over the cold rate, times the clock, over its vectors of LANES floats
//  (on all cores, times the cores); the FMAs a cycle, the peak over 2
//  flops x LANES x the clock.
static void
s_expect (double mhz, double lanes, double cold_one, double cold_all, double cores,
          double peak, double *one, double *all, double *fmas)
{
    double bytes = 2 * 4096.0 * 4096 * 4, vectors = ceil (4096.0 * 4096 / lanes);
    *one = bytes / (cold_one * 1e9) * mhz * 1e6 / vectors;
    *all = bytes / (cold_all * 1e9) * mhz * 1e6 * cores / vectors;
    *fmas = peak * 1e9 / (2 * lanes * mhz * 1e6);
}

static void
s_budget (void)
{
    json_t *spec = s_gelu (4096, 4096);
    json_t *hw = s_hw (spec);
    char *p = s_target (hw, "host");
    double one, all, fmas;
    s_expect (3400, 16, 31.5, 43.2, 2, 204, &one, &all, &fmas);
    CHECK (kf_test_has (p, "  Arithmetic budget per vector of 16 f32 lanes (AVX-512), 1048576 vectors "
                           "of outputs: the task's N + M = 128.0 MiB, its bytes with streaming stores, at "
                           "the cold read rates above"));
    CHECK (s_near (s_after (p, "ms on one core, "), one));
    CHECK (s_near (s_after (p, "ms on all 2 cores, "), all));
    CHECK (kf_test_has (p, "cycles per vector at 3400 MHz"));
    CHECK (kf_test_has (p, "cycles per vector on each core (each with 1/2 of the vectors)"));
    CHECK (s_near (s_after (p, "One core's measured FMA peak, 204 GFLOP/s, is "), fmas));
    const char *q = p ? strstr (p, "(peak / (2 flops x 16 lanes x clock)), so the budget is "
                                   "about ")
                      : NULL;
    double a = -1, b = -1;
    CHECK (q && sscanf (strstr (q, "about") + 5, "%lf vector FMAs per vector on one core and %lf "
                        "on all cores", &a, &b) == 2);
    CHECK (s_near (a, one * fmas) && s_near (b, all * fmas));
    //  Round 20: then the budget with ordinary stores (N + 2M).
    CHECK (kf_test_has (p, "on all cores (or as many other vector instructions of like throughput). "
                           "With ordinary stores, which read each output line before writing it"));
    CHECK (kf_test_has (p, " on all cores: a kernel's position line sets its cycles against "
                           "the budget of the stores its code uses. Derived, not measured:"));
    const char *line = p ? strstr (p, "  Arithmetic budget") : NULL;
    if (line)
        printf ("%.*s\n", (int) strcspn (line, "\n"), line);
    free (p);

    //  Compiled for AVX2 only (the hosts' common list): 8 lanes.
    json_object_set_new (hw, "compile_isa", json_string ("sse4.2 avx avx2 fma"));
    p = s_target (hw, "host");
    s_expect (3400, 8, 31.5, 43.2, 2, 204, &one, &all, &fmas);
    CHECK (kf_test_has (p, "Arithmetic budget per vector of 8 f32 lanes (AVX2), 2097152 vectors"));
    CHECK (s_near (s_after (p, "ms on one core, "), one));
    CHECK (s_near (s_after (p, "One core's measured FMA peak, 204 GFLOP/s, is "), fmas));
    free (p);
    json_object_del (hw, "compile_isa");

    //  The reported clock where none was measured; no peak: no FMAs.
    json_object_del (s_dev (hw), "clock_mhz_measured");
    json_object_del (s_dev (hw), "peak_gflops_one_core");
    p = s_target (hw, "host");
    s_expect (2096, 16, 31.5, 43.2, 2, 0, &one, &all, &fmas);
    CHECK (s_near (s_after (p, "ms on one core, "), one));
    CHECK (kf_test_has (p, "cycles per vector at 2096 MHz"));
    CHECK (p && strstr (p, "Arithmetic budget") && !strstr (p, "vector FMAs a cycle"));
    free (p);

    //  One core's cold rate alone: no all-core budget.
    json_object_del (s_dev (hw), "read_cold_all_cores_gbs");
    p = s_target (hw, "host");
    CHECK (kf_test_has (p, "cycles per vector at 2096 MHz. Derived, not measured"));
    CHECK (p && !strstr (p, "on all 2 cores"));
    free (p);
    json_decref (hw);

    //  Each input missing: no line.
    static const char *const inputs[] = { "isa", "read_cold_one_core_gbs", "clock" };
    for (size_t i = 0; i < sizeof inputs / sizeof inputs[0]; i++) {
        hw = s_hw (spec);
        if (!strcmp (inputs[i], "clock")) {
            json_object_del (s_dev (hw), "clock_mhz");
            json_object_del (s_dev (hw), "clock_mhz_measured");
        }
        else if (!strcmp (inputs[i], "read_cold_one_core_gbs")) {
            json_object_set_new (s_dev (hw), "read_cold_one_core_gbs", json_real (0));
            json_object_del (s_dev (hw), "read_cold_all_cores_gbs");
        }
        else
            json_object_del (s_dev (hw), inputs[i]);
        p = s_target (hw, "host");
        if (p && strstr (p, "Arithmetic budget"))
            fprintf (stderr, "a budget without %s\n", inputs[i]);
        CHECK (p && !strstr (p, "Arithmetic budget"));
        free (p);
        json_decref (hw);
    }
    json_decref (spec);
    //  No task: no traffic, no budget.
    hw = s_hw (NULL);
    p = s_target (hw, "host");
    CHECK (p && !strstr (p, "Arithmetic budget") && !strstr (p, "This task reads"));
    free (p);
    json_decref (hw);
}

//  Round 14: a matrix product's operations and the least time they take
//  at the measured peaks (512^3: 268 million, 1.32 ms at 204 GFLOP/s, 0.639
//  ms at 420).
static void
s_product (void)
{
    json_t *spec = s_matmul ();
    json_t *hw = s_hw (spec);
    char *p = s_target (hw, "host");
    CHECK (kf_test_has (p, "Compute floor: the product's 2 x M x N x K = 268.4 million operations "
                           "(M = 512, N = 512, K = 512 per product) take at least 1.32 ms at one "
                           "core's measured FMA peak and 0.639 ms at every core's together (420 "
                           "GFLOP/s)"));
    free (p);
    json_object_del (s_dev (hw), "peak_gflops_one_core");
    p = s_target (hw, "host");
    CHECK (p && !strstr (p, "Compute floor"));
    free (p);
    json_decref (hw);
    json_decref (spec);
    //  An elementwise task has no product.
    spec = s_gelu (64, 64);
    hw = s_hw (spec);
    p = s_target (hw, "host");
    CHECK (p && !strstr (p, "Compute floor"));
    free (p);
    json_decref (hw);
    json_decref (spec);
}

int
main (void)
{
    s_reads ();
    s_traffic ();
    s_budget ();
    s_product ();
    return kf_test_done ("test_target_round13");
}
