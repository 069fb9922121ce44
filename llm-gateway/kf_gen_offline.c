/*  kf_gen_offline.c - the built-in offline generator (not an LLM).
 *
 *  Each starter is one template (llm-gateway/templates/): a shared prelude,
 *  a body with #if branches, and a table of parameters whose values pick
 *  real implementation choices (kf_gen_offline_starters.c). A candidate is
 *  the template with its parameters written as #defines under #ifndef
 *  guards, so the compile worker's tuning phase can still override them
 *  with -DNAME=VALUE from the kf-tune line. This file picks the starter
 *  for a task and the point of its space (seeded, or a mutation of a
 *  parent's), and fills the template in. tests/unit/test_offline.c
 *  compiles and checks the C starters; tests/unit/test_gateway_cuda.c
 *  compiles every CUDA branch and tests/unit/test_spirv.c every OpenCL C
 *  branch, to SPIR-V.
 */
#include "kf_str.h"
#include "kf_splitmix.h"
#include "kf_gen_offline.h"
#include "kf_gen_offline_starter.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

//  With no parent, one seed in this many proposes the plain baseline, so a
//  run always has the simplest variant to compare the others against.
#define KF_OFFLINE_BASELINE_EVERY 8

typedef kf_offline_param_t s_param_t;
typedef kf_offline_starter_t s_starter_t;

//  A placeholder of a template, @NAME@, and what it becomes.
typedef struct {
    const char *name;
    const char *value;
} s_var_t;

static int
s_n_params (const s_starter_t *st)
{
    int n = 0;
    while (n < KF_OFFLINE_MAX_PARAMS && st->params[n].name)
        n++;
    return n;
}

static int
s_n_values (const s_param_t *p)
{
    int n = 0;
    while (n < KF_OFFLINE_MAX_VALUES && p->values[n])
        n++;
    return n;
}

//  The language a job names; no name is host C. NULL when there is none.
static const kf_offline_lang_t *
s_lang (const char *language)
{
    for (size_t i = 0; i < kf_offline_n_langs; i++)
        if (!language || strcmp (kf_offline_langs[i].language, language) == 0)
            return &kf_offline_langs[i];
    return NULL;
}

static const s_starter_t *
s_find_starter (const char *key, const kf_offline_lang_t *lang)
{
    for (size_t i = 0; i < lang->n_starters; i++)
        if (strcmp (lang->starters[i].key, key) == 0)
            return &lang->starters[i];
    return NULL;
}

//  The starter for a task: by op, refined by the op's attributes (which
//  activation, which reduction).
static const s_starter_t *
s_starter_for (json_t *task, const kf_offline_lang_t *lang, char **err)
{
    const char *op = json_string_value (json_object_get (task, "op"));
    if (!op) {
        kf_fail (err, "offline generator: the task has no op");
        return NULL;
    }
    json_t *attrs = json_object_get (task, "attributes");
    const char *key = op;
    if (strcmp (op, "activation") == 0) {
        key = json_string_value (json_object_get (attrs, "fn"));
        if (!key) {
            kf_fail (err, "offline generator: an activation task needs attributes.fn "
                         "(the offline generator knows gelu)");
            return NULL;
        }
        if (strcmp (key, "gelu") != 0) {
            kf_fail (err, "offline generator has no starter kernel for activation '%s'", key);
            return NULL;
        }
    }
    else if (strcmp (op, "row_reduction") == 0) {
        const char *reduce = json_string_value (json_object_get (attrs, "reduce"));
        if (!reduce || strcmp (reduce, "sum") == 0)
            key = "row_sum";
        else if (strcmp (reduce, "max") == 0)
            key = "row_max";
        else {
            kf_fail (err, "offline generator has no starter kernel for row_reduction '%s'",
                    reduce);
            return NULL;
        }
    }
    const s_starter_t *st = s_find_starter (key, lang);
    if (!st)
        kf_fail (err, "offline generator has no starter kernel for op '%s'", op);
    return st;
}

//  The starters read f32 tensors in a fixed order; refuse a task they
//  would misread, rather than propose kernels that can only fail.
static int
s_check_task (const s_starter_t *st, json_t *task, char **err)
{
    json_t *inputs = json_object_get (task, "inputs");
    json_t *outputs = json_object_get (task, "outputs");
    if ((int) json_array_size (inputs) < st->n_inputs || json_array_size (outputs) < 1)
        return kf_fail (err, "offline generator: the %s starter needs inputs (%s) and one output",
                       st->key, st->inputs_help);
    const char *lists[] = { "inputs", "outputs" };
    for (int k = 0; k < 2; k++) {
        json_t *list = json_object_get (task, lists[k]);
        for (size_t i = 0; i < json_array_size (list); i++) {
            const char *dt = json_string_value (json_object_get (json_array_get (list, i), "dtype"));
            if (!dt || strcmp (dt, "f32") != 0)
                return kf_fail (err, "offline generator: %s[%zu] is %s; its starters are f32 only",
                               lists[k], i, dt ? dt : "untyped");
        }
    }
    return 0;
}

static uint64_t
s_fnv (const char *s, uint64_t h)
{
    for (; s && *s; s++)
        h = (h ^ (unsigned char) *s) * 0x100000001b3ULL;
    return h;
}

//  Finds the kf-params line of SOURCE; returns its text after the colon
//  and sets *LEN to its length up to the closing comment, or NULL.
static const char *
s_params_span (const char *source, size_t *len)
{
    const char *p = source ? strstr (source, "kf-params:") : NULL;
    if (!p)
        return NULL;
    p += strlen ("kf-params:");
    while (*p == ' ' || *p == '\t')
        p++;
    const char *end = p;
    while (*end && *end != '\n' && strncmp (end, "*/", 2) != 0)
        end++;
    while (end > p && (end[-1] == ' ' || end[-1] == '\t'))
        end--;
    *len = (size_t) (end - p);
    return p;
}

char *
kf_offline_params (const char *source)
{
    size_t len;
    const char *p = s_params_span (source, &len);
    return p ? strndup (p, len) : NULL;
}

//  Reads the parent's parameter values into CHOICE. Returns the number of
//  parameters recognised; unknown names and values are skipped, leaving
//  the baseline there.
static int
s_parse_params (const s_starter_t *st, const char *source, int choice[])
{
    char *text = kf_offline_params (source);
    if (!text)
        return 0;
    int found = 0;
    char *save = NULL;
    for (char *tok = strtok_r (text, " \t", &save); tok; tok = strtok_r (NULL, " \t", &save)) {
        char *eq = strchr (tok, '=');
        if (!eq)
            continue;
        *eq = 0;
        for (int i = 0; i < s_n_params (st); i++) {
            if (strcmp (st->params[i].name, tok) != 0)
                continue;
            for (int v = 0; v < s_n_values (&st->params[i]); v++)
                if (strcmp (st->params[i].values[v], eq + 1) == 0) {
                    choice[i] = v;
                    found++;
                }
        }
    }
    free (text);
    return found;
}

//  Changes one or two parameters of CHOICE, each to a different value.
static void
s_mutate (const s_starter_t *st, int choice[], uint64_t *rng)
{
    int movable[KF_OFFLINE_MAX_PARAMS], n = 0;
    for (int i = 0; i < s_n_params (st); i++)
        if (s_n_values (&st->params[i]) > 1)
            movable[n++] = i;
    if (n == 0)
        return;
    int k = 1 + (int) (kf_splitmix_next (rng) % 2);
    if (k > n)
        k = n;
    for (int j = 0; j < k; j++) {
        //  Partial Fisher-Yates: the j-th mutated parameter is distinct.
        int pick = j + (int) (kf_splitmix_next (rng) % (uint64_t) (n - j));
        int tmp = movable[j];
        movable[j] = movable[pick];
        movable[pick] = tmp;
        int i = movable[j];
        int nv = s_n_values (&st->params[i]);
        choice[i] = (choice[i] + 1 + (int) (kf_splitmix_next (rng) % (uint64_t) (nv - 1))) % nv;
    }
}

//  Closes the memory stream F opened on *BUF; returns what it holds (the
//  caller's), or NULL.
static char *
s_close (FILE *f, char **buf)
{
    if (fclose (f) != 0) {
        free (*buf);
        return NULL;
    }
    return *buf;
}

//  TMPL with each @NAME@ of VARS replaced by its value (the caller's), or
//  NULL. A placeholder alone on its line stands for whole lines: the value
//  brings its own line ends, and an empty value leaves no line. An @ that
//  opens no placeholder of VARS is text. Values are written as they are,
//  never searched for placeholders themselves.
static char *
s_fill (const char *tmpl, const s_var_t *vars, size_t n_vars)
{
    char *buf = NULL;
    size_t size = 0;
    FILE *f = open_memstream (&buf, &size);
    if (!f)
        return NULL;
    const char *p = tmpl;
    for (const char *at = strchr (p, '@'); at; at = strchr (p, '@')) {
        fwrite (p, 1, (size_t) (at - p), f);
        const s_var_t *var = NULL;
        size_t len = 0;
        for (size_t i = 0; i < n_vars && !var; i++) {
            len = strlen (vars[i].name);
            if (strncmp (at + 1, vars[i].name, len) == 0 && at[1 + len] == '@')
                var = &vars[i];
        }
        if (!var) {
            fputc ('@', f);
            p = at + 1;
            continue;
        }
        fputs (var->value, f);
        p = at + len + 2;
        if ((at == tmpl || at[-1] == '\n') && *p == '\n')
            p++;
    }
    fputs (p, f);
    return s_close (f, &buf);
}

//  ST's parameters at the point CHOICE as the kf-params line lists them
//  (" LANES=4 ALGO=online"), or with no CHOICE all their values as the
//  kf-tune line does (" LANES=1,2,4 ALGO=twopass,online"). The caller's,
//  or NULL.
static char *
s_param_list (const s_starter_t *st, const int *choice)
{
    char *buf = NULL;
    size_t size = 0;
    FILE *f = open_memstream (&buf, &size);
    if (!f)
        return NULL;
    for (int i = 0; i < s_n_params (st); i++) {
        fprintf (f, " %s=", st->params[i].name);
        if (choice)
            fputs (st->params[i].values[choice[i]], f);
        else
            for (int v = 0; v < s_n_values (&st->params[i]); v++)
                fprintf (f, "%s%s", v ? "," : "", st->params[i].values[v]);
    }
    return s_close (f, &buf);
}

//  The title lines (templates/banner.txt) of ST at the point CHOICE.
static char *
s_banner (const s_starter_t *st, const int choice[], const kf_offline_lang_t *lang)
{
    char *params = s_param_list (st, choice);
    char *tune = s_param_list (st, NULL);
    char *banner = NULL;
    if (params && tune) {
        const s_var_t vars[] = { { "KEY", st->key }, { "TITLE", st->title },
                                 { "BACKEND", lang->backend }, { "PARAMS", params },
                                 { "TUNE", tune } };
        banner = s_fill (kf_tmpl_banner_txt, vars, sizeof vars / sizeof vars[0]);
    }
    free (params);
    free (tune);
    return banner;
}

//  The parameters' #defines under #ifndef guards, then the task's fixed
//  ones.
static char *
s_defines (const s_starter_t *st, const int choice[])
{
    char *buf = NULL;
    size_t size = 0;
    FILE *f = open_memstream (&buf, &size);
    if (!f)
        return NULL;
    for (int i = 0; i < s_n_params (st); i++)
        fprintf (f, "#ifndef %s\n#define %s %s\n#endif\n", st->params[i].name,
                 st->params[i].name, st->params[i].values[choice[i]]);
    if (st->fixed)
        fputs (st->fixed, f);
    return s_close (f, &buf);
}

//  The source of ST at the point CHOICE. Besides the banner, the defines
//  and the language's texts, a template may name the task's tensors (a
//  kf-launch line does): @X@ @W@ @B@ the first three inputs, @Y@ the
//  first output, @EPS@ the scalar eps, or the C starters' default 1e-5
//  when the task has none; "?" where the task has no such tensor.
static char *
s_emit (const s_starter_t *st, const int choice[], const kf_offline_lang_t *lang, json_t *task)
{
    json_t *inputs = json_object_get (task, "inputs");
    const char *x = json_string_value (json_object_get (json_array_get (inputs, 0), "name"));
    const char *w = json_string_value (json_object_get (json_array_get (inputs, 1), "name"));
    const char *b = json_string_value (json_object_get (json_array_get (inputs, 2), "name"));
    const char *y = json_string_value (json_object_get (
        json_array_get (json_object_get (task, "outputs"), 0), "name"));
    bool eps = json_is_number (json_object_get (json_object_get (task, "scalars"), "eps"));
    char *banner = s_banner (st, choice, lang);
    char *defines = s_defines (st, choice);
    char *source = NULL;
    if (banner && defines) {
        const s_var_t vars[] = {
            { "BANNER", banner }, { "DEFINES", defines }, { "PRELUDE", lang->prelude },
            { "EXP_POLY", kf_tmpl_exp_poly_c },
            { "ROWS", lang->rows ? lang->rows : "" }, { "X", x ? x : "?" },
            { "W", w ? w : "?" }, { "B", b ? b : "?" }, { "Y", y ? y : "?" },
            { "EPS", eps ? "eps" : "1e-5:float" } };
        source = s_fill (st->tmpl, vars, sizeof vars / sizeof vars[0]);
    }
    free (banner);
    free (defines);
    return source;
}

int
kf_offline_space_size (json_t *task)
{
    const s_starter_t *st = s_starter_for (task, s_lang ("c"), NULL);
    if (!st)
        return -1;
    int size = 1;
    for (int i = 0; i < s_n_params (st); i++)
        size *= s_n_values (&st->params[i]);
    return size;
}

char *
kf_offline_generate (json_t *payload, char **err)
{
    if (err)
        *err = NULL;
    if (!json_is_object (payload)) {
        kf_fail (err, "offline generator: the payload is not an object");
        return NULL;
    }
    json_t *task = json_object_get (payload, "task");
    if (!json_is_object (task)) {
        kf_fail (err, "offline generator: the payload has no task object");
        return NULL;
    }
    const char *language = json_string_value (json_object_get (payload, "language"));
    const kf_offline_lang_t *lang = s_lang (language);
    if (!lang) {
        kf_fail (err, "offline generator writes C (host), CUDA and OpenCL C only, not '%s'",
                 language);
        return NULL;
    }
    json_t *seed_json = json_object_get (payload, "seed");
    if (seed_json && !json_is_integer (seed_json)) {
        kf_fail (err, "offline generator: seed must be an integer");
        return NULL;
    }
    uint64_t seed = (uint64_t) json_integer_value (seed_json);
    const s_starter_t *st = s_starter_for (task, lang, err);
    if (!st || s_check_task (st, task, err))
        return NULL;

    int choice[KF_OFFLINE_MAX_PARAMS] = { 0 };
    const char *parent = json_string_value (
        json_object_get (json_object_get (payload, "parent"), "source"));
    char *parent_params = kf_offline_params (parent);
    uint64_t rng = seed ^ s_fnv (st->key, 0xcbf29ce484222325ULL);
    rng ^= s_fnv (parent_params, 0x84222325cbf29ce4ULL);
    free (parent_params);

    //  A parent written by someone else (an LLM, the task's initial
    //  kernel) has no kf-params we know: start afresh from the seed then.
    //  Asked for the baseline (a run's first candidate): every parameter
    //  at its plainest, the point the search has to improve on.
    bool baseline = json_is_true (json_object_get (payload, "baseline"));
    if (baseline)
        ;
    else if (parent && s_parse_params (st, parent, choice) > 0)
        s_mutate (st, choice, &rng);
    else if (seed % KF_OFFLINE_BASELINE_EVERY != 0) {
        for (int i = 0; i < s_n_params (st); i++)
            choice[i] = (int) (kf_splitmix_next (&rng)
                               % (uint64_t) s_n_values (&st->params[i]));
    }
    char *source = s_emit (st, choice, lang, task);
    if (!source)
        kf_fail (err, "offline generator: out of memory");
    return source;
}
