/*  kf_profile_ncu.c - Nsight Compute's raw page condensed for a prompt
 *  (kf_profile_condense, kf_profile.h).
 *
 *  The raw page of ncu's CSV has some 550 columns; the prompt gets a few
 *  lines: throughput against the peaks, occupancy, a bound-by verdict and
 *  the warp stalls that cost most.
 */
#include "kf_profile.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

//  Splits one CSV line into fields in place (quotes removed, "" kept as
//  one quote). Returns the number of fields, at most MAX.
static int
s_csv_fields (char *line, char **fields, int max)
{
    int n = 0;
    char *r = line, *w = line;
    while (n < max) {
        fields[n++] = w;
        bool quoted = *r == '"';
        if (quoted)
            r++;
        while (*r) {
            if (quoted && *r == '"' && r[1] == '"') {
                *w++ = '"';
                r += 2;
            }
            else if (quoted && *r == '"') {
                quoted = false;
                r++;
            }
            else if (!quoted && *r == ',')
                break;
            else
                *w++ = *r++;
        }
        bool more = *r == ',';
        *w++ = 0;
        if (!more)
            break;
        r++;
    }
    return n;
}

//  A value as ncu prints it ("34,592", "85.29", "n/a", ""): NaN when it
//  is not a number.
static double
s_number (const char *text)
{
    char buf[64];
    size_t k = 0;
    for (const char *p = text; *p && k + 1 < sizeof buf; p++)
        if (*p != ',' && *p != ' ')
            buf[k++] = *p;
    buf[k] = 0;
    char *end;
    double v = strtod (buf, &end);
    return k && end != buf && *end == 0 ? v : NAN;
}

#define S_MAX_COLS 4096

//  The stall reasons ncu names, with what each means for a kernel writer.
static const struct {
    const char *reason;
    const char *meaning;
} s_stalls[] = {
    { "long_scoreboard", "waiting on global/local memory (L1TEX)" },
    { "short_scoreboard", "waiting on shared memory or special-function results (MIO)" },
    { "barrier", "waiting at a block barrier" },
    { "membar", "waiting on a memory fence" },
    { "mio_throttle", "shared-memory/MIO queue full" },
    { "lg_throttle", "global-memory instruction queue full" },
    { "tex_throttle", "texture queue full" },
    { "math_pipe_throttle", "an arithmetic pipe is busy" },
    { "wait", "fixed-latency dependencies" },
    { "not_selected", "eligible but another warp issued" },
    { "branch_resolving", "resolving branches" },
    { "dispatch_stall", "dispatch stalls" },
    { "drain", "draining memory writes at exit" },
    { "imc_miss", "immediate-constant cache misses" },
    { "no_instruction", "instruction cache misses" },
    { "sleeping", "nanosleep" },
    { "misc", "miscellaneous" },
    { "gmma", "waiting on warpgroup MMA" },
    { NULL, NULL }
};

//  One distinct kernel: sums over its launches.
typedef struct {
    char *name;
    int launches;
    double sum[32];          //  see s_cols
    int have[32];
    double stall[24];
    int stall_have[24];
    char block[48], grid[48];
} s_kernel_t;

//  The columns read, by index into s_kernel_t.sum.
enum {
    C_TIME, C_DRAM, C_DRAM2, C_MEM, C_L2, C_L1, C_SM, C_OCC, C_OCC_MAX, C_WARPS_MAX, C_REGS,
    C_WAVES, C_SMEM, C_LIM_REGS, C_LIM_SMEM, C_LIM_WARPS, C_LIM_BLOCKS, C_LIM_BARRIERS,
    C_COUNT
};
static const char *const s_cols[C_COUNT] = {
    [C_TIME] = "gpu__time_duration.sum",
    [C_DRAM] = "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed",
    [C_DRAM2] = "dram__throughput.avg.pct_of_peak_sustained_elapsed",
    [C_MEM] = "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed",
    [C_L2] = "lts__throughput.avg.pct_of_peak_sustained_elapsed",
    [C_L1] = "l1tex__throughput.avg.pct_of_peak_sustained_active",
    [C_SM] = "sm__throughput.avg.pct_of_peak_sustained_elapsed",
    [C_OCC] = "sm__warps_active.avg.pct_of_peak_sustained_active",
    [C_OCC_MAX] = "sm__maximum_warps_per_active_cycle_pct",
    [C_WARPS_MAX] = "sm__maximum_warps_avg_per_active_cycle",
    [C_REGS] = "launch__registers_per_thread",
    [C_WAVES] = "launch__waves_per_multiprocessor",
    [C_SMEM] = "launch__shared_mem_per_block_allocated",
    [C_LIM_REGS] = "launch__occupancy_limit_registers",
    [C_LIM_SMEM] = "launch__occupancy_limit_shared_mem",
    [C_LIM_WARPS] = "launch__occupancy_limit_warps",
    [C_LIM_BLOCKS] = "launch__occupancy_limit_blocks",
    [C_LIM_BARRIERS] = "launch__occupancy_limit_barriers",
};

static double
s_avg (const s_kernel_t *k, int c)
{
    return k->have[c] ? k->sum[c] / k->have[c] : NAN;
}

//  A kernel's name without its parameter list: "softmax_rows(const float
//  *, ...)" reads "softmax_rows"; templates keep their arguments.
static char *
s_short_name (const char *name)
{
    size_t depth = 0, len = strlen (name), cut = len;
    for (size_t i = 0; i < len; i++) {
        if (name[i] == '<')
            depth++;
        else if (name[i] == '>' && depth)
            depth--;
        else if (name[i] == '(' && depth == 0) {
            cut = i;
            break;
        }
    }
    return strndup (name, cut > 0 ? cut : len);
}

static void
s_add (json_t *obj, const char *key, double v)
{
    if (!isnan (v))
        json_object_set_new (obj, key, json_real (round (v * 100) / 100));
}

//  Bound-by, after the rule Nsight Compute's own speed-of-light advice
//  uses: a unit above 60% of its peak is what limits the kernel; when
//  neither memory nor compute gets there, warps spend their time waiting
//  (latency), and more parallelism or fewer dependencies is the cure.
static const char *
s_bound (double memory, double compute)
{
    if (isnan (memory) && isnan (compute))
        return "unknown";
    double m = isnan (memory) ? 0 : memory, c = isnan (compute) ? 0 : compute;
    if (m < 60 && c < 60)
        return "latency";
    return m >= c ? "memory" : "compute";
}

//  The busiest memory unit: DRAM, L2 or L1, against its own peak.
static double
s_memory_pct (const s_kernel_t *k, const char **unit)
{
    double best = NAN;
    *unit = "memory";
    struct { int col; const char *name; } units[] = {
        { C_MEM, "memory" }, { C_DRAM, "DRAM" }, { C_DRAM2, "DRAM" }, { C_L2, "L2" },
        { C_L1, "L1" }
    };
    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++) {
        double v = s_avg (k, units[i].col);
        if (!isnan (v) && (isnan (best) || v > best)) {
            best = v;
            *unit = units[i].name;
        }
    }
    return best;
}

static json_t *
s_kernel_json (const s_kernel_t *k, const char **bound, int *top_idx, int n_top)
{
    json_t *o = json_object ();
    char *shortname = s_short_name (k->name);
    json_object_set_new (o, "name", json_string (shortname ? shortname : k->name));
    free (shortname);
    json_object_set_new (o, "launches", json_integer (k->launches));
    s_add (o, "duration_ns", s_avg (k, C_TIME));
    double dram = s_avg (k, C_DRAM);
    if (isnan (dram))
        dram = s_avg (k, C_DRAM2);
    const char *unit;
    double memory = s_memory_pct (k, &unit);
    double compute = s_avg (k, C_SM);
    s_add (o, "dram_pct", dram);
    s_add (o, "memory_pct", memory);
    json_object_set_new (o, "memory_unit", json_string (unit));
    s_add (o, "l2_pct", s_avg (k, C_L2));
    s_add (o, "compute_pct", compute);
    s_add (o, "achieved_occupancy_pct", s_avg (k, C_OCC));
    s_add (o, "theoretical_occupancy_pct", s_avg (k, C_OCC_MAX));
    s_add (o, "max_warps_per_sm", s_avg (k, C_WARPS_MAX));
    s_add (o, "registers_per_thread", s_avg (k, C_REGS));
    s_add (o, "shared_mem_per_block", s_avg (k, C_SMEM));
    s_add (o, "waves_per_sm", s_avg (k, C_WAVES));
    json_object_set_new (o, "block", json_string (k->block));
    json_object_set_new (o, "grid", json_string (k->grid));
    //  The occupancy limiter: the resource allowing the fewest blocks.
    static const struct { int col; const char *name; } lims[] = {
        { C_LIM_REGS, "registers" }, { C_LIM_SMEM, "shared memory" },
        { C_LIM_WARPS, "warps per SM" }, { C_LIM_BLOCKS, "blocks per SM" },
        { C_LIM_BARRIERS, "barriers" }
    };
    double least = NAN;
    const char *limiter = NULL;
    for (size_t i = 0; i < sizeof lims / sizeof lims[0]; i++) {
        double v = s_avg (k, lims[i].col);
        if (!isnan (v) && (isnan (least) || v < least)) {
            least = v;
            limiter = lims[i].name;
        }
    }
    if (limiter)
        json_object_set_new (o, "occupancy_limiter", json_string (limiter));
    *bound = s_bound (memory, compute);
    json_object_set_new (o, "bound", json_string (*bound));
    json_t *stalls = json_array ();
    for (int t = 0; t < n_top && top_idx[t] >= 0; t++) {
        int s = top_idx[t];
        json_array_append_new (stalls,
                               json_pack ("{s:s, s:f, s:s}", "reason", s_stalls[s].reason,
                                          "warps_per_issue",
                                          round (k->stall[s] / k->stall_have[s] * 100) / 100,
                                          "meaning", s_stalls[s].meaning));
    }
    json_object_set_new (o, "top_stalls", stalls);
    return o;
}

//  The N largest stall reasons of K (indices into s_stalls, -1 padded).
static void
s_top_stalls (const s_kernel_t *k, int *top, int n)
{
    for (int t = 0; t < n; t++)
        top[t] = -1;
    for (int s = 0; s_stalls[s].reason; s++) {
        if (!k->stall_have[s])
            continue;
        double v = k->stall[s] / k->stall_have[s];
        if (v < 0.01)
            continue;
        for (int t = 0; t < n; t++)
            if (top[t] < 0 || v > k->stall[top[t]] / k->stall_have[top[t]]) {
                for (int u = n - 1; u > t; u--)
                    top[u] = top[u - 1];
                top[t] = s;
                break;
            }
    }
}

static void
s_fmt_pct (char *buf, size_t size, double v)
{
    if (isnan (v))
        snprintf (buf, size, "n/a");
    else
        snprintf (buf, size, "%.1f%%", v);
}

int
kf_profile_condense (const char *csv, size_t size, json_t **metrics, char **summary,
                     char **error)
{
    *metrics = NULL;
    *summary = NULL;
    *error = NULL;
    char *text = strndup (csv, size);
    char **fields = malloc (sizeof *fields * S_MAX_COLS);
    char **header = malloc (sizeof *header * S_MAX_COLS);
    int col[C_COUNT], stall_col[24];
    int name_col = -1, block_col = -1, grid_col = -1, n_header = 0;
    s_kernel_t kernels[16];
    int n_kernels = 0, n_rows = 0;
    memset (kernels, 0, sizeof kernels);
    if (!text || !fields || !header) {
        *error = strdup ("out of memory");
        goto done;
    }
    for (int c = 0; c < C_COUNT; c++)
        col[c] = -1;
    for (int s = 0; s < 24; s++)
        stall_col[s] = -1;

    //  ncu writes its own "==PROF==" and "==WARNING==" lines around the
    //  report; the report is the header line (first field "ID"), a units
    //  line, and one line per profiled launch.
    char *save = NULL;
    bool units_seen = false;
    for (char *line = strtok_r (text, "\r\n", &save); line; line = strtok_r (NULL, "\r\n", &save)) {
        if (line[0] != '"')
            continue;
        if (!n_header) {
            if (strncmp (line, "\"ID\",", 5) != 0)
                continue;
            n_header = s_csv_fields (line, header, S_MAX_COLS);
            for (int i = 0; i < n_header; i++) {
                if (!strcmp (header[i], "Kernel Name"))
                    name_col = i;
                else if (!strcmp (header[i], "Block Size"))
                    block_col = i;
                else if (!strcmp (header[i], "Grid Size"))
                    grid_col = i;
                for (int c = 0; c < C_COUNT; c++)
                    if (!strcmp (header[i], s_cols[c]))
                        col[c] = i;
                static const char prefix[] = "smsp__average_warps_issue_stalled_";
                static const char suffix[] = "_per_issue_active.ratio";
                size_t hl = strlen (header[i]);
                if (!strncmp (header[i], prefix, sizeof prefix - 1)
                    && hl > sizeof prefix + sizeof suffix - 2
                    && !strcmp (header[i] + hl - (sizeof suffix - 1), suffix)) {
                    size_t rl = hl - (sizeof prefix - 1) - (sizeof suffix - 1);
                    for (int s = 0; s_stalls[s].reason; s++)
                        if (strlen (s_stalls[s].reason) == rl
                            && !strncmp (header[i] + sizeof prefix - 1, s_stalls[s].reason, rl))
                            stall_col[s] = i;
                }
            }
            continue;
        }
        int n = s_csv_fields (line, fields, S_MAX_COLS);
        if (!units_seen) {
            units_seen = true;      //  the units line: "", "", ..., "%", "ns"
            continue;
        }
        if (n != n_header || name_col < 0)
            continue;
        n_rows++;
        s_kernel_t *k = NULL;
        for (int i = 0; i < n_kernels && !k; i++)
            if (!strcmp (kernels[i].name, fields[name_col]))
                k = &kernels[i];
        if (!k) {
            if (n_kernels == 16)
                continue;
            k = &kernels[n_kernels++];
            k->name = strdup (fields[name_col]);
            snprintf (k->block, sizeof k->block, "%s", block_col >= 0 ? fields[block_col] : "");
            snprintf (k->grid, sizeof k->grid, "%s", grid_col >= 0 ? fields[grid_col] : "");
        }
        k->launches++;
        for (int c = 0; c < C_COUNT; c++) {
            double v = col[c] >= 0 ? s_number (fields[col[c]]) : NAN;
            if (!isnan (v)) {
                k->sum[c] += v;
                k->have[c]++;
            }
        }
        for (int s = 0; s_stalls[s].reason; s++) {
            double v = stall_col[s] >= 0 ? s_number (fields[stall_col[s]]) : NAN;
            if (!isnan (v)) {
                k->stall[s] += v;
                k->stall_have[s]++;
            }
        }
    }
    if (!n_kernels) {
        *error = strdup (n_header ? "the ncu report lists no profiled kernel"
                                  : "no ncu report (no CSV header line) in the profiler's output");
        goto done;
    }

    //  The kernel that took the most time leads; the summary names the
    //  others in one line each.
    int order[16];
    for (int i = 0; i < n_kernels; i++)
        order[i] = i;
    for (int i = 1; i < n_kernels; i++)
        for (int j = i; j > 0; j--) {
            const s_kernel_t *a = &kernels[order[j - 1]], *b = &kernels[order[j]];
            double ta = a->have[C_TIME] ? a->sum[C_TIME] : 0, tb = b->have[C_TIME] ? b->sum[C_TIME] : 0;
            if (tb <= ta)
                break;
            int t = order[j];
            order[j] = order[j - 1];
            order[j - 1] = t;
        }
    json_t *list = json_array ();
    char *text_out = NULL;
    size_t text_len = 0;
    FILE *f = open_memstream (&text_out, &text_len);
    for (int r = 0; r < n_kernels; r++) {
        const s_kernel_t *k = &kernels[order[r]];
        int top[3];
        s_top_stalls (k, top, 3);
        const char *bound;
        json_t *kj = s_kernel_json (k, &bound, top, 3);
        json_array_append_new (list, kj);
        const char *name = json_string_value (json_object_get (kj, "name"));
        const char *unit;
        double memory = s_memory_pct (k, &unit);
        double dram = json_is_number (json_object_get (kj, "dram_pct"))
                          ? json_number_value (json_object_get (kj, "dram_pct")) : NAN;
        char p_dram[16], p_mem[16], p_sm[16], p_occ[16], p_tocc[16];
        s_fmt_pct (p_dram, sizeof p_dram, dram);
        s_fmt_pct (p_mem, sizeof p_mem, memory);
        s_fmt_pct (p_sm, sizeof p_sm, s_avg (k, C_SM));
        s_fmt_pct (p_occ, sizeof p_occ, s_avg (k, C_OCC));
        s_fmt_pct (p_tocc, sizeof p_tocc, s_avg (k, C_OCC_MAX));
        if (r > 0) {
            if (r == 1)
                fprintf (f, "other kernels:\n");
            fprintf (f, "- %s: %.1f us, %s-bound (DRAM %s, compute %s, occupancy %s)\n", name,
                     s_avg (k, C_TIME) / 1000, bound, p_dram, p_sm, p_occ);
            continue;
        }
        fprintf (f, "kernel %s: grid %s, block %s, ", name, k->grid, k->block);
        if (!isnan (s_avg (k, C_REGS)))
            fprintf (f, "%.0f registers/thread, ", s_avg (k, C_REGS));
        fprintf (f, "%.1f us a launch (%d launch%s profiled)\n", s_avg (k, C_TIME) / 1000,
                 k->launches, k->launches == 1 ? "" : "es");
        fprintf (f, "%s-bound: DRAM throughput %s of peak, busiest memory unit (%s) %s, "
                 "compute (SM) %s\n", bound, p_dram, unit, p_mem, p_sm);
        const char *limiter = json_string_value (json_object_get (kj, "occupancy_limiter"));
        fprintf (f, "occupancy: achieved %s", p_occ);
        if (!isnan (s_avg (k, C_WARPS_MAX)))
            fprintf (f, " of %.0f warps/SM", s_avg (k, C_WARPS_MAX));
        fprintf (f, ", theoretical %s", p_tocc);
        if (limiter && !isnan (s_avg (k, C_OCC_MAX)) && s_avg (k, C_OCC_MAX) < 100)
            fprintf (f, " (limited by %s)", limiter);
        fprintf (f, "\n");
        if (top[0] >= 0) {
            fprintf (f, "top stalls (warps waiting per issued instruction):");
            for (int t = 0; t < 3 && top[t] >= 0; t++)
                fprintf (f, "%s %s %.2f (%s)", t ? ";" : "", s_stalls[top[t]].reason,
                         k->stall[top[t]] / k->stall_have[top[t]], s_stalls[top[t]].meaning);
            fprintf (f, "\n");
        }
    }
    fclose (f);
    json_t *lead = json_array_get (list, 0);
    json_t *m = json_object ();
    static const char *const headline[] = {
        "dram_pct", "memory_pct", "memory_unit", "compute_pct", "achieved_occupancy_pct",
        "theoretical_occupancy_pct", "bound", "top_stalls", "duration_ns", NULL
    };
    for (int i = 0; headline[i]; i++)
        if (json_object_get (lead, headline[i]))
            json_object_set (m, headline[i], json_object_get (lead, headline[i]));
    json_object_set_new (m, "kernels", list);
    json_object_set_new (m, "launches_profiled", json_integer (n_rows));
    *metrics = m;
    *summary = text_out;

done:
    for (int i = 0; i < n_kernels; i++)
        free (kernels[i].name);
    free (text);
    free (fields);
    free (header);
    return *metrics ? 0 : -1;
}
