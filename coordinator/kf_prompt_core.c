/*  kf_prompt_core.c - the host's core by its CPUID family and model, its
 *  vector divide, square root, reciprocal estimate and FMA costs, and
 *  which vector instructions share the FMAs' units (kf_prompt_core.h).
 *
 *  The family and model are the worker's (/proc/cpuinfo); the name is
 *  this file's table, from the family and model ranges the Linux kernel
 *  assigns to each Zen generation (arch/x86/kernel/cpu/amd.c) and
 *  Intel's model numbers of its server cores (intel-family.h). The costs
 *  are measured (exec-worker/kf_host_vec.c); what the line works out from
 *  them is said to be derived.
 */
#include "kf_prompt_core.h"
#include "kf_json.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

//  First match wins: Zen+ before the Zen ranges that hold its models.
static const struct {
    const char *vendor;
    long family, lo, hi;
    const char *name;
} s_uarch[] = {
    { "AuthenticAMD", 0x17, 0x08, 0x08, "AMD Zen+" },
    { "AuthenticAMD", 0x17, 0x18, 0x18, "AMD Zen+" },
    { "AuthenticAMD", 0x17, 0x00, 0x2f, "AMD Zen" },
    { "AuthenticAMD", 0x17, 0x50, 0x5f, "AMD Zen" },
    { "AuthenticAMD", 0x17, 0x30, 0x4f, "AMD Zen 2" },
    { "AuthenticAMD", 0x17, 0x60, 0x7f, "AMD Zen 2" },
    { "AuthenticAMD", 0x17, 0x90, 0x91, "AMD Zen 2" },
    { "AuthenticAMD", 0x17, 0xa0, 0xaf, "AMD Zen 2" },
    { "AuthenticAMD", 0x19, 0x00, 0x0f, "AMD Zen 3" },
    { "AuthenticAMD", 0x19, 0x20, 0x5f, "AMD Zen 3" },
    { "AuthenticAMD", 0x19, 0x10, 0x1f, "AMD Zen 4" },
    { "AuthenticAMD", 0x19, 0x60, 0xaf, "AMD Zen 4" },
    { "AuthenticAMD", 0x1a, 0x00, 0x2f, "AMD Zen 5" },
    { "AuthenticAMD", 0x1a, 0x40, 0x4f, "AMD Zen 5" },
    { "AuthenticAMD", 0x1a, 0x60, 0x7f, "AMD Zen 5" },
    { "AuthenticAMD", 0x1a, 0x50, 0x5f, "AMD Zen 6" },
    { "AuthenticAMD", 0x1a, 0x80, 0xaf, "AMD Zen 6" },
    { "AuthenticAMD", 0x1a, 0xc0, 0xcf, "AMD Zen 6" },
    { "GenuineIntel", 6, 0x3f, 0x3f, "Intel Haswell-EP" },
    { "GenuineIntel", 6, 0x4f, 0x4f, "Intel Broadwell-EP" },
    { "GenuineIntel", 6, 0x55, 0x55,
      "Intel Skylake-SP core (Skylake-SP, Cascade Lake and Cooper Lake Xeons share this family "
      "and model)" },
    { "GenuineIntel", 6, 0x6a, 0x6a, "Intel Ice Lake-SP" },
    { "GenuineIntel", 6, 0x6c, 0x6c, "Intel Ice Lake-D" },
    { "GenuineIntel", 6, 0x8f, 0x8f, "Intel Sapphire Rapids" },
    { "GenuineIntel", 6, 0xcf, 0xcf, "Intel Emerald Rapids" },
    { "GenuineIntel", 6, 0xad, 0xad, "Intel Granite Rapids" },
    { "GenuineIntel", 6, 0xae, 0xae, "Intel Granite Rapids-D" },
    { "GenuineIntel", 6, 0xaf, 0xaf, "Intel Sierra Forest (E-cores only, no AVX-512)" },
};

const char *
kf_prompt_cpu_uarch (const char *vendor, long family, long model)
{
    for (size_t i = 0; vendor && i < sizeof s_uarch / sizeof s_uarch[0]; i++)
        if (!strcmp (vendor, s_uarch[i].vendor) && family == s_uarch[i].family
            && model >= s_uarch[i].lo && model <= s_uarch[i].hi)
            return s_uarch[i].name;
    return NULL;
}

void
kf_prompt_host_cpu_line (FILE *f, json_t *d)
{
    const char *vendor = kf_jstr (d, "cpu_vendor");
    if (!*vendor || !kf_jhas_num (d, "cpu_family") || !kf_jhas_num (d, "cpu_model"))
        return;
    long family = (long) kf_jnum (d, "cpu_family", -1), model = (long) kf_jnum (d, "cpu_model", -1);
    if (family < 0 || model < 0)
        return;
    const char *name = kf_prompt_cpu_uarch (vendor, family, model);
    fprintf (f, "  CPU by its CPUID family and model (/proc/cpuinfo's vendor_id, cpu family and "
             "model; the name above is only what the host calls it): %s, family %ld (0x%02lx), "
             "model %ld (0x%02lx)", vendor, family, family, model, model);
    if (name)
        fprintf (f, ": %s.\n", name);
    else
        fputs (", which this prompt's table of microarchitectures does not name.\n", f);
}

//  V cycles as text: one decimal from 1 up, two below (an FMA's 0.5).
static const char *
s_cyc (double v, char *buf, size_t size)
{
    snprintf (buf, size, v >= 1 ? "%.1f" : "%.2f", v);
    return buf;
}

//  X times as text: whole from 10 up, one decimal below.
static const char *
s_times (double x, char *buf, size_t size)
{
    snprintf (buf, size, x >= 10 ? "%.0f" : "%.1f", x);
    return buf;
}

//  "NAME (INSN) 1 per T cycles, latency L" for OP, as much of it as D
//  has; FIRST: no "; " before it. Returns whether it wrote anything.
static bool
s_op (FILE *f, json_t *d, const char *op, const char *name, const char *insn, bool first)
{
    char key[64], a[16], b[16];
    snprintf (key, sizeof key, "vec_%s_cycles", op);
    double tput = kf_jnum (d, key, 0);
    snprintf (key, sizeof key, "vec_%s_latency_cycles", op);
    double lat = kf_jnum (d, key, 0);
    if (!(tput > 0) && !(lat > 0))
        return false;
    fprintf (f, "%s%s (%s)", first ? "" : "; ", name, insn);
    if (tput > 0)
        fprintf (f, " 1 per %s cycles", s_cyc (tput, a, sizeof a));
    if (lat > 0)
        fprintf (f, "%s latency %s", tput > 0 ? "," : "", s_cyc (lat, b, sizeof b));
    return true;
}

//  Round 19: whether divides and square roots share a unit, and how
//  many loads and FMAs a cycle can start, were asked for. From the
//  interleaved divide and square root (vec_divsqrt_cycles) and the load
//  and FMA throughputs.
//  Whether D's interleaved divide and square root (vec_divsqrt_cycles)
//  say one unit does both (their cycles add up), against DIV and SQ
//  alone; told apart only where the two predictions differ by a fifth.
static bool
s_one_unit (json_t *d, double div, double sq)
{
    double mixed = kf_jnum (d, "vec_divsqrt_cycles", 0);
    double shared = (div + sq) / 2, apart = fmax (div, sq) / 2;
    return mixed > 0 && div > 0 && sq > 0 && shared > 1.2 * apart
           && mixed >= (shared + apart) / 2;
}

static void
s_ports (FILE *f, json_t *d, double div, double sq)
{
    double mixed = kf_jnum (d, "vec_divsqrt_cycles", 0);
    double load = kf_jnum (d, "vec_load_cycles", 0), fma = kf_jnum (d, "vec_fma_cycles", 0);
    double fma_mem = kf_jnum (d, "vec_fma_mem_cycles", 0);
    char a[16], b[16];
    if (mixed > 0 && div > 0 && sq > 0) {
        double shared = (div + sq) / 2, apart = fmax (div, sq) / 2;
        //  Told apart only where the two predictions differ by a fifth.
        if (shared > 1.2 * apart)
            fprintf (f, " A divide and a square root in turn come to 1 per %s cycles each, %s.",
                     s_cyc (mixed, a, sizeof a),
                     //  Round 27's Zen 5: 4.5 in turn beside 2.5 and 4.5 alone,
                     //  the slower one's, not the average "near" which it read.
                     s_one_unit (d, div, sq) && mixed > 1.15 * shared
                         ? "above the average of the two, near the slower one's alone: one "
                           "unit does both and mixing them costs more besides, so a formula's "
                           "divides and square roots add up, each at about the slower one's cost"
                     : s_one_unit (d, div, sq)
                         ? "near the average of the two: one unit does both, so a formula's "
                           "divides and square roots add up"
                         : "near half the slower one's: they run side by side, so a formula's "
                           "divides and square roots overlap");
    }
    if (load > 0 && fma > 0)
        fprintf (f, " Per cycle one core starts about %s vector loads from L1 and %s FMAs%s.",
                 s_times (1 / load, a, sizeof a), s_times (1 / fma, b, sizeof b),
                 fma_mem > 0 && fma_mem > 1.15 * fma
                     ? " (fewer with an operand from memory, see above: a register tile "
                       "keeps its operands in registers)" : "");
}

void
kf_prompt_host_vec_line (FILE *f, json_t *d)
{
    double lanes = kf_jnum (d, "vec_lanes", 0);
    if (lanes != 16 && lanes != 8)
        return;
    bool wide = lanes == 16;
    const char *ops[][3] = {
        { "div", "divide", "vdivps" },
        { "sqrt", "square root", "vsqrtps" },
        { "rcp", "reciprocal estimate",
          wide ? "vrcp14ps, relative error at most 2^-14" : "vrcpps, relative error at most "
                                                            "1.5 x 2^-12" },
        { "rsqrt", "reciprocal square root estimate",
          wide ? "vrsqrt14ps, relative error at most 2^-14"
               : "vrsqrtps, relative error at most 1.5 x 2^-12" },
        { "fma", "FMA", "vfmadd231ps and the like" },
        { "fma_mem", "FMA with one operand from L1",
          wide ? "a float broadcast by the instruction, {1to16}" : "a whole vector" },
        { "load", "vector load from L1", "vmovups" },
        { "bcast", "broadcast of one float from L1", "vbroadcastss" },
    };
    char *text = NULL;
    size_t size = 0;
    FILE *m = open_memstream (&text, &size);
    if (!m)
        return;
    bool any = false;
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
        any = s_op (m, d, ops[i][0], ops[i][1], ops[i][2], !any) || any;
    fclose (m);
    if (any) {
        fprintf (f, "  Vector instruction costs on one core, %s, measured at start by the exec "
                 "worker in cycles (against a chain of dependent integer adds, one a cycle, "
                 "timed beside each; throughput: cycles per instruction "
                 "with many independent ones in flight; latency: cycles from one instruction "
                 "to a dependent one): %s.",
                 wide ? "16-lane f32 (512-bit zmm)" : "8-lane f32 (256-bit ymm)", text);
        double div = kf_jnum (d, "vec_div_cycles", 0), sq = kf_jnum (d, "vec_sqrt_cycles", 0);
        double fma = kf_jnum (d, "vec_fma_cycles", 0), rcp = kf_jnum (d, "vec_rcp_cycles", 0);
        double div_l = kf_jnum (d, "vec_div_latency_cycles", 0);
        double rcp_l = kf_jnum (d, "vec_rcp_latency_cycles", 0);
        double fma_l = kf_jnum (d, "vec_fma_latency_cycles", 0);
        char a[16], b[16], c[16], e[16];
        //  Round 15: the choice was between these, so the line sets them
        //  side by side.
        if (fma > 0 && div > 0) {
            fprintf (f, " Derived from these: a divide takes the throughput of %s FMAs",
                     s_times (div / fma, a, sizeof a));
            if (sq > 0)
                fprintf (f, ", a square root that of %s", s_times (sq / fma, a, sizeof a));
            if (rcp > 0 && rcp_l > 0 && fma_l > 0 && div_l > 0)
                fprintf (f, "; a reciprocal estimate refined by one Newton step (r + r * (1 - x "
                         "* r): two FMAs; it about doubles the correct bits but is not correctly "
                         "rounded) comes to 1 per %s cycles and a latency of %s (the three "
                         "added up, as if none overlapped), against the divide's 1 per %s and %s",
                         s_cyc (rcp + 2 * fma, a, sizeof a), s_cyc (rcp_l + 2 * fma_l, b, sizeof b),
                         s_cyc (div, c, sizeof c), s_cyc (div_l, e, sizeof e));
            fputs (".", f);
        }
        s_ports (f, d, div, sq);
        fputs ("\n", f);
    }
    free (text);
}

//  Where X's mix with FMAS FMAs (two; four for vhaddps) falls. On units
//  of its own X adds nothing to the slower of the FMAs alone and X alone;
//  on the FMAs' units it adds about an FMA's time (their pipes take
//  three instructions where the two FMAs took two). Under a quarter of
//  an FMA's time past the first: beside; three quarters or more: shares;
//  between: partly.
typedef enum { S_BESIDE, S_PARTLY, S_SHARES } s_units_t;

static s_units_t
s_units_of (double fma, int fmas, double alone, double mix)
{
    double excess = mix - fmax (fmas * fma, alone);
    return excess < 0.25 * fma ? S_BESIDE : excess < 0.75 * fma ? S_PARTLY : S_SHARES;
}

//  The instructions of the units line, in its order within a group: the
//  cheapest alone first (here). FMAS: the FMAs of its mix; AVX512 NULL:
//  no 512-bit form, never measured there.
static const struct {
    const char *op, *avx2, *avx512;
    int fmas;
} s_xs[] = {
    { "and", "vandps", "vpandd", 2 },
    { "iadd", "vpaddd", "vpaddd", 2 },
    { "cmp", "vcmpps", "vcmpps into a mask register", 2 },
    { "cvt", "vcvtps2dq", "vcvtps2dq", 2 },
    { "cvtf", "vcvtdq2ps", "vcvtdq2ps", 2 },
    { "max", "vmaxps", "vmaxps", 2 },
    { "round", "vroundps", "vrndscaleps", 2 },
    { "shift", "vpslld", "vpslld", 2 },
    { "shuf", "vshufps", "vshufps", 2 },
    { "blend", "vblendvps", "vblendmps", 2 },
    { "perm", "vpermps", "vpermps", 2 },
    { "hadd", "vhaddps", NULL, 4 },
};

//  X's cycles alone (ALONE) and in its mix (MIX), 0 where D lacks either.
static void
s_x_figures (json_t *d, size_t i, double *alone, double *mix)
{
    char key[64];
    snprintf (key, sizeof key, "vec_%s_cycles", s_xs[i].op);
    *alone = kf_jnum (d, key, 0);
    snprintf (key, sizeof key, "vec_%s_with_fma_cycles", s_xs[i].op);
    *mix = kf_jnum (d, key, 0);
    if (!(*alone > 0) || !(*mix > 0))
        *alone = *mix = 0;
}

//  Round 21: the model had an arithmetic budget in FMAs and a formula of
//  some 40 mixed ops a vector. From the figures: the FMAs and the FMA
//  time each op on their units adds, at the FMA's rate; every vector
//  instruction at the fastest one's rate alone (vandps, 4 a cycle here:
//  10 FMAs and 20 vandps took 7.50 cycles, 10 FMAs and 25 mixed ops
//  beside them 9.11 against 8.75 so counted); each op at its own rate (10
//  FMAs and 20 vmaxps: 10.0). FAST: that rate, FAST_NAME its instruction.
//  Round 22: a formula of two square roots and a divide sat at 13.5
//  cycles of the divide unit against a 15-cycle memory budget, and the
//  rule named no divide: where D's figures say divides and square roots
//  share one unit, theirs are one more bound, added up.
static void
s_units_rule (FILE *f, json_t *d, double fma, double fast, const char *fast_name)
{
    char a[16], b[16], c[16], e[16];
    fprintf (f, " Rule of thumb for a formula's cycles per vector on one core: about the "
             "largest of %s x (its FMAs + the FMAs in brackets of each op partly or wholly on "
             "the FMAs' units), %s x all its vector instructions but loads and stores, FMAs "
             "included (the rate of %s alone, the fastest: no more issue), ",
             s_cyc (fma, a, sizeof a), s_cyc (fast, b, sizeof b), fast_name);
    double div = kf_jnum (d, "vec_div_cycles", 0), sq = kf_jnum (d, "vec_sqrt_cycles", 0);
    if (s_one_unit (d, div, sq))
        fprintf (f, "its divides x %s + square roots x %s (one unit does both: they add up), ",
                 s_cyc (div, c, sizeof c), s_cyc (sq, e, sizeof e));
    fputs ("and each op's count x its own cycles alone; ops beside the FMAs add nothing "
           "more.", f);
}

void
kf_prompt_host_units_line (FILE *f, json_t *d)
{
    double lanes = kf_jnum (d, "vec_lanes", 0), fma = kf_jnum (d, "vec_fma_cycles", 0);
    if ((lanes != 16 && lanes != 8) || !(fma > 0))
        return;
    bool wide = lanes == 16;
    static const char *const heads[] = {
        [S_BESIDE] = "; beside the FMAs: ",
        [S_PARTLY] = "; partly on the FMAs' units: ",
        [S_SHARES] = "; on the FMAs' units: ",
    };
    //  A group's cycles to two decimals: the mixes differ by hundredths.
    char a[16], c[16];
    bool any = false;
    double fast = 0;
    const char *fast_name = NULL;
    for (int kind = S_BESIDE; kind <= S_SHARES; kind++) {
        bool first = true;
        for (size_t i = 0; i < sizeof s_xs / sizeof s_xs[0]; i++) {
            const char *name = wide ? s_xs[i].avx512 : s_xs[i].avx2;
            int fmas = s_xs[i].fmas;
            double alone, mix;
            s_x_figures (d, i, &alone, &mix);
            if (!name || !(alone > 0) || (int) s_units_of (fma, fmas, alone, mix) != kind)
                continue;
            if (!any)
                fprintf (f, "  Other vector instructions beside FMAs, measured at start by the "
                         "exec worker: two independent FMAs and one of these in turn, many such "
                         "groups in flight, in cycles per group against %.2f for the two FMAs "
                         "alone (in brackets each instruction's own cycles alone and, where it "
                         "takes time on the FMAs' units, the FMAs' time it adds)",
                         2 * fma);
            any = true;
            if (!(fast > 0) || alone < fast) {
                fast = alone;
                fast_name = name;
            }
            fprintf (f, "%s%s %.2f (%s", first ? heads[kind] : ", ", name, mix,
                     s_cyc (alone, c, sizeof c));
            //  What X added to its FMAs, in FMAs.
            if (kind != S_BESIDE)
                fprintf (f, "; %s FMA%s", s_times ((mix - fmas * fma) / fma, a, sizeof a),
                         mix - fmas * fma < 1.05 * fma ? "" : "s");
            //  Round 22: "vhaddps with four FMAs against 2.00 2.58" read
            //  as two figures of one thing.
            if (fmas == 4)
                fprintf (f, "; a mix of four FMAs and it, against %.2f for the four alone",
                         4 * fma);
            fputs (")", f);
            first = false;
        }
    }
    if (!any)
        return;
    fputs (".", f);
    s_units_rule (f, d, fma, fast, fast_name);
    fputs ("\n", f);
}
