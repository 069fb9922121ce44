/*  kfctl_print.c - tables and summaries kfctl shows to people: a run's
 *  summary (its progress counted by kfctl_progress.c), its candidates,
 *  the list of runs, the workers and the status snapshot. Fields are read through
 *  kfctl_fields.h, so a missing value prints as "-", never crashes.
 */
#include "kfctl_fields.h"
#include "kfctl_print.h"
#include <stdlib.h>
#include <string.h>

/* An integer field as text ("-" when absent or null). */
static const char *
s_int_text (json_t *obj, const char *key, char *buf, size_t size)
{
    json_t *v = json_object_get (obj, key);
    if (!json_is_number (v))
        return "-";
    snprintf (buf, size, "%lld", kf_ctl_int (obj, key, 0));
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
kf_ctl_print_run (FILE *out, json_t *run)
{
    char a[32], b[32], d[32], e[32];
    fprintf (out, "run %s  task %s  target %s  status %s\n",
             s_int_text (run, "id", a, sizeof a), kf_ctl_str (run, "task_name"),
             kf_ctl_str (run, "target"), kf_ctl_str (run, "status"));
    /* A suite's run says which suite and which of its problems it is. */
    if (json_is_integer (json_object_get (run, "suite_id"))) {
        fprintf (out, "suite %s", s_int_text (run, "suite_id", b, sizeof b));
        if (json_is_string (json_object_get (run, "suite_problem")))
            fprintf (out, ", problem %s", kf_ctl_str (run, "suite_problem"));
        fprintf (out, "  (kfctl suite show %s)\n", b);
    }
    /* Generations past the main phase are tuning rounds (docs/search.md);
     * the counting rules are kfctl_progress.c's. */
    kf_ctl_progress_t progress;
    kf_ctl_progress_init (&progress, kf_ctl_int (run, "id", 0));
    kf_ctl_progress_from_run (&progress, run);
    char phase[48];
    kf_ctl_phase_text (&progress, phase, sizeof phase);
    fprintf (out, "%s  candidates %lld/%lld done, %lld in flight  population %s\n", phase,
             progress.done, progress.total, progress.in_flight,
             s_int_text (run, "population", d, sizeof d));
    fprintf (out, "best %s (candidate %s)  first correct %s\n",
             kf_ctl_speedup_text (json_object_get (run, "best_speedup"), a,
                                  sizeof a),
             s_int_text (run, "best_candidate_id", b, sizeof b),
             kf_ctl_speedup_text (json_object_get (run, "first_speedup"), e,
                                  sizeof e));
    if (progress.has_pending)
        fprintf (out, "pending verification: %.2fx, better than the best, counts once"
                 " verified (re-verification or full-protocol timing)\n", progress.pending);
    if (progress.elapsed_s >= 0) {
        char elapsed[24], left[24];
        kf_ctl_duration_text (progress.elapsed_s, elapsed, sizeof elapsed);
        double estimate = kf_ctl_progress_estimate (&progress);
        kf_ctl_duration_text (estimate, left, sizeof left);
        fprintf (out, "elapsed %s%s%s%s\n", elapsed, estimate >= 0 ? ", about " : "",
                 estimate >= 0 ? left : "", estimate >= 0 ? " left (estimate)" : "");
    }
    long long held = kf_ctl_int (run, "held_for_audit", 0);
    if (held > 0)
        fprintf (out, "held for audit: %lld correct candidate%s not counted until a person"
                 " accepts %s (kfctl audit CANDIDATE accept|reject)\n", held,
                 held == 1 ? "" : "s", held == 1 ? "it" : "them");
    long long verifying = kf_ctl_int (run, "verifying", 0);
    if (verifying > 0)
        fprintf (out, "re-verifying: %lld correct candidate%s evaluated again (a suspicious"
                 " figure) before %s\n", verifying, verifying == 1 ? "" : "s",
                 verifying == 1 ? "it counts" : "they count");
    long long screened = kf_ctl_int (run, "screened_out", 0);
    long long full = kf_ctl_int (run, "full_pending", 0);
    if (screened > 0 || full > 0)
        fprintf (out, "fidelity: %lld correct candidate%s screened out (a screen figure, never"
                 " the best), %lld being timed with the full protocol\n", screened,
                 screened == 1 ? "" : "s", full);
    fprintf (out, "created %s  finished %s\n", kf_ctl_str (run, "created_at"),
             kf_ctl_str (run, "finished_at"));
    if (json_is_string (json_object_get (run, "reason")))
        fprintf (out, "reason: %s\n", kf_ctl_str (run, "reason"));
    if (json_is_string (json_object_get (run, "waiting")))   /* kf_coord_fit.c */
        fprintf (out, "waiting: %s\n", kf_ctl_str (run, "waiting"));
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

/* "3455.5 us (p10-p90 3400.1-3510.2)" for side PREFIX ("candidate" or
 * "reference") of C into BUF at USED; returns the new USED. */
static size_t
s_side_time (json_t *c, const char *prefix, char *buf, size_t size, size_t used)
{
    char key[40];
    double med = 0, p10 = 0, p90 = 0;
    snprintf (key, sizeof key, "%s_ns", prefix);
    if (used >= size || !kf_ctl_real (c, key, &med) || !(med > 0))
        return used;
    used += (size_t) snprintf (buf + used, size - used, "%.1f us", med / 1e3);
    snprintf (key, sizeof key, "%s_p10_ns", prefix);
    bool lo = kf_ctl_real (c, key, &p10) && p10 > 0;
    snprintf (key, sizeof key, "%s_p90_ns", prefix);
    if (lo && kf_ctl_real (c, key, &p90) && p90 > 0 && used < size)
        used += (size_t) snprintf (buf + used, size - used, " (p10-p90 %.1f-%.1f)", p10 / 1e3,
                                   p90 / 1e3);
    return used;
}

void
kf_ctl_times_text (json_t *c, char *buf, size_t size)
{
    buf[0] = 0;
    size_t used = s_side_time (c, "candidate", buf, size, 0);
    if (used == 0)
        return;
    if (used < size) {
        size_t at = used;
        used += (size_t) snprintf (buf + used, size - used, " against the reference's ");
        if (s_side_time (c, "reference", buf, size, used) == used && at < size)
            buf[at] = 0;   /* no reference figure: the candidate's alone */
    }
}

/* A median in microseconds, or "-". */
static const char *
s_us_text (json_t *c, const char *key, char *buf, size_t size)
{
    double ns = 0;
    if (kf_ctl_real (c, key, &ns) && ns > 0)
        snprintf (buf, size, "%.1f", ns / 1e3);
    else
        snprintf (buf, size, "-");
    return buf;
}

/* The status column: a suspicious result says where it stands. */
static const char *
s_audit_status (json_t *c)
{
    const char *status = kf_ctl_str (c, "status");
    if (strcmp (status, "correct"))
        return status;
    if (!strcmp (kf_ctl_str (c, "verify_state"), "pending"))
        return "verifying";
    if (json_is_string (json_object_get (c, "audit_reason"))
        && strcmp (kf_ctl_str (c, "audit_verdict"), "accepted"))
        return !strcmp (kf_ctl_str (c, "audit_verdict"), "rejected") ? "rejected" : "correct, held";
    return !strcmp (kf_ctl_str (c, "verify_state"), "verified") ? "verified" : status;
}

void
kf_ctl_print_candidates (FILE *out, json_t *candidates)
{
    if (!json_is_array (candidates) || json_array_size (candidates) == 0) {
        fprintf (out, "no candidates yet\n");
        return;
    }
    /* TIME_US and REF_US: the medians behind the speedup, in microseconds. */
    fprintf (out, "%8s %4s %4s %8s  %-14s %-8s %8s %10s %10s %-8s %s\n", "ID", "GEN",
             "SLOT", "PARENT", "STATUS", "LANG", "SPEEDUP", "TIME_US", "REF_US", "FIDELITY",
             "DETAIL");
    size_t i;
    json_t *c;
    json_array_foreach (candidates, i, c) {
        char a[32], b[32], s[32], p[32], sp[32], tc[32], tr[32];
        /* The whole detail, last in the row so nothing after it shifts;
         * one row per candidate, so a multi-line compiler message has its
         * line breaks and tabs as spaces. */
        char *detail = strdup (kf_ctl_str (c, "verdict_detail"));
        /* A tuning candidate's screen figure is the best of the points its
         * sweep screened, so it reads high (round 17: candidate 20
         * screened 154.72x as the best of 8, and timed 95.18x in full). */
        long long points = kf_ctl_int (c, "screen_points", 0);
        if (detail && points > 1 && !strcmp (kf_ctl_str (c, "phase"), "tuning")
            && kf_ctl_screen_only (c)) {
            size_t room = strlen (detail) + 128;
            char *said = malloc (room);
            if (said) {
                snprintf (said, room, "the best of %lld points its tuning sweep screened, so "
                          "it reads high%s%s", points, *detail ? "; " : "", detail);
                free (detail);
                detail = said;
            }
        }
        for (char *q = detail; q && *q; q++)
            if (*q == '\n' || *q == '\r' || *q == '\t')
                *q = ' ';
        /* Which protocol the speedup is from (kf_fidelity.c). */
        const char *fidelity = kf_ctl_str (c, "fidelity");
        fprintf (out, "%8s %4s %4s %8s  %-14s %-8s %8s %10s %10s %-8s %s\n",
                 s_int_text (c, "id", a, sizeof a),
                 s_int_text (c, "generation", b, sizeof b),
                 s_int_text (c, "slot", s, sizeof s),
                 s_int_text (c, "parent_id", p, sizeof p), s_audit_status (c),
                 kf_ctl_str (c, "language"),
                 kf_ctl_speedup_text (json_object_get (c, "speedup"), sp,
                                      sizeof sp),
                 s_us_text (c, "candidate_ns", tc, sizeof tc),
                 s_us_text (c, "reference_ns", tr, sizeof tr),
                 *fidelity ? fidelity : "-", detail ? detail : "-");
        free (detail);
    }
}

void
kf_ctl_print_runs (FILE *out, json_t *runs)
{
    if (!json_is_array (runs) || json_array_size (runs) == 0) {
        fprintf (out, "no runs\n");
        return;
    }
    /* BEST_US and REF_US: the best candidate's median and the reference's. */
    /* SUITE, last: the suite a run belongs to, "-" for a run of its own. */
    fprintf (out, "%6s  %-10s %-24s %-14s %-18s %13s %8s %10s %10s  %-24s %s\n", "ID",
             "STATUS", "TASK", "TARGET", "PHASE", "DONE/TOTAL", "BEST", "BEST_US", "REF_US",
             "CREATED", "SUITE");
    size_t i;
    json_t *r;
    json_array_foreach (runs, i, r) {
        char id[32], gen[48], done[64], best[32], bns[32], rns[32], suite[32];
        kf_ctl_progress_t progress;
        kf_ctl_progress_init (&progress, 0);
        kf_ctl_progress_from_run (&progress, r);
        kf_ctl_phase_text (&progress, gen, sizeof gen);
        snprintf (done, sizeof done, "%lld/%lld", progress.done, progress.total);
        fprintf (out, "%6s  %-10s %-24s %-14s %-18s %13s %8s %10s %10s  %-24s %s\n",
                 s_int_text (r, "id", id, sizeof id), kf_ctl_str (r, "status"),
                 kf_ctl_str (r, "task_name"), kf_ctl_str (r, "target"), gen, done,
                 kf_ctl_speedup_text (json_object_get (r, "best_speedup"),
                                      best, sizeof best),
                 s_us_text (r, "best_ns", bns, sizeof bns),
                 s_us_text (r, "reference_ns", rns, sizeof rns),
                 kf_ctl_str (r, "created_at"), s_int_text (r, "suite_id", suite, sizeof suite));
    }
}

/* Jobs in progress: the snapshot gives an array of ids or a count. */
static long long
s_jobs (json_t *worker)
{
    json_t *jobs = json_object_get (worker, "jobs");
    if (json_is_array (jobs))
        return (long long) json_array_size (jobs);
    return kf_ctl_int (worker, "jobs", 0);
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
        long long ago = kf_ctl_int (w, "last_heartbeat_ms_ago", -1);
        if (ago >= 0)
            snprintf (heard, sizeof heard, "%.1fs", ago / 1000.0);
        fprintf (out, "%-28s %-9s %-16s %-8s %7s %5lld %6s %7zu %-9s  %s\n", kf_ctl_str (w, "id"),
                 kf_ctl_str (w, "role"), kf_ctl_str (w, "host"), state,
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
    long long up = kf_ctl_int (snap, "uptime_s", -1);
    json_t *version = json_object_get (snap, "version");
    if (json_is_integer (version))
        fprintf (out, "coordinator (protocol %lld)",
                 (long long) json_integer_value (version));
    else
        fprintf (out, "coordinator %s", kf_ctl_str (snap, "version"));
    if (up >= 0)
        fprintf (out, ", up %lldh%02lldm%02llds", up / 3600, up / 60 % 60,
                 up % 60);
    if (json_is_string (json_object_get (snap, "database")))
        fprintf (out, ", database %s", kf_ctl_str (snap, "database"));
    fprintf (out, "\n");

    static const char *roles[] = { "generate", "compile", "execute" };
    json_t *workers = json_object_get (snap, "workers");
    fprintf (out, "workers:");
    for (size_t r = 0; r < 3; r++) {
        long long n = 0, jobs = 0;
        size_t i;
        json_t *w;
        json_array_foreach (workers, i, w)
            if (!strcmp (kf_ctl_str (w, "role"), roles[r])) {
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
                     kf_ctl_int (v, "queued", 0), kf_ctl_int (v, "leased", 0));
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
        if (!strcmp (kf_ctl_str (r, "status"), "running"))
            running++;
    fprintf (out, "runs: %zu listed, %lld running\n", json_array_size (runs),
             running);
    json_array_foreach (runs, i, r) {
        if (strcmp (kf_ctl_str (r, "status"), "running"))
            continue;
        char best[32], phase[48];
        kf_ctl_progress_t progress;
        kf_ctl_progress_init (&progress, 0);
        kf_ctl_progress_from_run (&progress, r);
        kf_ctl_phase_text (&progress, phase, sizeof phase);
        fprintf (out, "  run %lld: %s, %lld/%lld done, best %s\n",
                 kf_ctl_int (r, "id", 0), phase, progress.done, progress.total,
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
