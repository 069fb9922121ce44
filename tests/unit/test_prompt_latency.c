/*  test_prompt_latency.c - what a model in the loop (host target, AVX2
 *  2-CPU VM) found missing for a prefetch distance and a GEMM's blocks:
 *
 *  1. no load latency: the exec worker now measures one core's from
 *     memory and from L2 (kf_host_measure_latency, kf_host_latency.c);
 *  2. the Target section now says what it means for a prefetch distance,
 *     latency x one core's cold read rate in bytes and lines
 *     (kf_prompt_host_reads), only where the figures exist;
 *  3. the product's ideas name an MR x NR register tile and KC, MC cache
 *     blocks, and no size came from this host's caches: kf_prompt_blocking
 *     computes them, and the Target section quotes them for a product
 *     (kf_prompt_blocking_line).
 */
#include "../../coordinator/kf_prompt_blocking.h"
#include "../../coordinator/kf_prompt_budget.h"
#include "../../coordinator/kf_prompt_target.h"
#include "../../exec-worker/kf_host_measure.h"
#include "../kf_test.h"
#include "../kf_test_text.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

//  1. The keys, finite and positive, and the cycles at the clock given.
static void
test_measured (void)
{
    json_t *d = json_pack ("{s:f}", "clock_mhz_measured", 3000.0);
    kf_host_measure_latency (d);
    char *text = json_dumps (d, JSON_COMPACT);
    printf ("measured: %s\n", text ? text : "");
    free (text);
    double mem = json_number_value (json_object_get (d, "mem_latency_ns"));
    CHECK (json_is_number (json_object_get (d, "mem_latency_ns")));
    CHECK (isfinite (mem) && mem > 0);
    CHECK (json_is_number (json_object_get (d, "mem_latency_cycles")));
    double cycles = json_number_value (json_object_get (d, "mem_latency_cycles"));
    CHECK (isfinite (cycles) && fabs (cycles - mem * 3.0) < 0.2);
    //  This suite's hosts know their L2's size (sysfs or the C library).
    double l2 = json_number_value (json_object_get (d, "l2_latency_ns"));
    CHECK (json_is_number (json_object_get (d, "l2_latency_ns")));
    CHECK (isfinite (l2) && l2 > 0 && l2 < mem);
    CHECK (json_number_value (json_object_get (d, "l2_latency_cycles")) > 0);
    json_decref (d);
    //  No clock: the nanoseconds alone.
    d = json_object ();
    kf_host_measure_latency (d);
    CHECK (json_object_get (d, "mem_latency_ns") && !json_object_get (d, "mem_latency_cycles"));
    json_decref (d);
}

//  2. The prefetch distance, from fixed figures.
static void
test_prefetch (void)
{
    json_t *d = json_pack ("{s:f, s:I, s:f, s:f, s:f, s:f, s:f}", "read_cold_one_core_gbs", 14.0,
                           "read_cold_one_core_bytes", (json_int_t) 33554432, "mem_latency_ns",
                           95.0, "mem_latency_cycles", 296.2, "read_l2_one_core_gbs", 99.0,
                           "l2_latency_ns", 3.7, "l2_latency_cycles", 11.5);
    char *text;
    KF_TEST_CAPTURE (text, f, kf_prompt_host_reads (f, d));
    printf ("%s", text ? text : "(none)\n");
    //  95 ns x 14 GB/s = 1330 bytes, 20.8 lines; 3.7 ns x 99 GB/s = 366
    //  bytes, 5.7 lines.
    CHECK (kf_test_has (text, "95 ns from memory (296 cycles), 3.7 ns from L2 (12 cycles)"));
    CHECK (kf_test_has (text, "At 95 ns and one core's cold read rate of 14.0 GB/s a core needs "
                              "about 1.3 KiB, 21 cache lines, in flight"));
    CHECK (kf_test_has (text, "prefetch that far ahead of use"));
    CHECK (kf_test_has (text, "from L2 (3.7 ns at 99 GB/s) about 366 bytes, 6 lines"));
    free (text);
    //  Without the latency, or without the read rate, no such sentence.
    json_object_del (d, "mem_latency_ns");
    KF_TEST_CAPTURE (text, f, kf_prompt_host_reads (f, d));
    CHECK (text && !strstr (text, "latency") && !strstr (text, "in flight"));
    free (text);
    json_object_set_new (d, "mem_latency_ns", json_real (95.0));
    json_object_del (d, "read_cold_one_core_gbs");
    KF_TEST_CAPTURE (text, f, kf_prompt_host_reads (f, d));
    CHECK (text && !strstr (text, "in flight"));
    free (text);
    json_decref (d);
}

//  3. The blocks of a 32 KiB L1 / 512 KiB L2 AVX2 host and a 48 KiB L1 /
//  2 MiB L2 AVX-512 host.
static void
test_blocks (void)
{
    kf_blocking_t b;
    //  AVX2: NR 16, MR (16 - 3) / 2 = 6; KC 16384 / ((16 + 6) x 4) =
    //  186 -> 184; MC 262144 / (184 x 4) = 356 -> 354; NC with a 16 MiB
    //  share 8388608 / 736 = 11397 -> 11392.
    CHECK (kf_prompt_blocking (8, 32768, 524288, 0, &b) == 0);
    CHECK (b.nr == 16 && b.mr == 6 && b.registers == 16);
    CHECK (b.kc == 184 && b.mc == 354 && b.nc == 0);
    CHECK (kf_prompt_blocking (8, 32768, 524288, 16 << 20, &b) == 0 && b.nc == 11392);
    //  AVX-512: NR 32, MR (32 - 3) / 2 = 14; KC 24576 / ((32 + 14) x 4)
    //  = 133 -> 128; MC 1048576 / (128 x 4) = 2048 -> 2044; NC with a
    //  1.5 MiB share 786432 / 512 = 1536.
    CHECK (kf_prompt_blocking (16, 49152, 2097152, 1.5 * 1024 * 1024, &b) == 0);
    CHECK (b.nr == 32 && b.mr == 14 && b.registers == 32);
    CHECK (b.kc == 128 && b.mc == 2044 && b.nc == 1536);
    //  Blocks every rule keeps: KC x NR + MR x KC floats in half of L1d,
    //  MC x KC in half of L2, each a multiple of its step.
    CHECK ((b.kc * b.nr + b.mr * b.kc) * 4 <= 49152 / 2 && b.kc % 8 == 0);
    CHECK (b.mc * b.kc * 4 <= 2097152 / 2 && b.mc % b.mr == 0);
    //  No SSE or NEON tile, no unknown cache.
    CHECK (kf_prompt_blocking (4, 32768, 524288, 0, &b) == -1);
    CHECK (kf_prompt_blocking (8, 0, 524288, 0, &b) == -1);
    CHECK (kf_prompt_blocking (8, 32768, 0, 0, &b) == -1);
}

//  a [384][1024] @ b [768][1024]^T.
static json_t *
s_gemm (const char *dtype)
{
    return json_pack ("{s:s, s:s, s:s, s:[{s:s, s:[i, i], s:s}, {s:s, s:[i, i], s:s}],"
                      " s:[{s:s, s:[i, i], s:s}], s:{s:s, s:s}, s:{s:f, s:f}}",
                      "name", "mm_bt", "op", "mm_bt", "description", "a @ b.T", "inputs", "name",
                      "in0", "shape", 384, 1024, "dtype", dtype, "name", "in1", "shape", 768,
                      1024, "dtype", dtype, "outputs", "name", "out0", "shape", 384, 768,
                      "dtype", dtype, "reference", "language", "pytorch", "source",
                      "class Model(nn.Module):\n    def forward(self, a, b):\n"
                      "        return a @ b.t()\n",
                      "tolerance", "rtol", 0.01, "atol", 1e-5);
}

//  This 2-CPU VM: 32 KiB L1d and 512 KiB L2 a core, 32 MiB of L3 for both.
static json_t *
s_hw (json_t *task)
{
    return json_pack ("{s:s, s:s, s:o, s:[{s:s, s:i, s:i, s:f, s:f, s:f, s:f, s:f, s:i, s:s}]}",
                      "backend", "host", "compile_isa", "sse4.2 avx avx2 fma", "task", task,
                      "devices", "name", "AMD EPYC", "cores", 2, "physical_cores", 2,
                      "clock_mhz_measured", 3100.0, "peak_gflops_one_core", 100.0, "l1d_bytes",
                      32768.0, "l2_bytes", 524288.0, "l3_bytes", 33554432.0, "l3_shared_cpus", 2,
                      "isa", "sse4.2 avx avx2 fma");
}

static char *
s_target (json_t *hw)
{
    char *text;
    KF_TEST_CAPTURE (text, f, kf_prompt_target_section (f, "host", "c", hw, NULL));
    return text;
}

static void
test_blocks_line (void)
{
    json_t *hw = s_hw (s_gemm ("f32"));
    char *text = s_target (hw);
    const char *line = text ? strstr (text, "  Block sizes for this host") : NULL;
    printf ("%.*s", line ? (int) (strchr (line, '\n') + 1 - line) : 7, line ? line : "(none)\n");
    CHECK (kf_test_has (line, "derived from its caches and AVX2, f32"));
    CHECK (kf_test_has (line, "NR = 16 (2 vectors of 8 floats) and MR = 6 (12 accumulators"));
    CHECK (kf_test_has (line, "KC = 184, so a KC x NR panel of B (11.5 KiB) and an MR x KC "
                              "sliver of A (4.3 KiB) take about half of the 32 KiB L1d"));
    CHECK (kf_test_has (line, "MC = 354, so an MC x KC block of A (254.4 KiB) takes about half "
                              "of the 512 KiB L2"));
    //  Round 43: NC = 11392 is past N = 768: said as the whole of N.
    CHECK (kf_test_has (line, "all 768 columns of B make one NC panel (a KC x N panel of B, "
                              "552.0 KiB, within half of one core's 16.0 MiB share of the L3)"));
    CHECK (!kf_test_has (line, "NC = 11392"));
    free (text);
    json_decref (hw);
    //  With AVX-512 enabled by the flags: its tile.
    hw = s_hw (s_gemm ("f32"));
    json_object_set_new (hw, "compile_isa", json_string ("sse4.2 avx avx2 fma avx512f"));
    text = s_target (hw);
    CHECK (kf_test_has (text, "NR = 32 (2 vectors of 16 floats) and MR = 14"));
    free (text);
    json_decref (hw);
    //  Not for a product of another type, nor for an elementwise task.
    hw = s_hw (s_gemm ("f16"));
    text = s_target (hw);
    CHECK (text && !strstr (text, "Block sizes for this host"));
    free (text);
    json_decref (hw);
    json_t *ew = json_pack ("{s:s, s:s, s:s, s:[{s:s, s:[i], s:s}], s:[{s:s, s:[i], s:s}],"
                            " s:{s:s, s:s}, s:{s:f, s:f}}",
                            "name", "t", "op", "relu", "description", "relu", "inputs", "name",
                            "in0", "shape", 4096, "dtype", "f32", "outputs", "name", "out0",
                            "shape", 4096, "dtype", "f32", "reference", "language", "pytorch",
                            "source", "def forward(self, x):\n    return torch.relu(x)\n",
                            "tolerance", "rtol", 0.01, "atol", 1e-5);
    hw = s_hw (ew);
    text = s_target (hw);
    CHECK (text && !strstr (text, "Block sizes for this host"));
    free (text);
    json_decref (hw);
}

int
main (void)
{
    test_measured ();
    test_prefetch ();
    test_blocks ();
    test_blocks_line ();
    return kf_test_done ("test_prompt_latency");
}
