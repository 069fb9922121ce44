/*  kf_prompt_arith.c - an elementwise formula's estimated arithmetic a
 *  vector of outputs (kf_prompt_arith.h).
 */
#include "kf_prompt_arith.h"
#include "kf_prompt_budget.h"
#include "kf_prompt_class.h"
#include "kf_prompt_formula.h"
#include "kf_prompt_target.h"
#include "kf_json.h"
#include <stdio.h>
#include <string.h>

bool
kf_prompt_formula_arith (json_t *spec, json_t *d, kf_arith_t *a)
{
    memset (a, 0, sizeof *a);
    kf_formula_t fm;
    const char *unit = NULL;
    if (kf_prompt_task_class (spec) != KF_CLASS_ELEMENTWISE || !kf_prompt_formula (spec, &fm)
        || !fm.counted)
        return false;
    int lanes = kf_prompt_vector_lanes (d, NULL, &unit);
    double fmas = kf_prompt_vector_fmas (d, lanes);
    //  Round 50: a call of a broadcast input alone is made once a value,
    //  not per output: no part of an output's arithmetic.
    int call_vops = fm.call_vops - fm.hoist_vops, calls = fm.calls - fm.hoist_calls;
    if (!(fmas > 0) || fm.ops + call_vops <= 0)
        return false;
    *a = (kf_arith_t) { .ops = fm.ops, .call_vops = call_vops, .calls = calls,
                        .instr = fm.ops + call_vops, .fmas = fmas, .lanes = lanes,
                        .kinds = fm.kinds, .divs = fm.divs };
    //  Round 39: a division by a value takes its measured time (6 FMAs'
    //  on round 39's host), not one FMA's.
    double div = kf_jnum (d, "vec_div_cycles", 0), fma = kf_jnum (d, "vec_fma_cycles", 0);
    double rcp = kf_jnum (d, "vec_rcp_cycles", 0);
    a->div_fmas = div > 0 && fma > 0 ? div / fma : 0;
    //  Round 40: or a reciprocal estimate and one Newton step (two FMAs),
    //  near f32 precision, where that is cheaper (the kernels' way).
    a->div_used = a->div_fmas;
    if (a->div_fmas > 0 && rcp > 0 && rcp / fma + 2 < a->div_fmas)
        a->div_used = rcp / fma + 2;
    a->fma_equiv = a->instr + (a->div_used > 1 ? a->divs * (a->div_used - 1) : 0);
    a->cycles = a->fma_equiv / fmas;
    snprintf (a->names, sizeof a->names, "%s", fm.names);
    return true;
}

bool
kf_prompt_formula_arith_words (json_t *spec, json_t *d, char *buf, size_t size)
{
    kf_arith_t a;
    if (size)
        *buf = 0;
    return kf_prompt_formula_arith (spec, d, &a) && kf_prompt_arith_words (&a, buf, size);
}

bool
kf_prompt_arith_words (const kf_arith_t *est, char *buf, size_t size)
{
    if (size)
        *buf = 0;
    if (est->calls <= 0 || size < 2)
        return false;
    const kf_arith_t a = *est;
    //  Each named call's cost, "atan about 16 and exp about 10".
    char each[160] = "";
    size_t used = 0;
    for (const char *p = a.names; *p && used + 40 < sizeof each;) {
        size_t n = strcspn (p, ",");
        char name[24];
        snprintf (name, sizeof name, "%.*s", (int) n, p);
        int v = kf_prompt_libm_vops (name);
        p += n;
        p += strspn (p, ", ");
        if (v > 0)
            used += (size_t) snprintf (each + used, sizeof each - used, "%s%s about %d",
                                       used ? (*p ? ", " : " and ") : "", name, v);
    }
    //  A division by a value at its measured time (round 39); one
    //  unmeasured, or a square root, counts as one instruction, though
    //  it takes several FMAs' time: said where the formula has one.
    char divs[240] = "";
    if (a.divs > 0 && a.div_used < a.div_fmas)
        snprintf (divs, sizeof divs, ", its %d division%s by a value at %.1f FMAs' time each as "
                  "a reciprocal estimate and one Newton step (the division measured %.1f "
                  "here; %.0f FMA-times in all)", a.divs, a.divs == 1 ? "" : "s", a.div_used,
                  a.div_fmas, a.fma_equiv);
    else if (a.divs > 0 && a.div_fmas > 1)
        snprintf (divs, sizeof divs, ", its %d division%s by a value at %.1f FMAs' time each as "
                  "measured here (%.0f FMA-times in all)", a.divs, a.divs == 1 ? "" : "s",
                  a.div_fmas, a.fma_equiv);
    bool slow = !*divs && (a.kinds & (1u << KF_OP_DIV | 1u << KF_OP_SQRT));
    snprintf (buf, size, "about %.0f vector instructions a vector of "
              "outputs, the formula's %d operation%s and %d for its %d call%s (%s, as SIMD code "
              "computes %s near f32 precision by a range reduction and a polynomial; an "
              "assumption, not measured)%s, so about %.0f cycles of one core a vector at its "
              "measured %.1f vector FMAs a cycle, each instruction counted at an FMA's time%s: "
              "an upper figure, as instructions beside the FMAs overlap them (the rule of "
              "thumb above)%s",
              a.instr, a.ops, a.ops == 1 ? "" : "s", a.call_vops, a.calls,
              a.calls == 1 ? "" : "s", each, strchr (a.names, ',') ? "them" : "it", divs,
              a.cycles, a.fmas,
              slow ? " (a division or square root in it counts as one here, though one left as "
                     "a division takes several FMAs' time)"
                   : "",
              //  Round 41: sigmoid(g) * tanh(c) at 30 cycles against a
              //  budget of 27 read as bound by its arithmetic; its
              //  kernels took 20-25 in all, one division for both.
              //  Round 45: "and division" of exp, log1p and sin.
              a.calls > 1 ? " and each call is counted with its own range reduction (and "
                            "division, where its form has one), which calls in one formula may "
                            "share"
                          : "");
    return true;
}

double
kf_prompt_arith_under_memory (json_t *spec, json_t *d, kf_arith_t *a)
{
    if (!kf_prompt_formula_arith (spec, d, a) || a->calls <= 0)
        return 0;
    double n = kf_prompt_side_bytes (spec, "inputs"), m = kf_prompt_side_bytes (spec, "outputs");
    double budget = kf_prompt_vector_cycles (spec, d, a->lanes, kf_prompt_cold_ms (n, m, d, false),
                                             1);
    return budget > 0 && a->cycles < budget ? budget : 0;
}
