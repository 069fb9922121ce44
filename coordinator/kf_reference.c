/*  kf_reference.c - the reference stage of a run (kf_reference.h).
 *
 *  A search is only as good as the reference it is judged against, so
 *  nothing is generated until the reference has been run once:
 *
 *  - A PyTorch problem has no kernel-shaped task until it has run: its
 *    shapes, dtypes, parameters and outputs are whatever Model and
 *    get_inputs produce. An exec worker's `reference` job runs it with the
 *    run's seed; the task the candidates see is derived here from that
 *    job's manifest, stored on the run (runs.spec, which kf_search prefers
 *    to tasks.spec) and used by every prompt, generate and evaluate payload
 *    from then on. The exported tensors never come here: they stay in
 *    the exec host's reference cache, and the job answers with their
 *    manifest, cache key, size and XXH3-128 hash, which runs.ref_data
 *    keeps and every evaluate payload carries as "reference_data" (no
 *    frame); an exec worker that lacks the data makes it again from the
 *    task's source and the seed, and checks the hash.
 *  - A native task's compiled reference is run once by the probe (an
 *    evaluate job of no candidate, "probe": true), which says whether its
 *    outputs are degenerate.
 *
 *  A degenerate reference (outputs constant, the same for every input set,
 *  or all within the absolute bound of zero) passes a kernel that ignores
 *  its inputs, and a search would then "find" that kernel. So it fails the
 *  run, with the reasons, before any model is asked for anything, unless
 *  the run says allow_degenerate (then the reasons are a run warning).
 */
#include "kf_reference.h"
#include "kf_json.h"
#include "kf_log.h"
#include "kf_msg_reference.h"
#include "kf_str.h"
#include "kf_task.h"
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define S_I64(buf, v) (snprintf ((buf), sizeof (buf), "%lld", (long long) (v)), (buf))

/* The reference job takes a seed in 0..2^53 (an exact JSON number). */
#define S_SEED_MASK 0x1fffffffffffffLL
/* A reference job's limit is the exec worker's reference_time_limit_s
 * (600 s by default), torch.compile included; its lease must outlast it. */
#define S_REFERENCE_LEASE_MS "900000"
/* The kernel harnesses take at most this many inputs and outputs. */
#define S_MAX_TENSORS 32

bool
kf_reference_is_pytorch (json_t *spec)
{
    json_t *ref = json_object_get (spec, "reference");
    return !strcmp (kf_jstr (ref, "language"), "pytorch");
}

bool
kf_reference_owns (json_t *job)
{
    const char *kind = kf_jstr (job, "kind");
    return !strcmp (kind, "reference")
           || (!strcmp (kind, "evaluate") && !kf_jint (job, "candidate_id"));
}

/* The degenerate check's bound: tolerance.atol, or its f32 entry when it
 * is given per dtype (PyTorch problems are f32 far more often than not). */
static double
s_atol (json_t *spec)
{
    json_t *atol = json_object_get (json_object_get (spec, "tolerance"), "atol");
    if (json_is_object (atol))
        atol = json_object_get (atol, "f32");
    return json_is_number (atol) ? json_number_value (atol) : 1e-5;
}

static double
s_rtol (json_t *spec)
{
    json_t *rtol = json_object_get (json_object_get (spec, "tolerance"), "rtol");
    return json_is_number (rtol) && json_number_value (rtol) > 0 ? json_number_value (rtol) : 1e-2;
}

int
kf_reference_start (kf_search_t *self, json_t *run)
{
    json_t *spec = json_object_get (run, "spec");
    json_t *source = json_object_get (json_object_get (spec, "reference"), "source");
    if (!json_is_string (source))
        return -1;   /* kf_task_validate let it through: a programming error */
    /* sets: each set is one of the evaluator's correctness sets; atol: the
     * bound below which the degenerate check calls an output "all zero". */
    json_t *payload = json_pack ("{s:O, s:I, s:i, s:f, s:f, s:b}", "source", source, "seed",
                                 (json_int_t) (kf_jint (run, "seed") & S_SEED_MASK),
                                 "sets", KF_REFERENCE_SETS, "atol", s_atol (spec),
                                 "rtol", s_rtol (spec), "compile", 1);
    /* PyTorch is timed with the protocol the run times its candidates
     * with, so the two medians are comparable. */
    json_t *timing = json_object_get (json_object_get (run, "config"), "timing");
    if (!timing)
        timing = self->timing;
    if (timing)
        json_object_set (payload, "timing", timing);
    char backend[32], arch[64], id[24];
    kf_search_split_target (kf_jstr (run, "target"), backend, sizeof backend, arch, sizeof arch);
    int64_t run_id = kf_jint (run, "id");
    if (kf_search_insert_job (self, run_id, 0, "execute", "reference", backend, arch,
                              payload, NULL))
        return -1;
    const char *params[2] = { S_I64 (id, run_id), S_REFERENCE_LEASE_MS };
    return kf_db_exec (self->db,
                       "UPDATE jobs SET lease_ms = greatest(lease_ms, $2::int)"
                       " WHERE run_id = $1 AND kind = 'reference' AND state = 'queued'",
                       2, params) < 0 ? -1 : 0;
}

int
kf_reference_probe (kf_search_t *self, json_t *run, const char *artifact_hash)
{
    char blobs[80], backend[32], arch[64];
    snprintf (blobs, sizeof blobs, "{%s}", artifact_hash);
    kf_search_split_target (kf_jstr (run, "target"), backend, sizeof backend, arch, sizeof arch);
    json_t *payload = json_pack ("{s:O, s:I, s:b}", "task", json_object_get (run, "spec"),
                                 "seed", (json_int_t) (kf_jint (run, "seed") & S_SEED_MASK),
                                 "probe", 1);
    if (!payload)
        return -1;
    return kf_search_insert_job (self, kf_jint (run, "id"), 0, "execute", "evaluate", backend,
                                 arch, payload, blobs);
}

/* Applies the run's policy to REASONS (the reference's degenerate
 * findings): 1 when the run was failed for them, 0 to go on (with a
 * warning when there were any), -1 on a database error. */
static int
s_judge (kf_search_t *self, json_t *run, json_t *reasons)
{
    if (json_array_size (reasons) == 0)
        return 0;
    char *text = NULL;
    size_t size = 0;
    FILE *f = open_memstream (&text, &size);
    if (!f)
        return -1;
    size_t i;
    json_t *r;
    json_array_foreach (reasons, i, r)
        fprintf (f, "%s%s", i ? "; " : "", json_is_string (r) ? json_string_value (r) : "?");
    fclose (f);
    int64_t run_id = kf_jint (run, "id");
    bool allowed = json_is_true (json_object_get (json_object_get (run, "config"),
                                                  "allow_degenerate"));
    int rc;
    if (!allowed) {
        char *why = kf_strdupf ("reference is degenerate: %.1500s", text);
        rc = why && kf_search_finish_run (self, run_id, "failed", why) == 0 ? 1 : -1;
        free (why);
    }
    else {
        char *warning = kf_strdupf ("reference is degenerate (allowed by allow_degenerate):"
                                    " %.1500s", text);
        json_t *list = json_pack ("[s]", warning ? warning : "");
        char *list_text = json_dumps (list, JSON_COMPACT);
        char id[24];
        const char *params[2] = { S_I64 (id, run_id), list_text };
        rc = list_text && kf_db_exec (self->db,
                                      "UPDATE runs SET warnings = warnings || $2::jsonb"
                                      " WHERE id = $1", 2, params) >= 0 ? 0 : -1;
        if (rc == 0) {
            kf_warn ("run %lld: %s", (long long) run_id, warning ? warning : text);
            kf_search_event (self, run_id, "warning", json_pack ("{s:s}", "warning",
                                                         warning ? warning : text));
        }
        free (list_text);
        json_decref (list);
        free (warning);
    }
    free (text);
    return rc;
}

/* ---- deriving the candidate-facing task ------------------------------- */

/* Orders manifest tensors by index, then by their place in the manifest
 * (their address: the decoder's array keeps the manifest's order). */
static int
s_by_index (const void *a, const void *b)
{
    const kf_reference_tensor_t *x = *(const kf_reference_tensor_t *const *) a;
    const kf_reference_tensor_t *y = *(const kf_reference_tensor_t *const *) b;
    if (x->index != y->index)
        return x->index < y->index ? -1 : 1;
    return x < y ? -1 : x > y;
}

/* Manifest tensors of ROLE (of set 0 for per-set roles, of no set for
 * the others) into OUT (REF->n_tensors slots), in index order: the
 * runner writes them in that order; sorting costs little and makes the
 * order this module documents the one it relies on. Returns how many. */
static size_t
s_entries (const kf_reference_result_t *ref, const char *role, bool per_set,
           const kf_reference_tensor_t **out)
{
    size_t n = 0;
    for (size_t i = 0; i < ref->n_tensors; i++) {
        const kf_reference_tensor_t *e = &ref->tensors[i];
        if (!strcmp (e->role, role) && e->set == (per_set ? 0 : -1))
            out[n++] = e;
    }
    qsort (out, n, sizeof *out, s_by_index);
    return n;
}

/* True when NAME is already taken in SPEC's inputs or outputs so far. */
static bool
s_taken (json_t *taken, const char *name)
{
    return json_object_get (taken, name) != NULL;
}

/* A tensor name from a module's dotted name: '.' and anything else that is
 * not a letter, digit or '_' become '_'; a leading digit (nn.Sequential's
 * "0.weight") gets PREFIX; a name already used gets _2, _3, ... */
static char *
s_tensor_name (const char *dotted, const char *prefix, json_t *taken)
{
    char base[200];
    size_t n = 0;
    if (*dotted >= '0' && *dotted <= '9')
        n = (size_t) snprintf (base, sizeof base, "%s", prefix);
    for (const char *p = dotted; *p && n + 1 < sizeof base; p++) {
        bool ok = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z')
                  || (*p >= '0' && *p <= '9') || *p == '_';
        base[n++] = ok ? *p : '_';
    }
    base[n] = 0;
    if (n == 0)
        snprintf (base, sizeof base, "%s", prefix);
    char *name = strdup (base);
    for (int k = 2; name && s_taken (taken, name); k++) {
        free (name);
        name = kf_strdupf ("%s_%d", base, k);
    }
    return name;
}

/* Appends {name, shape, dtype} for manifest tensor E to LIST. */
static void
s_add_tensor (json_t *list, json_t *taken, const char *name, const kf_reference_tensor_t *e)
{
    json_t *shape = json_array ();
    for (int k = 0; k < e->rank; k++)
        json_array_append_new (shape, json_integer ((json_int_t) e->shape[k]));
    json_array_append_new (list, json_pack ("{s:s, s:o, s:s}", "name", name, "shape", shape,
                                            "dtype", e->dtype));
    json_object_set_new (taken, name, json_true ());
}

/* Numeric values among REF's scalars of ROLE (set 0 for "input"), as
 * NAME PREFIX<index>: numbers as they are, booleans as 0 and 1. */
static void
s_add_scalars (json_t *scalars, const kf_reference_result_t *ref, const char *role,
               const char *prefix, FILE *note, int *noted)
{
    for (size_t i = 0; i < ref->n_scalars; i++) {
        const kf_reference_scalar_t *s = &ref->scalars[i];
        if (strcmp (s->role, role) || (!strcmp (role, "input") && s->set != 0))
            continue;
        double x;
        if (json_is_number (s->value))
            x = json_number_value (s->value);
        else if (json_is_boolean (s->value))
            x = json_is_true (s->value) ? 1 : 0;
        else
            continue;   /* strings, lists, None: in the source, not in ctx */
        if (!isfinite (x))
            continue;
        char name[48];
        snprintf (name, sizeof name, "%s%lld", prefix, (long long) s->index);
        json_object_set_new (scalars, name, json_real (x));
        if (note)
            fprintf (note, "%s%s = %s[%lld]", (*noted)++ ? ", " : "", name,
                     !strcmp (role, "init") ? "get_init_inputs()" : "forward's arguments",
                     (long long) s->index);
    }
}

/* An output smaller than the absolute tolerance everywhere (the reference
 * job's atol_scaled: rtol times its largest magnitude, when some output
 * is) is judged with that smaller bound, or zeros, or twice the right
 * values, would pass. Lowers SPEC's tolerance.atol (each per-dtype entry)
 * to it. */
static void
s_scale_atol (json_t *spec, const kf_reference_result_t *ref)
{
    if (!ref->has_atol_scaled)
        return;
    double bound = ref->atol_scaled;
    json_t *tol = json_object_get (spec, "tolerance");
    if (!json_is_object (tol)) {
        tol = json_object ();
        json_object_set_new (spec, "tolerance", tol);
    }
    json_t *atol = json_object_get (tol, "atol");
    if (json_is_object (atol)) {
        const char *key;
        json_t *v;
        json_object_foreach (atol, key, v)
            if (json_is_number (v) && json_number_value (v) > bound)
                json_object_set_new (atol, key, json_real (bound));
    }
    else if (!json_is_number (atol) || json_number_value (atol) > bound)
        json_object_set_new (tol, "atol", json_real (bound));
}

/* The description's note on what in[] and out[] hold, and the spec's
 * inputs, outputs and scalars, from the sorted manifest tensors. */
static json_t *
s_derive (json_t *task, const kf_reference_result_t *ref,
          const kf_reference_tensor_t **lists[4], const size_t counts[4])
{
    enum { INS, PARAMS, BUFFERS, OUTS };
    json_t *inputs = json_array (), *outputs = json_array (), *taken = json_object ();
    char *note = NULL;
    size_t note_size = 0;
    FILE *f = open_memstream (&note, &note_size);
    /* Argument names first, so a parameter called "in0" yields. */
    for (size_t i = 0; i < counts[INS]; i++) {
        char name[32];
        snprintf (name, sizeof name, "in%lld", (long long) lists[INS][i]->index);
        s_add_tensor (inputs, taken, name, lists[INS][i]);
    }
    for (size_t i = 0; i < counts[OUTS]; i++) {
        char name[32];
        snprintf (name, sizeof name, "out%lld", (long long) lists[OUTS][i]->index);
        s_add_tensor (outputs, taken, name, lists[OUTS][i]);
    }
    fprintf (f, "\n\nThis task is a PyTorch module (the reference below). kf_forward"
                " receives in[] = forward's tensor arguments (");
    size_t i;
    json_t *e;
    json_array_foreach (inputs, i, e)
        fprintf (f, "%s%s", i ? ", " : "", kf_jstr (e, "name"));
    const char *what[2] = { "parameters", "buffers" };
    for (int k = 0; k < 2; k++) {
        if (counts[PARAMS + k] == 0)
            continue;
        fprintf (f, "), then the model's %s (", what[k]);
        for (i = 0; i < counts[PARAMS + k]; i++) {
            const kf_reference_tensor_t *t = lists[PARAMS + k][i];
            char *name = s_tensor_name (t->name, k ? "b" : "p", taken);
            if (!name)
                continue;
            s_add_tensor (inputs, taken, name, t);
            fprintf (f, "%s%s = %s", i ? ", " : "", name, t->name);
            free (name);
        }
    }
    fprintf (f, "); out[] = forward's result (");
    json_array_foreach (outputs, i, e)
        fprintf (f, "%s%s", i ? ", " : "", kf_jstr (e, "name"));
    fprintf (f, ").");
    json_t *scalars = json_deep_copy (json_object_get (task, "scalars"));
    if (!json_is_object (scalars)) {
        json_decref (scalars);
        scalars = json_object ();
    }
    int noted = 0;
    fprintf (f, " Scalars in ctx: ");
    long at = ftell (f);
    s_add_scalars (scalars, ref, "init", "init", f, &noted);
    s_add_scalars (scalars, ref, "input", "in", f, &noted);
    if (ftell (f) == at)
        fprintf (f, "none");
    fprintf (f, ". Shapes and values are fixed: every input set has these shapes.");
    if (ref->has_atol_scaled)
        fprintf (f, " The outputs are smaller in magnitude than the default absolute"
                    " tolerance, so the absolute tolerance is %.3g (the relative tolerance"
                    " times the largest output value).", ref->atol_scaled);
    fclose (f);
    json_decref (taken);
    json_t *spec = json_deep_copy (task);
    const char *description = kf_jstr (task, "description");
    char *text = kf_strdupf ("%s%s", description, note ? (*description ? note : note + 2) : "");
    free (note);
    json_object_set_new (spec, "description", json_string (text ? text : description));
    free (text);
    json_object_set_new (spec, "inputs", inputs);
    json_object_set_new (spec, "outputs", outputs);
    json_object_set_new (spec, "scalars", scalars);
    s_scale_atol (spec, ref);
    return spec;
}

json_t *
kf_reference_task (json_t *task, const kf_reference_result_t *ref, char **why)
{
    if (why)
        *why = NULL;
    enum { INS, PARAMS, BUFFERS, OUTS };
    static const char *roles[4] = { "input", "param", "buffer", "output" };
    const kf_reference_tensor_t **lists[4];
    size_t counts[4];
    for (int k = 0; k < 4; k++) {
        lists[k] = calloc (ref->n_tensors + 1, sizeof *lists[k]);
        counts[k] = lists[k] ? s_entries (ref, roles[k], k == INS || k == OUTS, lists[k]) : 0;
    }
    json_t *spec = NULL;
    size_t n_in = counts[INS] + counts[PARAMS] + counts[BUFFERS];
    if (!lists[INS] || !lists[PARAMS] || !lists[BUFFERS] || !lists[OUTS])
        kf_fail (why, "out of memory");
    else if (counts[OUTS] == 0)
        kf_fail (why, "forward returns no tensor (a kernel needs at least one output)");
    else if (n_in == 0)
        kf_fail (why, "no input tensor: forward takes no tensor and the model has no"
                 " parameter or buffer");
    else if (n_in > S_MAX_TENSORS || counts[OUTS] > S_MAX_TENSORS)
        kf_fail (why, "%zu input and %zu output tensors (parameters and buffers count"
                 " as inputs); a kernel takes at most %d of each", n_in, counts[OUTS],
                 S_MAX_TENSORS);
    else {
        spec = s_derive (task, ref, lists, counts);
        char *err = NULL;
        if (kf_task_validate (spec, &err)) {
            kf_fail (why, "the derived task is invalid: %s", err ? err : "?");
            free (err);
            json_decref (spec);
            spec = NULL;
        }
    }
    for (int k = 0; k < 4; k++)
        free (lists[k]);
    return spec;
}

json_t *
kf_reference_derive (json_t *task, json_t *result, char **why)
{
    kf_reference_result_t ref;
    char text[300];
    if (kf_reference_result_decode (result, &ref, text, sizeof text)) {
        kf_fail (why, "malformed reference result: %s", text);
        return NULL;
    }
    json_t *spec = kf_reference_task (task, &ref, why);
    kf_reference_result_free (&ref);
    return spec;
}

/* ---- job results ---------------------------------------------------- */

/* Whether the result describes its data (its key and hashes: the
 * decoder checked each one given, and that every tensor lies inside the
 * data, when all are). */
static int
s_check_data (const kf_reference_result_t *ref, char **why)
{
    if (!ref->has_data)
        return kf_fail (why, "the reference result does not describe its data (data_key,"
                        " data_bytes, data_hash, inputs_hash, seed): an exec worker that"
                        " predates the reference cache?");
    return 0;
}

/* The median of a timing, or null when it has none (an error, a torch
 * without torch.compile, a compiled model whose outputs differ from
 * eager's and so cannot stand for the same computation). */
static json_t *
s_median (const kf_reference_timing_t *timing)
{
    if (!timing->has_median || timing->failed || !timing->matches_eager)
        return json_null ();
    return json_real (timing->median_ns);
}

/* What the run keeps of the result for people (runs.ref_data's "info"):
 * these fields as the worker wrote them, untouched (the decoder checked
 * those it names; the others are for display only). */
static json_t *
s_info (const kf_reference_result_t *ref)
{
    static const char *kept[] = { "timing", "torch_version", "python", "device", "device_name",
                                  "seed", "task_hash", "data_bytes", "cached", "cache_key",
                                  "wall_s", "degenerate", "sets_requested" };
    json_t *info = json_object ();
    for (size_t k = 0; k < sizeof kept / sizeof kept[0]; k++) {
        json_t *v = json_object_get (ref->json, kept[k]);
        if (v)
            json_object_set (info, kept[k], v);
    }
    return info;
}

static int
s_reference_done (kf_search_t *self, json_t *run, const kf_reference_result_t *ref)
{
    int64_t run_id = kf_jint (run, "id");
    int judged = s_judge (self, run, ref->degenerate);
    if (judged)
        return judged < 0 ? -1 : 0;
    char *why = NULL;
    json_t *spec = kf_reference_task (json_object_get (run, "spec"), ref, &why);
    if (spec && s_check_data (ref, &why)) {
        json_decref (spec);
        spec = NULL;
    }
    if (!spec) {
        char *reason = kf_strdupf ("the PyTorch reference cannot be a kernel task: %.800s",
                                   why ? why : "?");
        free (why);
        int rc = kf_search_finish_run (self, run_id, "failed", reason ? reason : "bad reference");
        free (reason);
        return rc;
    }
    char id[24];
    json_t *eager = s_median (&ref->eager);
    json_t *compiled = s_median (&ref->compiled);
    /* What evaluate jobs carry (docs/pytorch-references.md), and under
     * "info" what the run keeps for people: times in full, torch, device.
     * The manifest's lists go as the worker wrote them (their entries keep
     * the value statistics the decoder does not name). */
    json_t *ref_data = json_pack ("{s:O, s:o, s:I, s:O, s:O, s:{s:s, s:I, s:s, s:s, s:I},"
                                  " s:o}", "tensors", ref->tensor_list, "scalars",
                                  ref->scalar_list ? json_incref (ref->scalar_list)
                                                   : json_array (),
                                  "sets", (json_int_t) ref->sets, "eager_ns", eager,
                                  "compiled_ns", compiled, "data",
                                  "key", ref->data_key, "bytes", (json_int_t) ref->data_bytes,
                                  "hash", ref->data_hash, "inputs_hash", ref->inputs_hash,
                                  "seed", (json_int_t) ref->seed, "info", s_info (ref));
    char *spec_text = json_dumps (spec, JSON_COMPACT | JSON_SORT_KEYS);
    char *data_text = ref_data ? json_dumps (ref_data, JSON_COMPACT) : NULL;
    char eager_text[40], compiled_text[40];
    snprintf (eager_text, sizeof eager_text, "%.17g", json_number_value (eager));
    snprintf (compiled_text, sizeof compiled_text, "%.17g", json_number_value (compiled));
    /* ref_artifact stays NULL: there is no artifact, and no data blob. */
    const char *params[5] = { S_I64 (id, run_id), spec_text, data_text,
                              json_is_null (eager) ? NULL : eager_text,
                              json_is_null (compiled) ? NULL : compiled_text };
    int rc = spec_text && data_text
             && kf_db_exec (self->db,
                            "UPDATE runs SET spec = $2, ref_artifact = NULL, ref_data = $3,"
                            " ref_eager_ns = $4, ref_compiled_ns = $5 WHERE id = $1",
                            5, params) >= 0 ? 0 : -1;
    if (rc == 0) {
        kf_info ("run %lld: PyTorch reference ready: %zu inputs, %zu outputs, %lld bytes of"
                 " data on the exec host (key %.12s, xxh3 %s), eager %s ns, compiled %s ns%s",
                 (long long) run_id, json_array_size (json_object_get (spec, "inputs")),
                 json_array_size (json_object_get (spec, "outputs")),
                 (long long) ref->data_bytes, ref->data_key, ref->data_hash,
                 params[3] ? eager_text : "-", params[4] ? compiled_text : "-",
                 ref->cached ? " (cached)" : "");
        kf_search_event (self, run_id, "reference",
                 json_pack ("{s:O, s:O, s:b, s:s}", "eager_ns", eager, "compiled_ns", compiled,
                            "cached", ref->cached, "torch_version", ref->torch_version));
        rc = kf_search_begin (self, run_id);
    }
    free (spec_text);
    free (data_text);
    json_decref (ref_data);
    json_decref (eager);
    json_decref (compiled);
    json_decref (spec);
    return rc;
}

static int
s_probed (kf_search_t *self, json_t *run, json_t *result)
{
    json_t *reasons = json_object_get (result, "degenerate");
    if (!json_is_array (reasons))
        return kf_search_finish_run (self, kf_jint (run, "id"), "failed",
                                     "the reference probe returned no 'degenerate' list"
                                     " (an exec worker without the probe?)");
    int judged = s_judge (self, run, reasons);
    if (judged)
        return judged < 0 ? -1 : 0;
    return kf_search_begin (self, kf_jint (run, "id"));
}

int
kf_reference_job_done (kf_search_t *self, json_t *run, json_t *job, json_t *result,
                       const kf_reference_result_t *typed)
{
    if (strcmp (kf_jstr (job, "kind"), "reference"))
        return s_probed (self, run, result);
    if (typed)
        return s_reference_done (self, run, typed);
    /* Not decoded at the edge (a caller other than kf_coord_workers.c,
     * which refuses a malformed one and requeues its job). */
    kf_reference_result_t ref;
    char why[300];
    if (kf_reference_result_decode (result, &ref, why, sizeof why)) {
        char reason[400];
        snprintf (reason, sizeof reason, "malformed reference result: %s", why);
        return kf_search_finish_run (self, kf_jint (run, "id"), "failed", reason);
    }
    int rc = s_reference_done (self, run, &ref);
    kf_reference_result_free (&ref);
    return rc;
}

int
kf_reference_eval_payload (kf_search_t *self, json_t *run, json_t *payload)
{
    if (!kf_reference_is_pytorch (json_object_get (run, "spec")))
        return 0;
    char id[24];
    const char *params[1] = { S_I64 (id, kf_jint (run, "id")) };
    bool failed;
    json_t *row = kf_db_row (self->db, "SELECT ref_data - 'info' AS d FROM runs WHERE id = $1",
                             1, params, &failed);
    json_t *data = json_object_get (row, "d");
    if (failed || !json_is_object (data)) {
        json_decref (row);
        return -1;   /* a PyTorch run evaluates only after its reference is stored */
    }
    json_object_set (payload, "reference_data", data);
    json_decref (row);
    return 0;
}
