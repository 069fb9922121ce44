/*  kfctl_print.c - tables and summaries kfctl shows to people.
 *
 *  Every field is read defensively: the reply objects come over the wire
 *  and a coordinator of another version may leave a field out or give it
 *  another type. A missing value prints as "-", never crashes.
 */
#include "kfctl_print.h"
#include <errno.h>
#include <stdlib.h>
#include <string.h>

static const char *
s_str (json_t *obj, const char *key)
{
    const char *text = json_string_value (json_object_get (obj, key));
    return text && *text ? text : "-";
}

static long long
s_int (json_t *obj, const char *key, long long dflt)
{
    json_t *v = json_object_get (obj, key);
    if (json_is_integer (v))
        return (long long) json_integer_value (v);
    if (json_is_real (v))
        return (long long) json_real_value (v);
    return dflt;
}

/* An integer field as text ("-" when absent or null). */
static const char *
s_int_text (json_t *obj, const char *key, char *buf, size_t size)
{
    json_t *v = json_object_get (obj, key);
    if (!json_is_number (v))
        return "-";
    snprintf (buf, size, "%lld", s_int (obj, key, 0));
    return buf;
}

const char *
kf_ctl_speedup_text (json_t *value, char *buf, size_t size)
{
    if (!json_is_number (value))
        snprintf (buf, size, "-");
    else
        snprintf (buf, size, "%.2fx", json_number_value (value));
    return buf;
}

void
kf_ctl_progress_from_run (kf_ctl_progress_t *progress, json_t *run)
{
    if (!json_is_object (run))
        return;
    progress->done = s_int (run, "done", progress->done);
    progress->total = s_int (run, "total", progress->total);
    progress->generation = s_int (run, "generation", progress->generation);
    progress->generations = s_int (run, "generations", progress->generations);
    json_t *best = json_object_get (run, "best_speedup");
    if (json_is_number (best)) {
        progress->best = json_number_value (best);
        progress->has_best = true;
    }
    const char *status = json_string_value (json_object_get (run, "status"));
    if (status)
        snprintf (progress->status, sizeof progress->status, "%s", status);
}

void
kf_ctl_progress_from_event (kf_ctl_progress_t *progress, json_t *event)
{
    const char *kind = json_string_value (json_object_get (event, "event"));
    if (!kind)
        return;
    json_t *best = NULL;
    if (!strcmp (kind, "candidate")) {
        /* SHOW corrects the count every second; this only keeps the bar
         * moving between polls. */
        if (progress->total <= 0 || progress->done < progress->total)
            progress->done++;
        /* One held for audit or waiting for its re-verification does
         * not count (kf_verify.c), nor a screen figure (kf_fidelity.c). */
        if (!strcmp (s_str (event, "status"), "correct")
            && !json_object_get (event, "audit_reason")
            && !json_object_get (event, "verify_state")
            && (!json_object_get (event, "fidelity")
                || !strcmp (s_str (event, "fidelity"), "full")))
            best = json_object_get (event, "speedup");
        long long generation = s_int (event, "generation", -1);
        if (generation > progress->generation)
            progress->generation = generation;
        if (json_is_number (best) && progress->has_best
            && json_number_value (best) <= progress->best)
            best = NULL;
    }
    else if (!strcmp (kind, "generation")) {
        progress->generation = s_int (event, "generation",
                                      progress->generation);
        best = json_object_get (event, "best_speedup");
    }
    else if (!strcmp (kind, "finished")) {
        const char *status = json_string_value (json_object_get (event,
                                                                 "status"));
        if (status)
            snprintf (progress->status, sizeof progress->status, "%s",
                      status);
        best = json_object_get (event, "best_speedup");
    }
    if (json_is_number (best)) {
        progress->best = json_number_value (best);
        progress->has_best = true;
    }
}

void
kf_ctl_progress_line (const kf_ctl_progress_t *progress, char *buf,
                      size_t size)
{
    enum { WIDTH = 24 };
    char bar[WIDTH + 1];
    long long filled = 0;
    if (progress->total > 0)
        filled = progress->done * WIDTH / progress->total;
    if (filled > WIDTH)
        filled = WIDTH;
    for (int i = 0; i < WIDTH; i++)
        bar[i] = i < filled ? '#' : '-';
    bar[WIDTH] = '\0';
    char best[32] = "-";
    if (progress->has_best)
        snprintf (best, sizeof best, "%.2fx", progress->best);
    char total[32] = "?";
    if (progress->total > 0)
        snprintf (total, sizeof total, "%lld", progress->total);
    char gens[32] = "?";
    long long shown = progress->generation + 1;
    /* A finished run may report the generation after its last one. */
    if (progress->generations > 0 && shown > progress->generations)
        shown = progress->generations;
    if (progress->generations > 0)
        snprintf (gens, sizeof gens, "%lld", progress->generations);
    snprintf (buf, size, "run %lld [%s] %lld/%s  gen %lld/%s  best %s  %s",
              progress->run_id, bar, progress->done, total,
              shown, gens, best,
              progress->status[0] ? progress->status : "-");
}

void
kf_ctl_print_run (FILE *out, json_t *run)
{
    char a[32], b[32], c[32], d[32], e[32];
    fprintf (out, "run %s  task %s  target %s  status %s\n",
             s_int_text (run, "id", a, sizeof a), s_str (run, "task_name"),
             s_str (run, "target"), s_str (run, "status"));
    long long generation = s_int (run, "generation", -1);
    long long generations = s_int (run, "generations", 0);
    //  Generations past the main phase are tuning rounds (docs/search.md).
    char phase[64];
    if (generation >= generations)
        snprintf (phase, sizeof phase, "tuning round %lld", generation - generations + 1);
    else
        snprintf (phase, sizeof phase, "generation %lld/%lld", generation + 1, generations);
    fprintf (out, "%s  candidates %s/%s done  population %s\n", phase,
             s_int_text (run, "done", b, sizeof b),
             s_int_text (run, "total", c, sizeof c),
             s_int_text (run, "population", d, sizeof d));
    fprintf (out, "best %s (candidate %s)  first correct %s\n",
             kf_ctl_speedup_text (json_object_get (run, "best_speedup"), a,
                                  sizeof a),
             s_int_text (run, "best_candidate_id", b, sizeof b),
             kf_ctl_speedup_text (json_object_get (run, "first_speedup"), e,
                                  sizeof e));
    long long held = s_int (run, "held_for_audit", 0);
    if (held > 0)
        fprintf (out, "held for audit: %lld correct candidate%s not counted until a person"
                 " accepts %s (kfctl audit CANDIDATE accept|reject)\n", held,
                 held == 1 ? "" : "s", held == 1 ? "it" : "them");
    long long verifying = s_int (run, "verifying", 0);
    if (verifying > 0)
        fprintf (out, "re-verifying: %lld correct candidate%s evaluated again (a suspicious"
                 " figure) before %s\n", verifying, verifying == 1 ? "" : "s",
                 verifying == 1 ? "it counts" : "they count");
    long long screened = s_int (run, "screened_out", 0), full = s_int (run, "full_pending", 0);
    if (screened > 0 || full > 0)
        fprintf (out, "fidelity: %lld correct candidate%s screened out (a screen figure, never"
                 " the best), %lld being timed with the full protocol\n", screened,
                 screened == 1 ? "" : "s", full);
    fprintf (out, "created %s  finished %s\n", s_str (run, "created_at"),
             s_str (run, "finished_at"));
    if (json_is_string (json_object_get (run, "reason")))
        fprintf (out, "reason: %s\n", s_str (run, "reason"));
    /* A PyTorch run's baselines (docs/pytorch-references.md): speedups are
     * against eager; against torch.compile the same candidate time is
     * divided into the compiled median instead. */
    json_t *eager = json_object_get (run, "ref_eager_ns");
    json_t *compiled = json_object_get (run, "ref_compiled_ns");
    json_t *best = json_object_get (run, "best_speedup");
    if (json_is_number (eager) && json_number_value (eager) > 0) {
        fprintf (out, "PyTorch eager %.1f us, torch.compile ", json_number_value (eager) / 1e3);
        if (json_is_number (compiled))
            fprintf (out, "%.1f us", json_number_value (compiled) / 1e3);
        else
            fprintf (out, "-");
        if (json_is_number (compiled) && json_is_number (best)) {
            json_t *vs = json_real (json_number_value (best) * json_number_value (compiled)
                                    / json_number_value (eager));
            fprintf (out, "  best vs torch.compile %s", kf_ctl_speedup_text (vs, a, sizeof a));
            json_decref (vs);
        }
        fputc ('\n', out);
    }
    size_t i;
    json_t *warning;
    json_array_foreach (json_object_get (run, "warnings"), i, warning)
        fprintf (out, "warning: %s\n", json_string_value (warning) ? json_string_value (warning) : "?");
}

/* Whether a candidate's figures are a screen's (kf_fidelity.c): final at
 * that fidelity, or waiting for its full-protocol evaluation. */
static bool
s_screen_only (json_t *c)
{
    return !strcmp (s_str (c, "fidelity"), "screen") || !strcmp (s_str (c, "fidelity"), "pending");
}

/* A correct candidate counts unless its figures are a screen's, it waits
 * for its re-verification, or is held for audit and not accepted
 * (KF_VERIFY_COUNTS in kf_verify.h). */
static bool
s_counts (json_t *c)
{
    return !strcmp (s_str (c, "status"), "correct") && !s_screen_only (c)
           && ((!json_is_string (json_object_get (c, "audit_reason"))
                && strcmp (s_str (c, "verify_state"), "pending"))
               || !strcmp (s_str (c, "audit_verdict"), "accepted"));
}

/* The status column: a suspicious result says where it stands. */
static const char *
s_audit_status (json_t *c)
{
    const char *status = s_str (c, "status");
    if (strcmp (status, "correct"))
        return status;
    if (!strcmp (s_str (c, "verify_state"), "pending"))
        return "verifying";
    if (json_is_string (json_object_get (c, "audit_reason"))
        && strcmp (s_str (c, "audit_verdict"), "accepted"))
        return !strcmp (s_str (c, "audit_verdict"), "rejected") ? "rejected" : "correct, held";
    return !strcmp (s_str (c, "verify_state"), "verified") ? "verified" : status;
}

void
kf_ctl_print_candidates (FILE *out, json_t *candidates)
{
    if (!json_is_array (candidates) || json_array_size (candidates) == 0) {
        fprintf (out, "no candidates yet\n");
        return;
    }
    fprintf (out, "%8s %4s %4s %8s  %-14s %-8s %8s %-8s %s\n", "ID", "GEN",
             "SLOT", "PARENT", "STATUS", "LANG", "SPEEDUP", "FIDELITY", "DETAIL");
    size_t i;
    json_t *c;
    json_array_foreach (candidates, i, c) {
        char a[32], b[32], s[32], p[32], sp[32];
        char detail[61];
        snprintf (detail, sizeof detail, "%s", s_str (c, "verdict_detail"));
        /* One row per candidate: a multi-line compiler message would
         * break the table. */
        for (char *q = detail; *q; q++)
            if (*q == '\n' || *q == '\r' || *q == '\t')
                *q = ' ';
        /* Which protocol the speedup is from (kf_fidelity.c). */
        const char *fidelity = s_str (c, "fidelity");
        fprintf (out, "%8s %4s %4s %8s  %-14s %-8s %8s %-8s %s\n",
                 s_int_text (c, "id", a, sizeof a),
                 s_int_text (c, "generation", b, sizeof b),
                 s_int_text (c, "slot", s, sizeof s),
                 s_int_text (c, "parent_id", p, sizeof p), s_audit_status (c),
                 s_str (c, "language"),
                 kf_ctl_speedup_text (json_object_get (c, "speedup"), sp,
                                      sizeof sp),
                 *fidelity ? fidelity : "-", detail);
    }
}

void
kf_ctl_print_runs (FILE *out, json_t *runs)
{
    if (!json_is_array (runs) || json_array_size (runs) == 0) {
        fprintf (out, "no runs\n");
        return;
    }
    fprintf (out, "%6s  %-10s %-24s %-14s %9s %13s %8s  %s\n", "ID", "STATUS",
             "TASK", "TARGET", "GEN", "DONE/TOTAL", "BEST", "CREATED");
    size_t i;
    json_t *r;
    json_array_foreach (runs, i, r) {
        char id[32], gen[64], done[64], best[32];
        snprintf (gen, sizeof gen, "%lld/%lld", s_int (r, "generation", -1) + 1,
                  s_int (r, "generations", 0));
        snprintf (done, sizeof done, "%lld/%lld", s_int (r, "done", 0),
                  s_int (r, "total", 0));
        fprintf (out, "%6s  %-10s %-24s %-14s %9s %13s %8s  %s\n",
                 s_int_text (r, "id", id, sizeof id), s_str (r, "status"),
                 s_str (r, "task_name"), s_str (r, "target"), gen, done,
                 kf_ctl_speedup_text (json_object_get (r, "best_speedup"),
                                      best, sizeof best),
                 s_str (r, "created_at"));
    }
}

/* Jobs in progress: the snapshot gives an array of ids or a count. */
static long long
s_jobs (json_t *worker)
{
    json_t *jobs = json_object_get (worker, "jobs");
    if (json_is_array (jobs))
        return (long long) json_array_size (jobs);
    return s_int (worker, "jobs", 0);
}

/* What a worker can do, in a few words: backends, arch, first device. */
static void
s_capabilities_text (json_t *caps, char *buf, size_t size)
{
    size_t used = 0;
    buf[0] = '\0';
    json_t *backends = json_object_get (caps, "backends");
    size_t i;
    json_t *v;
    json_array_foreach (backends, i, v)
        if (json_is_string (v) && used < size)
            used += snprintf (buf + used, size - used, "%s%s", used ? "," : "",
                              json_string_value (v));
    const char *arch = json_string_value (json_object_get (caps, "arch"));
    if (arch && used < size)
        used += snprintf (buf + used, size - used, "%s%s", used ? " " : "",
                          arch);
    json_t *device = json_array_get (json_object_get (caps, "devices"), 0);
    const char *name = json_string_value (json_object_get (device, "name"));
    if (name && used < size)
        used += snprintf (buf + used, size - used, "%s%s", used ? " " : "",
                          name);
    json_t *generators = json_object_get (caps, "generators");
    json_array_foreach (generators, i, v)
        if (json_is_string (v) && used < size)
            used += snprintf (buf + used, size - used, "%s%s",
                              used ? (i ? "," : " ") : "",
                              json_string_value (v));
    if (!buf[0])
        snprintf (buf, size, "-");
}

/* A worker's isolation (its capabilities' "isolation", kf_sandbox.h) in
 * a word: ns (namespaces), ns+uid (and a uid per run: root), OFF (the
 * operator's --no-isolation: candidates see the host), - (not said). */
static const char *
s_isolation_text (json_t *caps)
{
    const char *iso = json_string_value (json_object_get (caps, "isolation"));
    if (!iso)
        return "-";
    if (!strcmp (iso, "off"))
        return "OFF";
    if (!strcmp (iso, "namespaces, uid per run"))
        return "ns+uid";
    if (!strcmp (iso, "namespaces"))
        return "ns";
    return iso;
}

void
kf_ctl_print_workers (FILE *out, json_t *workers)
{
    if (!json_is_array (workers) || json_array_size (workers) == 0) {
        fprintf (out, "no workers connected\n");
        return;
    }
    fprintf (out, "%-28s %-9s %-16s %-8s %7s %5s %6s %7s %-9s  %s\n", "ID", "ROLE", "HOST",
             "STATE", "CREDITS", "JOBS", "HEARD", "DEVICES", "ISOLATION", "CAPABILITIES");
    size_t i;
    json_t *w;
    json_array_foreach (workers, i, w) {
        char credits[32], caps[160], heard[32] = "-";
        s_capabilities_text (json_object_get (w, "capabilities"), caps,
                             sizeof caps);
        /* STATE: draining (no new jobs: kfctl drain, or stopping), busy, idle;
         * HEARD: seconds since the coordinator last heard from it. */
        const char *state = json_is_true (json_object_get (w, "draining")) ? "draining"
                            : s_jobs (w) ? "busy" : "idle";
        long long ago = s_int (w, "last_heartbeat_ms_ago", -1);
        if (ago >= 0)
            snprintf (heard, sizeof heard, "%.1fs", ago / 1000.0);
        fprintf (out, "%-28s %-9s %-16s %-8s %7s %5lld %6s %7zu %-9s  %s\n", s_str (w, "id"),
                 s_str (w, "role"), s_str (w, "host"), state,
                 s_int_text (w, "credits", credits, sizeof credits),
                 s_jobs (w), heard,
                 json_array_size (json_object_get (json_object_get (w, "capabilities"),
                                                   "devices")),
                 s_isolation_text (json_object_get (w, "capabilities")), caps);
    }
}

void
kf_ctl_print_status (FILE *out, json_t *snap)
{
    long long up = s_int (snap, "uptime_s", -1);
    json_t *version = json_object_get (snap, "version");
    if (json_is_integer (version))
        fprintf (out, "coordinator (protocol %lld)",
                 (long long) json_integer_value (version));
    else
        fprintf (out, "coordinator %s", s_str (snap, "version"));
    if (up >= 0)
        fprintf (out, ", up %lldh%02lldm%02llds", up / 3600, up / 60 % 60,
                 up % 60);
    if (json_is_string (json_object_get (snap, "database")))
        fprintf (out, ", database %s", s_str (snap, "database"));
    fprintf (out, "\n");

    static const char *roles[] = { "generate", "compile", "execute" };
    json_t *workers = json_object_get (snap, "workers");
    fprintf (out, "workers:");
    for (size_t r = 0; r < 3; r++) {
        long long n = 0, jobs = 0;
        size_t i;
        json_t *w;
        json_array_foreach (workers, i, w)
            if (!strcmp (s_str (w, "role"), roles[r])) {
                n++;
                jobs += s_jobs (w);
            }
        fprintf (out, " %s %lld (%lld busy)%s", roles[r], n, jobs,
                 r < 2 ? "," : "\n");
    }

    json_t *queues = json_object_get (snap, "queues");
    fprintf (out, "queued:");
    const char *key;
    json_t *v;
    bool any = false;
    json_object_foreach (queues, key, v) {
        /* A bare count, or an object with queued and leased counts. */
        if (json_is_object (v))
            fprintf (out, "%s %s %lld (%lld leased)", any ? "," : "", key,
                     s_int (v, "queued", 0), s_int (v, "leased", 0));
        else
            fprintf (out, "%s %s %lld", any ? "," : "", key,
                     json_is_integer (v) ? (long long) json_integer_value (v)
                                         : 0);
        any = true;
    }
    fprintf (out, "%s\n", any ? "" : " none");

    json_t *runs = json_object_get (snap, "runs");
    long long running = 0;
    size_t i;
    json_t *r;
    json_array_foreach (runs, i, r)
        if (!strcmp (s_str (r, "status"), "running"))
            running++;
    fprintf (out, "runs: %zu listed, %lld running\n", json_array_size (runs),
             running);
    json_array_foreach (runs, i, r) {
        if (strcmp (s_str (r, "status"), "running"))
            continue;
        char best[32];
        fprintf (out, "  run %lld: gen %lld/%lld, %lld/%lld done, best %s\n",
                 s_int (r, "id", 0), s_int (r, "generation", -1) + 1,
                 s_int (r, "generations", 0), s_int (r, "done", 0),
                 s_int (r, "total", 0),
                 kf_ctl_speedup_text (json_object_get (r, "best_speedup"),
                                      best, sizeof best));
    }

    json_t *counters = json_object_get (snap, "counters");
    fprintf (out, "counters:");
    any = false;
    json_object_foreach (counters, key, v) {
        if (json_is_integer (v))
            fprintf (out, " %s=%lld", key, (long long) json_integer_value (v));
        else if (json_is_object (v)) {
            /* Per error code counters may come nested. */
            const char *k2;
            json_t *v2;
            json_object_foreach (v, k2, v2)
                fprintf (out, " %s.%s=%lld", key, k2,
                         json_is_integer (v2)
                             ? (long long) json_integer_value (v2) : 0);
        }
        any = true;
    }
    fprintf (out, "%s\n", any ? "" : " none");
}

/* ------------------------------------------------------------------ */
/* The archive as grids, and the report files                           */

/* A speedup may come as a number, or as text from a NUMERIC column of
 * another coordinator version; anything else is no value. */
static bool
s_real (json_t *obj, const char *key, double *out)
{
    json_t *v = json_object_get (obj, key);
    if (json_is_number (v)) {
        *out = json_number_value (v);
        return true;
    }
    const char *text = json_string_value (v);
    if (text && *text) {
        char *end = NULL;
        double d = strtod (text, &end);
        if (end && !*end) {
            *out = d;
            return true;
        }
    }
    return false;
}

/* Coordinates "{m,a,s}" as PostgreSQL prints an int[]; false when the
 * text is missing or of another shape. */
static bool
s_coords (json_t *obj, const char *key, int xyz[3])
{
    const char *text = json_string_value (json_object_get (obj, key));
    return text && sscanf (text, "{%d,%d,%d}", &xyz[0], &xyz[1], &xyz[2]) == 3;
}

#define S_LEVELS 4
static const char *s_dim_names[3] = { "memory", "algorithm",
                                      "synchronisation" };
/* The level names of docs/descriptors.md, one row per dimension. */
static const char *s_level_names[3][S_LEVELS] = {
    { "scalar", "coalesced", "tiled", "hierarchical" },
    { "direct", "fused", "reformulated", "novel" },
    { "none", "barriers", "warp", "global" }
};

static const char *
s_level_name (int dim, int level)
{
    return level >= 0 && level < S_LEVELS ? s_level_names[dim][level] : "?";
}

/* The candidate with id ID in CANDIDATES, or NULL. */
static json_t *
s_candidate (json_t *candidates, long long id)
{
    size_t i;
    json_t *c;
    json_array_foreach (candidates, i, c)
        if (s_int (c, "id", -1) == id)
            return c;
    return NULL;
}

/* One grid: rows are dimension ROW, columns dimension COL, each cell the
 * best speedup among the occupied cells that project onto it. */
static void
s_print_grid (FILE *out, json_t *archive, int row, int col)
{
    double best[S_LEVELS][S_LEVELS];
    bool has[S_LEVELS][S_LEVELS];
    memset (has, 0, sizeof has);
    size_t i;
    json_t *cell;
    json_array_foreach (archive, i, cell) {
        int xyz[3];
        double speedup;
        if (!s_coords (cell, "cell", xyz) || !s_real (cell, "speedup", &speedup))
            continue;
        int r = xyz[row], c = xyz[col];
        /* A run with more bins than levels cannot be drawn on these
         * axes; such a cell is left out rather than misplaced. */
        if (r < 0 || r >= S_LEVELS || c < 0 || c >= S_LEVELS)
            continue;
        if (!has[r][c] || speedup > best[r][c]) {
            best[r][c] = speedup;
            has[r][c] = true;
        }
    }
    fprintf (out, "%s x %s\n", s_dim_names[row], s_dim_names[col]);
    fprintf (out, "  %-13s", "");
    for (int c = 0; c < S_LEVELS; c++)
        fprintf (out, " %13s", s_level_name (col, c));
    fprintf (out, "\n");
    for (int r = 0; r < S_LEVELS; r++) {
        fprintf (out, "  %-13s", s_level_name (row, r));
        for (int c = 0; c < S_LEVELS; c++) {
            char text[32];
            if (has[r][c])
                snprintf (text, sizeof text, "%.2fx", best[r][c]);
            else
                snprintf (text, sizeof text, "  -  ");
            fprintf (out, " %13s", text);
        }
        fprintf (out, "\n");
    }
}

void
kf_ctl_print_archive (FILE *out, json_t *body)
{
    json_t *run = json_object_get (body, "run");
    json_t *archive = json_object_get (body, "archive");
    json_t *candidates = json_object_get (body, "candidates");
    size_t occupied = json_array_size (archive);
    fprintf (out, "archive: %zu cell%s occupied; each grid cell shows the best "
             "elite speedup over the third dimension\n",
             occupied, occupied == 1 ? "" : "s");
    static const int pairs[3][2] = { { 0, 1 }, { 0, 2 }, { 1, 2 } };
    for (int p = 0; p < 3; p++) {
        fprintf (out, "\n");
        s_print_grid (out, archive, pairs[p][0], pairs[p][1]);
    }
    fprintf (out, "\n");

    long long best_id = s_int (run, "best_candidate_id", -1);
    json_t *best = best_id >= 0 ? s_candidate (candidates, best_id) : NULL;
    if (!best) {
        fprintf (out, "best kernel: none correct yet\n");
        return;
    }
    char speedup[32];
    double value;
    if (s_real (best, "speedup", &value))
        snprintf (speedup, sizeof speedup, "%.2fx", value);
    else
        kf_ctl_speedup_text (json_object_get (run, "best_speedup"), speedup,
                             sizeof speedup);
    int xyz[3];
    if (s_coords (best, "coords", xyz))
        fprintf (out, "best kernel: candidate %lld, %s, coords {%d,%d,%d} "
                 "(%s, %s, %s)\n", best_id, speedup, xyz[0], xyz[1], xyz[2],
                 s_level_name (0, xyz[0]), s_level_name (1, xyz[1]),
                 s_level_name (2, xyz[2]));
    else
        fprintf (out, "best kernel: candidate %lld, %s, no coords\n", best_id,
                 speedup);

    /* Parents always come from the same run, so the chain ends at a root;
     * the bound only guards against a corrupt reply with a cycle. */
    fprintf (out, "lineage of the best: %lld", best_id);
    json_t *node = best;
    for (size_t steps = 0; steps <= json_array_size (candidates); steps++) {
        long long parent = s_int (node, "parent_id", -1);
        if (parent < 0)
            break;
        fprintf (out, " <- %lld", parent);
        node = s_candidate (candidates, parent);
        if (!node)
            break;      /* a parent outside this reply: stop at its id */
    }
    fprintf (out, "\n");
}

/* An edit in one line: "pitfalls: +\"- Observed...\"" for an append,
 * "strategies: \"old\" -> \"new\"" for a replacement, each side cut. */
static void
s_edit_short (FILE *out, json_t *edit)
{
    const char *sides[2] = { json_string_value (json_object_get (edit, "search")),
                             json_string_value (json_object_get (edit, "replace")) };
    char cut[2][48];
    const char *more[2];
    for (int i = 0; i < 2; i++) {
        const char *t = sides[i] ? sides[i] : "";
        size_t line = strcspn (t, "\n"), len = strlen (t);
        if (len && t[len - 1] == '\n')
            len--;   //  the block's last newline is no text of its own
        snprintf (cut[i], sizeof cut[i], "%.*s", (int) line, t);
        more[i] = strlen (cut[i]) < len ? "..." : "";
    }
    if (!sides[0] || !*sides[0])
        fprintf (out, "%s: +\"%s%s\"", s_str (edit, "section"), cut[1], more[1]);
    else
        fprintf (out, "%s: \"%s%s\" -> \"%s%s\"", s_str (edit, "section"), cut[0], more[0],
                 cut[1], more[1]);
}

void
kf_ctl_print_prompts (FILE *out, json_t *body)
{
    json_t *versions = json_object_get (body, "prompt_versions");
    json_t *rejected = json_object_get (body, "prompt_rejected");
    if (!json_array_size (versions))
        return;
    fprintf (out, "prompt versions: %zu, from %lld meta job%s\n", json_array_size (versions),
             s_int (body, "meta_jobs", 0), s_int (body, "meta_jobs", 0) == 1 ? "" : "s");
    fprintf (out, "%-5s %-6s %4s %8s %8s %7s %-7s  %s\n", "VER", "PARENT", "GEN", "FITNESS",
             "BEST", "KERNELS", "ARCHIVE", "EDITS");
    size_t i;
    json_t *v;
    json_array_foreach (versions, i, v) {
        char ver[24], parent[24] = "-", fit[24] = "-", best[32];
        snprintf (ver, sizeof ver, "v%lld", s_int (v, "number", 0));
        if (s_int (v, "parent", -1) >= 0)
            snprintf (parent, sizeof parent, "v%lld", s_int (v, "parent", 0));
        double f;
        if (s_real (v, "fitness", &f))
            snprintf (fit, sizeof fit, "%.3f", f);
        kf_ctl_speedup_text (json_object_get (v, "best_speedup"), best, sizeof best);
        fprintf (out, "%-5s %-6s %4lld %8s %8s %7lld %-7s  ", ver, parent,
                 s_int (v, "generation", 0), fit, best, s_int (v, "candidates", 0),
                 json_is_false (json_object_get (v, "in_archive")) ? "no" : "yes");
        json_t *edits = json_object_get (v, "edits");
        if (!json_array_size (edits))
            fprintf (out, "(the defaults)");
        size_t k;
        json_t *e;
        json_array_foreach (edits, k, e) {
            if (k)
                fprintf (out, "\n%-5s %-6s %4s %8s %8s %7s %-7s  ", "", "", "", "", "", "", "");
            s_edit_short (out, e);
        }
        fprintf (out, "\n");
    }
    size_t n = json_array_size (rejected);
    if (n) {
        json_t *last = json_array_get (rejected, n - 1);
        fprintf (out, "rejected edits: %zu%s (latest, job %lld: %s)\n", n,
                 n >= 20 ? " or more" : "", s_int (last, "job_id", 0), s_str (last, "reason"));
    }
    fprintf (out, "\n");
}

/* The candidate of CANDIDATES with id ID as {candidate_id, generation,
 * slot, speedup, coords [m,a,s]}, or null. */
static json_t *
s_show_candidate (json_t *candidates, long long id)
{
    json_t *c = id >= 0 ? s_candidate (candidates, id) : NULL;
    if (!c)
        return json_null ();
    json_t *out = json_pack ("{s:I, s:I, s:I}", "candidate_id", (json_int_t) id, "generation",
                             (json_int_t) s_int (c, "generation", 0), "slot",
                             (json_int_t) s_int (c, "slot", 0));
    double sp;
    json_object_set_new (out, "speedup", s_real (c, "speedup", &sp) ? json_real (sp)
                                                                    : json_null ());
    int xyz[3];
    json_object_set_new (out, "coords", s_coords (c, "coords", xyz)
                                            ? json_pack ("[i,i,i]", xyz[0], xyz[1], xyz[2])
                                            : json_null ());
    return out;
}

void
kf_ctl_show_extend (json_t *body)
{
    json_t *run = json_object_get (body, "run");
    json_t *candidates = json_object_get (body, "candidates");
    json_t *cells = json_array ();
    size_t i;
    json_t *a;
    json_array_foreach (json_object_get (body, "archive"), i, a) {
        int xyz[3];
        double sp, fit;
        if (!s_coords (a, "cell", xyz))
            continue;
        json_t *cell = json_pack ("{s:[i,i,i], s:I}", "coords", xyz[0], xyz[1], xyz[2],
                                  "candidate_id",
                                  (json_int_t) s_int (a, "candidate_id", 0));
        json_object_set_new (cell, "speedup", s_real (a, "speedup", &sp) ? json_real (sp)
                                                                         : json_null ());
        json_object_set_new (cell, "fitness", s_real (a, "fitness", &fit) ? json_real (fit)
                                                                          : json_null ());
        json_array_append_new (cells, cell);
    }
    json_object_set_new (body, "cells", cells);
    json_object_set_new (body, "best",
                         s_show_candidate (candidates, s_int (run, "best_candidate_id", -1)));
    //  The first correct candidate in (generation, slot) order: the one
    //  the search started from, what "improved on" is measured against.
    long long first = -1, fg = 0, fs = 0;
    json_t *c;
    json_array_foreach (candidates, i, c)
        if (s_counts (c)) {
            long long g = s_int (c, "generation", 0), sl = s_int (c, "slot", 0);
            if (first < 0 || g < fg || (g == fg && sl < fs)) {
                first = s_int (c, "id", -1);
                fg = g;
                fs = sl;
            }
        }
    json_object_set_new (body, "first_correct", s_show_candidate (candidates, first));
}

/* Candidates of a SHOW reply in (generation, slot) order: the reply is
 * ordered so already, but the report's budget axis depends on it. */
static int
s_by_generation_slot (const void *a, const void *b)
{
    json_t *x = *(json_t *const *) a, *y = *(json_t *const *) b;
    long long gx = s_int (x, "generation", 0), gy = s_int (y, "generation", 0);
    if (gx != gy)
        return gx < gy ? -1 : 1;
    long long sx = s_int (x, "slot", 0), sy = s_int (y, "slot", 0);
    return sx < sy ? -1 : sx > sy;
}

/* The speedup of a candidate that counts for the curve: correct ones
 * only, since a fast wrong kernel is no kernel, and of those not the ones
 * held for audit nor the ones timed only by a screen, as for the run's
 * best (S_COUNTS in kf_search.c): a
 * curve that ends above the run's best would report what the run does
 * not. */
static bool
s_valid_speedup (json_t *c, double *speedup)
{
    return s_counts (c) && s_real (c, "speedup", speedup) && *speedup > 0;
}

static char *
s_path (const char *prefix, const char *suffix)
{
    size_t size = strlen (prefix) + strlen (suffix) + 1;
    char *path = malloc (size);
    if (path)
        snprintf (path, size, "%s%s", prefix, suffix);
    return path;
}

static char *
s_error (const char *path, const char *why)
{
    const char *fmt = "cannot write %s: %s";
    size_t size = strlen (fmt) + strlen (path) + strlen (why) + 1;
    char *text = malloc (size);
    if (text)
        snprintf (text, size, fmt, path, why);
    return text;
}

/* Closes F and says whether every write to it reached the file: fprintf
 * errors (a full disk) only show in the stream's error flag or at close. */
static int
s_close (FILE *f, const char *path, char **err)
{
    bool failed = ferror (f) != 0;
    int saved = errno;
    if (fclose (f) != 0 && !failed) {
        failed = true;
        saved = errno;
    }
    if (failed) {
        *err = s_error (path, saved ? strerror (saved) : "write error");
        return -1;
    }
    return 0;
}

static FILE *
s_open (const char *path, char **err)
{
    FILE *f = fopen (path, "w");
    if (!f)
        *err = s_error (path, strerror (errno));
    return f;
}

/* A "nice" step (1, 2 or 5 times a power of ten) that cuts RANGE into
 * about TICKS parts, so tick labels read as round numbers. */
static double
s_nice_step (double range, int ticks)
{
    double raw = range / ticks;
    double power = 1;
    while (power * 10 <= raw)
        power *= 10;
    while (power > raw)
        power /= 10;
    double f = raw / power;
    return (f <= 1 ? 1 : f <= 2 ? 2 : f <= 5 ? 5 : 10) * power;
}

static void
s_xml_text (FILE *f, const char *text)
{
    for (const char *p = text; *p; p++)
        switch (*p) {
        case '<': fputs ("&lt;", f); break;
        case '>': fputs ("&gt;", f); break;
        case '&': fputs ("&amp;", f); break;
        case '"': fputs ("&quot;", f); break;
        default:
            /* Control characters are not allowed in XML 1.0. */
            if ((unsigned char) *p >= 0x20 || *p == '\t')
                fputc (*p, f);
        }
}

/* The limited-budget curve CURVE[0..n-1] (HAS[b]: a correct candidate
 * among the first b+1) as a step plot, 640x400. */
static void
s_write_svg (FILE *f, json_t *run, const double *curve, const bool *has,
             size_t n)
{
    enum { W = 640, H = 400, LEFT = 64, RIGHT = 24, TOP = 40, BOTTOM = 56 };
    const double pw = W - LEFT - RIGHT, ph = H - TOP - BOTTOM;
    double ymax = 1;
    for (size_t b = 0; b < n; b++)
        if (has[b] && curve[b] > ymax)
            ymax = curve[b];
    double ystep = s_nice_step (ymax, 5);
    ymax = ystep * (double) (long long) (ymax / ystep + 0.999999);
    if (ymax <= 0)
        ymax = 1;
    double xmax = n > 0 ? (double) n : 1;
    double xstep = s_nice_step (xmax, 8);
    if (xstep < 1)
        xstep = 1;
#define S_X(v) (LEFT + (v) / xmax * pw)
#define S_Y(v) (TOP + ph - (v) / ymax * ph)

    fprintf (f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
                "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" "
                "height=\"%d\" viewBox=\"0 0 %d %d\" font-family=\"sans-serif\" "
                "font-size=\"12\">\n", W, H, W, H);
    fprintf (f, "<rect x=\"0\" y=\"0\" width=\"%d\" height=\"%d\" "
                "fill=\"white\"/>\n", W, H);
    fprintf (f, "<text x=\"%d\" y=\"22\" text-anchor=\"middle\" "
                "font-size=\"14\">run %lld (", W / 2, s_int (run, "id", 0));
    s_xml_text (f, s_str (run, "task_name"));
    fprintf (f, "): best valid speedup within a budget of B candidates"
                "</text>\n");

    /* Grid lines and tick labels first, so the curve draws over them. */
    /* Ticks counted in whole steps, so float drift cannot add or drop
     * one, and none lands past the end of its axis. */
    for (long long k = 0; k * ystep <= ymax * (1 + 1e-9); k++) {
        double y = (double) k * ystep;
        fprintf (f, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" "
                    "stroke=\"#dddddd\"/>\n", LEFT, S_Y (y), W - RIGHT, S_Y (y));
        fprintf (f, "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%gx</text>\n",
                 LEFT - 6, S_Y (y) + 4, y);
    }
    for (long long k = 0; k * xstep <= xmax * (1 + 1e-9); k++) {
        double x = (double) k * xstep;
        fprintf (f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
                    "stroke=\"black\"/>\n", S_X (x), TOP + ph, S_X (x),
                 TOP + ph + 5);
        fprintf (f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%g"
                    "</text>\n", S_X (x), TOP + ph + 18, x);
    }
    /* Speedup 1 is the reference: above it the search paid off. */
    if (ymax >= 1)
        fprintf (f, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" "
                    "stroke=\"#999999\" stroke-dasharray=\"4 3\"/>\n",
                 LEFT, S_Y (1.0), W - RIGHT, S_Y (1.0));
    fprintf (f, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" "
                "stroke=\"black\"/>\n", LEFT, TOP + ph, W - RIGHT, TOP + ph);
    fprintf (f, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%.1f\" "
                "stroke=\"black\"/>\n", LEFT, TOP, LEFT, TOP + ph);
    fprintf (f, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">budget B: "
                "candidates evaluated, in (generation, slot) order</text>\n",
             LEFT + pw / 2, H - 14);
    fprintf (f, "<text x=\"16\" y=\"%.1f\" text-anchor=\"middle\" "
                "transform=\"rotate(-90 16 %.1f)\">best valid speedup</text>\n",
             TOP + ph / 2, TOP + ph / 2);

    /* The step line: candidate b (1-based) holds the value from x = b-1
     * to x = b, and nothing is drawn before the first correct one. */
    bool open = false;
    for (size_t b = 0; b < n; b++) {
        if (!has[b])
            continue;
        if (!open) {
            fprintf (f, "<path fill=\"none\" stroke=\"#1f77b4\" "
                        "stroke-width=\"2\" d=\"M %.1f %.1f",
                     S_X ((double) b), S_Y (curve[b]));
            open = true;
        }
        else
            fprintf (f, " V %.1f", S_Y (curve[b]));
        fprintf (f, " H %.1f", S_X ((double) (b + 1)));
    }
    if (open)
        fprintf (f, "\"/>\n");
    else
        fprintf (f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">"
                    "no correct candidate yet</text>\n",
                 LEFT + pw / 2, TOP + ph / 2);
    fprintf (f, "</svg>\n");
#undef S_X
#undef S_Y
}

int
kf_ctl_report_write (json_t *body, const char *prefix, char *paths[3],
                     char **err)
{
    *err = NULL;
    paths[0] = s_path (prefix, ".csv");
    paths[1] = s_path (prefix, "-generations.csv");
    paths[2] = s_path (prefix, ".svg");
    json_t *candidates = json_object_get (body, "candidates");
    size_t n = json_array_size (candidates);
    json_t **order = calloc (n ? n : 1, sizeof *order);
    double *curve = calloc (n ? n : 1, sizeof *curve);
    bool *has = calloc (n ? n : 1, sizeof *has);
    int rc = -1;
    FILE *f = NULL;
    if (!paths[0] || !paths[1] || !paths[2] || !order || !curve || !has) {
        *err = strdup ("out of memory");
        goto done;
    }
    for (size_t i = 0; i < n; i++)
        order[i] = json_array_get (candidates, i);
    qsort (order, n, sizeof *order, s_by_generation_slot);

    /* (a) the limited-budget curve */
    if (!(f = s_open (paths[0], err)))
        goto done;
    fprintf (f, "budget,best_speedup\n");
    double best = 0;
    bool any = false;
    for (size_t b = 0; b < n; b++) {
        double speedup;
        if (s_valid_speedup (order[b], &speedup) && (!any || speedup > best)) {
            best = speedup;
            any = true;
        }
        curve[b] = best;
        has[b] = any;
        if (any)
            fprintf (f, "%zu,%.10g\n", b + 1, best);
        else
            fprintf (f, "%zu,\n", b + 1);
    }
    if (s_close (f, paths[0], err))
        goto done;

    /* (b) per-generation progress, one row per generation that has
     * candidates (in order, since ORDER is sorted by generation) */
    if (!(f = s_open (paths[1], err)))
        goto done;
    fprintf (f, "generation,candidates,correct,best_speedup_in_generation,"
                "best_so_far\n");
    double so_far = 0;
    bool any_so_far = false;
    for (size_t i = 0; i < n;) {
        long long generation = s_int (order[i], "generation", 0);
        long long count = 0, correct = 0;
        double in_gen = 0;
        bool any_in_gen = false;
        for (; i < n && s_int (order[i], "generation", 0) == generation; i++) {
            double speedup;
            count++;
            if (!s_valid_speedup (order[i], &speedup))
                continue;
            correct++;
            if (!any_in_gen || speedup > in_gen)
                in_gen = speedup;
            any_in_gen = true;
        }
        if (any_in_gen && (!any_so_far || in_gen > so_far)) {
            so_far = in_gen;
            any_so_far = true;
        }
        char a[32] = "", b[32] = "";
        if (any_in_gen)
            snprintf (a, sizeof a, "%.10g", in_gen);
        if (any_so_far)
            snprintf (b, sizeof b, "%.10g", so_far);
        fprintf (f, "%lld,%lld,%lld,%s,%s\n", generation, count, correct, a, b);
    }
    if (s_close (f, paths[1], err))
        goto done;

    /* (c) the curve as a plot */
    if (!(f = s_open (paths[2], err)))
        goto done;
    s_write_svg (f, json_object_get (body, "run"), curve, has, n);
    if (s_close (f, paths[2], err))
        goto done;
    rc = 0;
done:
    free (order);
    free (curve);
    free (has);
    if (rc) {
        for (int i = 0; i < 3; i++) {
            free (paths[i]);
            paths[i] = NULL;
        }
        if (!*err)
            *err = strdup ("out of memory");
    }
    return rc;
}
