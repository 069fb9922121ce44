/*  test_target_round15.c - round 15 of the model in the loop on the
 *  Target section (coordinator/kf_prompt_core.c; the probe's side is
 *  test_host_vec.c's and test_host_caps.c's):
 *  - the host's CPU is named by its CPUID family and model, with the
 *    microarchitecture where the table knows it (a virtual machine's
 *    model name was "AMD EPYC"), the numbers alone where it does not;
 *  - the measured vector divide, square root, reciprocal estimate and FMA
 *    costs are stated in cycles, throughput and latency, with what a
 *    divide costs in FMAs and an estimate with a Newton step against a
 *    divide, said to be derived;
 *  - neither line without its figures, nor for a GPU.
 */
#include "../../coordinator/kf_prompt_core.h"
#include "../../coordinator/kf_prompt_target.h"
#include "../kf_test.h"
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

//  This machine's device as its worker reports it (figures its probe
//  printed: a 2-CPU Zen 5 virtual machine).
static json_t *
s_hw (void)
{
    return json_pack ("{s:s, s:s, s:[{s:s, s:i, s:f, s:f, s:s, s:f, s:f, s:s, s:i, s:i, s:i,"
                      " s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f}]}",
                      "backend", "host", "arch", "x86_64", "devices", "name", "AMD EPYC", "cores",
                      2, "copy_bandwidth_gbs", 62.0, "peak_gflops", 420.0, "peak_source",
                      "avx512f", "peak_gflops_one_core", 229.4, "clock_mhz_measured", 3661.4,
                      "cpu_vendor", "AuthenticAMD", "cpu_family", 26, "cpu_model", 2,
                      "vec_lanes", 16, "vec_div_cycles", 2.51, "vec_div_latency_cycles", 10.0,
                      "vec_sqrt_cycles", 4.51, "vec_sqrt_latency_cycles", 14.0, "vec_rcp_cycles",
                      0.5, "vec_rcp_latency_cycles", 5.0, "vec_fma_cycles", 0.5,
                      "vec_fma_latency_cycles", 4.0);
}

static json_t *
s_dev (json_t *hw)
{
    return json_array_get (json_object_get (hw, "devices"), 0);
}

//  The table: each generation at a model the kernel's ranges put it at,
//  and what it does not know.
static void
s_table (void)
{
    static const struct {
        const char *vendor;
        long family, model;
        const char *want;
    } cases[] = {
        { "AuthenticAMD", 0x1a, 0x02, "AMD Zen 5" },   // EPYC 9005 (Turin)
        { "AuthenticAMD", 0x1a, 0x44, "AMD Zen 5" },   // Ryzen 9000 (Granite Ridge)
        { "AuthenticAMD", 0x19, 0x11, "AMD Zen 4" },   // EPYC 9004 (Genoa)
        { "AuthenticAMD", 0x19, 0x61, "AMD Zen 4" },   // Ryzen 7000 (Raphael)
        { "AuthenticAMD", 0x19, 0xa0, "AMD Zen 4" },   // EPYC 97x4 (Bergamo)
        { "AuthenticAMD", 0x19, 0x01, "AMD Zen 3" },   // EPYC 7003 (Milan)
        { "AuthenticAMD", 0x19, 0x21, "AMD Zen 3" },   // Ryzen 5000 (Vermeer)
        { "AuthenticAMD", 0x17, 0x31, "AMD Zen 2" },   // EPYC 7002 (Rome)
        { "AuthenticAMD", 0x17, 0x71, "AMD Zen 2" },   // Ryzen 3000 (Matisse)
        { "AuthenticAMD", 0x17, 0x01, "AMD Zen" },     // EPYC 7001 (Naples)
        { "AuthenticAMD", 0x17, 0x08, "AMD Zen+" },    // Ryzen 2000 (Pinnacle Ridge)
        { "AuthenticAMD", 0x17, 0x18, "AMD Zen+" },    // Picasso
        { "GenuineIntel", 6, 0x8f, "Intel Sapphire Rapids" },
        { "GenuineIntel", 6, 0xcf, "Intel Emerald Rapids" },
        { "GenuineIntel", 6, 0xad, "Intel Granite Rapids" },
        { "GenuineIntel", 6, 0x6a, "Intel Ice Lake-SP" },
        { "GenuineIntel", 6, 0x55, "Intel Skylake-SP core" },
        { "GenuineIntel", 6, 0x9e, NULL },              // a desktop core: not in the table
        { "GenuineIntel", 0x1a, 0x02, NULL },           // AMD's numbers, Intel's name
        { "AuthenticAMD", 6, 0x8f, NULL },
        { "AuthenticAMD", 0x15, 0x02, NULL },           // Bulldozer's family
        { "AuthenticAMD", 0x19, 0xb0, NULL },           // past the known Zen 4 models
        { NULL, 0x1a, 0x02, NULL },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const char *got = kf_prompt_cpu_uarch (cases[i].vendor, cases[i].family, cases[i].model);
        bool ok = cases[i].want ? got && !strncmp (got, cases[i].want, strlen (cases[i].want))
                                : got == NULL;
        if (!ok)
            fprintf (stderr, "%s 0x%lx 0x%lx: got %s\n", cases[i].vendor ? cases[i].vendor : "-",
                     cases[i].family, cases[i].model, got ? got : "NULL");
        CHECK (ok);
    }
}

static void
s_cpu_line (void)
{
    json_t *hw = s_hw ();
    char *p = s_target (hw, "host");
    printf ("%s\n", p ? p : "");
    //  Right under the device's own line, the name it comes from said.
    CHECK (kf_test_has (p, "- AMD EPYC, 2 cores"));
    CHECK (kf_test_has (p, "\n  CPU by its CPUID family and model (/proc/cpuinfo's vendor_id, "
                           "cpu family and model; the name above is only what the host calls "
                           "it): AuthenticAMD, family 26 (0x1a), model 2 (0x02): AMD Zen 5.\n"));
    const char *dev = p ? strstr (p, "- AMD EPYC") : NULL;
    const char *nl = dev ? strchr (dev, '\n') : NULL;
    CHECK (nl && !strncmp (nl + 1, "  CPU by its CPUID", 18));
    free (p);
    //  A model the table does not know: the numbers only.
    json_object_set_new (s_dev (hw), "cpu_model", json_integer (0xb0));
    p = s_target (hw, "host");
    CHECK (kf_test_has (p, "AuthenticAMD, family 26 (0x1a), model 176 (0xb0), which this "
                           "prompt's table of microarchitectures does not name.\n"));
    CHECK (p && !strstr (p, "Zen"));
    free (p);
    //  Without the family: no line. A GPU: no line.
    json_object_del (s_dev (hw), "cpu_family");
    p = s_target (hw, "host");
    CHECK (p && !strstr (p, "CPUID"));
    free (p);
    json_decref (hw);
    hw = s_hw ();
    p = s_target (hw, "cuda");
    CHECK (p && !strstr (p, "CPUID"));
    free (p);
    json_decref (hw);
}

static void
s_vec_line (void)
{
    json_t *hw = s_hw ();
    char *p = s_target (hw, "host");
    const char *costs
        = "  Vector instruction costs on one core, 16-lane f32 (512-bit zmm), measured at start "
          "by the exec worker in cycles (against a chain of dependent integer adds, one a cycle, "
          "timed beside each; throughput: cycles per instruction with many independent ones in "
          "flight; latency: cycles from one instruction to a dependent one): divide (vdivps) 1 "
          "per 2.5 cycles, latency 10.0; square root (vsqrtps) 1 per 4.5 cycles, latency 14.0; "
          "reciprocal estimate (vrcp14ps, relative error at most 2^-14) 1 per 0.50 cycles, "
          "latency 5.0; FMA (vfmadd231ps and the like) 1 per 0.50 cycles, latency 4.0.";
    CHECK (kf_test_has (p, costs));
    //  2.51 / 0.5 and 4.51 / 0.5; the estimate with a Newton step:
    //  0.5 + 2 x 0.5 cycles, 5 + 2 x 4 of latency.
    CHECK (kf_test_has (p, " Derived from these: a divide takes the throughput of 5.0 FMAs, a "
                           "square root that of 9.0; a reciprocal estimate refined by one Newton "
                           "step"));
    CHECK (kf_test_has (p, "comes to 1 per 1.5 cycles and a latency of 13.0 (the three added up, "
                           "as if none overlapped), against the divide's 1 per 2.5 and 10.0.\n"));
    free (p);
    //  256 bits: the AVX estimate, 12 bits.
    json_object_set_new (s_dev (hw), "vec_lanes", json_integer (8));
    p = s_target (hw, "host");
    CHECK (kf_test_has (p, "8-lane f32 (256-bit ymm)"));
    CHECK (kf_test_has (p, "reciprocal estimate (vrcpps, relative error at most 1.5 x 2^-12)"));
    free (p);
    //  No FMA figures: the costs, nothing derived.
    json_object_del (s_dev (hw), "vec_fma_cycles");
    json_object_del (s_dev (hw), "vec_fma_latency_cycles");
    p = s_target (hw, "host");
    CHECK (kf_test_has (p, "divide (vdivps) 1 per 2.5 cycles"));
    CHECK (p && !strstr (p, "Derived from these") && !strstr (p, "FMA (vfmadd"));
    free (p);
    //  No lanes (an older worker): no line; a GPU: no line.
    json_object_del (s_dev (hw), "vec_lanes");
    p = s_target (hw, "host");
    CHECK (p && !strstr (p, "Vector instruction costs"));
    free (p);
    json_decref (hw);
    hw = s_hw ();
    p = s_target (hw, "cuda");
    CHECK (p && !strstr (p, "Vector instruction costs"));
    free (p);
    json_decref (hw);
}

int
main (void)
{
    s_table ();
    s_cpu_line ();
    s_vec_line ();
    return kf_test_done ("test_target_round15");
}
