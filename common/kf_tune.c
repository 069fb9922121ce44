/*  kf_tune.c - parse a source's kf-tune lines and choose the points of the
 *  space that the compile worker builds and the exec worker times.
 *
 *  Everything here reads text a model wrote, so nothing is trusted: a line
 *  with any token that is not NAME=v1,v2,... (names identifiers, values
 *  integers or identifiers) is skipped whole, with a warning, rather than
 *  half-used; a name declared twice keeps its first declaration.
 *
 *  A parameter may carry a condition, `NAME=v1,v2 when OTHER=a,b`: it is
 *  active only while OTHER is active and takes one of a, b. A point's
 *  inactive parameters are set to their defaults (s_canon) before it is
 *  compared, so points that differ only in a parameter that changes no
 *  code are one point, built once, with -DNAME=default: the same code and
 *  flags as whenever the condition fails, and every config's params still
 *  name every parameter. The space counts these distinct points.
 *
 *  Why the selection is not a plain even stride over the linear index:
 *  mixed-radix indices alias with the radices (a stride of 4 over
 *  RECIP=0,1 x EXP=a,b never moves either), and the candidate's own
 *  defaults are a choice the search made. So the all-defaults point comes
 *  first, then every one-parameter move away from it (round robin over the
 *  parameters, the cheapest test of whether that choice is locally best),
 *  then a Weyl sequence (one irrational step per parameter) that spreads
 *  the remaining budget over the whole space. No randomness: the same
 *  source and cap give the same points on every host.
 */
#include "kf_tune.h"
#include "kf_take.h"
#include "kf_source.h"
#include "kf_log.h"

#include <ctype.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define S_SPACE_MAX 1000000000L
#define S_CONFIGS_MAX 256

typedef struct {
    char name[KF_TUNE_TOKEN_MAX];
    int n_values;
    char values[KF_TUNE_MAX_VALUES][KF_TUNE_TOKEN_MAX];
    int dflt;
    int parent;              //  the parameter the condition names, or -1
    uint64_t when;           //  bit v: active when the parent takes value v
} s_param_t;

struct kf_tune_t {
    int n_params;
    s_param_t params[KF_TUNE_MAX_PARAMS];
    int order[KF_TUNE_MAX_PARAMS];   //  every parent before its children
    long space;
    int n_configs;
    int *points;             //  n_configs rows of n_params value indices
    long skipped;
};

static bool
s_is_name (const char *s, size_t n)
{
    if (n == 0 || n >= KF_TUNE_TOKEN_MAX || !(isalpha ((unsigned char) s[0]) || s[0] == '_'))
        return false;
    for (size_t i = 1; i < n; i++)
        if (!(isalnum ((unsigned char) s[i]) || s[i] == '_'))
            return false;
    return true;
}

static bool
s_is_integer (const char *s, size_t n)
{
    size_t i = (n > 0 && s[0] == '-') ? 1 : 0;
    if (i == n || n >= KF_TUNE_TOKEN_MAX)
        return false;
    for (; i < n; i++)
        if (!isdigit ((unsigned char) s[i]))
            return false;
    return true;
}

static bool
s_is_value (const char *s, size_t n)
{
    return s_is_name (s, n) || s_is_integer (s, n);
}

static int
s_find_param (const kf_tune_t *self, const char *name, size_t n)
{
    for (int p = 0; p < self->n_params; p++)
        if (strlen (self->params[p].name) == n && !memcmp (self->params[p].name, name, n))
            return p;
    return -1;
}

static int
s_find_value (const s_param_t *param, const char *value, size_t n)
{
    for (int v = 0; v < param->n_values; v++)
        if (strlen (param->values[v]) == n && !memcmp (param->values[v], value, n))
            return v;
    return -1;
}

//  The default of PARAM: the value of the source's first `#define NAME v`.
//  A default missing from the list is put in front of it, so the
//  all-defaults point is always the source as written.
static void
s_find_default (s_param_t *param, const char *source, size_t size)
{
    param->dflt = 0;
    size_t line_len;
    const char *v = kf_source_define (source, size, param->name, &line_len);
    if (!v)
        return;
    size_t n = 0;
    while (n < line_len && (isalnum ((unsigned char) v[n]) || v[n] == '_' || v[n] == '-'))
        n++;
    if (!s_is_value (v, n))
        return;
    int at = s_find_value (param, v, n);
    if (at >= 0)
        param->dflt = at;
    else if (param->n_values < KF_TUNE_MAX_VALUES) {
        memmove (param->values[1], param->values[0],
                 (size_t) param->n_values * KF_TUNE_TOKEN_MAX);
        memset (param->values[0], 0, KF_TUNE_TOKEN_MAX);
        memcpy (param->values[0], v, n);
        param->n_values++;
    }
}

//  A condition as written, `when OTHER=a,b` after parameter PARAM's values.
typedef struct {
    int param;
    const char *text;        //  "OTHER=a,b"
    size_t len;
} s_cond_t;

//  Resolves COND against STAGE: the name must be declared (on this line
//  or before), not be the parameter itself, and each value must be one
//  of that parameter's values, its default included. Returns 0 or -1.
static int
s_resolve (kf_tune_t *stage, const s_cond_t *cond, char *why, size_t why_size)
{
    s_param_t *param = &stage->params[cond->param];
    const char *eq = memchr (cond->text, '=', cond->len);
    size_t name_len = eq ? (size_t) (eq - cond->text) : 0;
    if (!eq || !s_is_name (cond->text, name_len) || name_len + 1 == cond->len) {
        snprintf (why, why_size, "parameter '%s': condition '%.*s' is not OTHER=values",
                  param->name, (int) (cond->len < 40 ? cond->len : 40), cond->text);
        return -1;
    }
    int parent = s_find_param (stage, cond->text, name_len);
    if (parent < 0) {
        snprintf (why, why_size, "parameter '%s': condition names '%.*s', which is not "
                  "declared on this line or before", param->name, (int) name_len, cond->text);
        return -1;
    }
    if (parent == cond->param) {
        snprintf (why, why_size, "parameter '%s': condition on itself", param->name);
        return -1;
    }
    const s_param_t *other = &stage->params[parent];
    const char *v = eq + 1, *end = cond->text + cond->len;
    while (v <= end) {
        const char *comma = memchr (v, ',', (size_t) (end - v));
        const char *stop = comma ? comma : end;
        int at = s_find_value (other, v, (size_t) (stop - v));
        if (at < 0) {
            snprintf (why, why_size, "parameter '%s': condition value '%.*s' is not one of "
                      "%s's values", param->name, (int) (stop - v < 40 ? stop - v : 40), v,
                      other->name);
            return -1;
        }
        param->when |= (uint64_t) 1 << at;
        v = stop + 1;
    }
    param->parent = parent;
    return 0;
}

//  -1, or a parameter whose chain of conditions leads back to itself.
static int
s_cycle (const kf_tune_t *stage)
{
    for (int p = 0; p < stage->n_params; p++) {
        int q = stage->params[p].parent;
        for (int steps = 0; q >= 0 && steps < stage->n_params; steps++) {
            if (q == p)
                return p;
            q = stage->params[q].parent;
        }
    }
    return -1;
}

//  Parses the declarations in TEXT[0..LEN) into STAGE (a copy of SELF's
//  parameters plus this line's), finds each new parameter's default in
//  SOURCE, then resolves this line's conditions. Returns 0, or -1 with WHY.
static int
s_parse_line (kf_tune_t *stage, const char *text, size_t len, const char *source, size_t size,
              char *why, size_t why_size)
{
    size_t i = 0;
    int first = stage->n_params, n_conds = 0;
    s_cond_t conds[KF_TUNE_MAX_PARAMS];
    while (i < len) {
        while (i < len && isspace ((unsigned char) text[i]))
            i++;
        if (i == len)
            break;
        size_t start = i;
        while (i < len && !isspace ((unsigned char) text[i]))
            i++;
        const char *tok = text + start;
        size_t tok_len = i - start;
        if (tok_len == 4 && !memcmp (tok, "when", 4)) {
            int last = stage->n_params - 1;
            if (last < first) {
                snprintf (why, why_size, "'when' before any parameter");
                return -1;
            }
            if (n_conds && conds[n_conds - 1].param == last) {
                snprintf (why, why_size, "parameter '%s' has a second condition",
                          stage->params[last].name);
                return -1;
            }
            while (i < len && isspace ((unsigned char) text[i]))
                i++;
            start = i;
            while (i < len && !isspace ((unsigned char) text[i]))
                i++;
            if (i == start) {
                snprintf (why, why_size, "parameter '%s': 'when' names no condition",
                          stage->params[last].name);
                return -1;
            }
            conds[n_conds++] = (s_cond_t) { last, text + start, i - start };
            continue;
        }
        const char *eq = memchr (tok, '=', tok_len);
        if (!eq) {
            snprintf (why, why_size, "'%.*s' is not NAME=values", (int) (tok_len < 40 ? tok_len : 40), tok);
            return -1;
        }
        size_t name_len = (size_t) (eq - tok);
        if (!s_is_name (tok, name_len)) {
            snprintf (why, why_size, "'%.*s' is not a parameter name", (int) (name_len < 40 ? name_len : 40), tok);
            return -1;
        }
        if (s_find_param (stage, tok, name_len) >= 0) {
            snprintf (why, why_size, "parameter '%.*s' declared twice", (int) name_len, tok);
            return -1;
        }
        if (stage->n_params == KF_TUNE_MAX_PARAMS) {
            snprintf (why, why_size, "more than %d parameters", KF_TUNE_MAX_PARAMS);
            return -1;
        }
        s_param_t *param = &stage->params[stage->n_params];
        memset (param, 0, sizeof *param);
        param->parent = -1;
        memcpy (param->name, tok, name_len);
        const char *v = eq + 1, *end = tok + tok_len;
        while (v <= end) {
            const char *comma = memchr (v, ',', (size_t) (end - v));
            const char *stop = comma ? comma : end;
            size_t n = (size_t) (stop - v);
            if (!s_is_value (v, n)) {
                snprintf (why, why_size, "parameter '%s': '%.*s' is not an integer or identifier",
                          param->name, (int) (n < 40 ? n : 40), v);
                return -1;
            }
            if (s_find_value (param, v, n) >= 0) {
                snprintf (why, why_size, "parameter '%s': value '%.*s' listed twice",
                          param->name, (int) n, v);
                return -1;
            }
            if (param->n_values == KF_TUNE_MAX_VALUES) {
                snprintf (why, why_size, "parameter '%s': more than %d values",
                          param->name, KF_TUNE_MAX_VALUES);
                return -1;
            }
            memcpy (param->values[param->n_values++], v, n);
            v = stop + 1;
        }
        stage->n_params++;
    }
    if (stage->n_params == first) {
        snprintf (why, why_size, "no parameter declared");
        return -1;
    }
    for (int p = first; p < stage->n_params; p++)
        s_find_default (&stage->params[p], source, size);
    for (int c = 0; c < n_conds; c++)
        if (s_resolve (stage, &conds[c], why, why_size))
            return -1;
    int loop = s_cycle (stage);
    if (loop >= 0) {
        snprintf (why, why_size, "the conditions of '%s' lead back to it",
                  stage->params[loop].name);
        return -1;
    }
    return 0;
}

//  True when LINE[0..AT) is only what may open a comment: blanks, '/', '*'.
static bool
s_comment_prefix (const char *line, size_t at)
{
    for (size_t i = 0; i < at; i++)
        if (!(line[i] == ' ' || line[i] == '\t' || line[i] == '/' || line[i] == '*'))
            return false;
    return true;
}

static void
s_parse (kf_tune_t *self, const char *source, size_t size)
{
    static const char key[] = "kf-tune:";
    const char *line = source, *end = source + size;
    kf_tune_t *stage = malloc (sizeof *stage);
    if (!stage)
        return;
    while (line < end) {
        const char *nl = memchr (line, '\n', (size_t) (end - line));
        const char *line_end = nl ? nl : end;
        size_t len = (size_t) (line_end - line);
        const char *hit = len >= sizeof key - 1
                          ? memmem (line, len, key, sizeof key - 1) : NULL;
        if (hit && s_comment_prefix (line, (size_t) (hit - line))) {
            const char *decl = hit + sizeof key - 1;
            const char *close = memmem (decl, (size_t) (line_end - decl), "*/", 2);
            const char *decl_end = close ? close : line_end;
            char why[160];
            *stage = *self;
            if (s_parse_line (stage, decl, (size_t) (decl_end - decl), source, size,
                              why, sizeof why) == 0)
                *self = *stage;
            else
                kf_warn ("kf-tune line ignored: %s", why);
        }
        line = line_end + 1;
    }
    free (stage);
}

//  Orders the parameters so that each comes after the one its condition
//  names, otherwise in declaration order (no conditions: 0, 1, 2, ...).
static void
s_order (kf_tune_t *self)
{
    bool placed[KF_TUNE_MAX_PARAMS] = { false };
    for (int k = 0; k < self->n_params; k++)
        for (int p = 0; p < self->n_params; p++) {
            int q = self->params[p].parent;
            if (!placed[p] && (q < 0 || placed[q])) {
                self->order[k] = p;
                placed[p] = true;
                break;
            }
        }
}

static bool
s_active (const s_param_t *param, const bool *active, const int *point)
{
    int q = param->parent;
    return q < 0 || (active[q] && (param->when >> point[q] & 1));
}

//  Sets POINT's inactive parameters to their defaults: the one point that
//  stands for every point differing from it only there.
static void
s_canon (const kf_tune_t *self, int *point)
{
    bool active[KF_TUNE_MAX_PARAMS];
    for (int k = 0; k < self->n_params; k++) {
        int p = self->order[k];
        active[p] = s_active (&self->params[p], active, point);
        if (!active[p])
            point[p] = self->params[p].dflt;
    }
}

static long
s_mul (long a, long b)
{
    return b && a > S_SPACE_MAX / b ? S_SPACE_MAX : a * b;
}

//  The number of distinct points (saturating at S_SPACE_MAX): for each
//  parameter, from the last in order back, the points of its subtree are
//  the sum over its values of the product of the subtrees of the children
//  that value activates; the space is the product over the unconditioned.
static long
s_space (const kf_tune_t *self)
{
    long sub[KF_TUNE_MAX_PARAMS], space = 1;
    for (int k = self->n_params - 1; k >= 0; k--) {
        int p = self->order[k];
        sub[p] = 0;
        for (int v = 0; v < self->params[p].n_values; v++) {
            long points = 1;
            for (int c = 0; c < self->n_params; c++)
                if (self->params[c].parent == p && (self->params[c].when >> v & 1))
                    points = s_mul (points, sub[c]);
            sub[p] = sub[p] + points > S_SPACE_MAX ? S_SPACE_MAX : sub[p] + points;
        }
        if (self->params[p].parent < 0)
            space = s_mul (space, sub[p]);
    }
    return space;
}

static bool
s_selected (const kf_tune_t *self, const int *point)
{
    for (int c = 0; c < self->n_configs; c++)
        if (!memcmp (self->points + (size_t) c * self->n_params, point,
                     (size_t) self->n_params * sizeof (int)))
            return true;
    return false;
}

//  Adds POINT, made canonical, unless it is selected already.
static void
s_add (kf_tune_t *self, int *point)
{
    s_canon (self, point);
    if (s_selected (self, point))
        return;
    memcpy (self->points + (size_t) self->n_configs * self->n_params, point,
            (size_t) self->n_params * sizeof (int));
    self->n_configs++;
}

//  Every distinct point, in mixed-radix order over self->order with the
//  last fastest, an inactive parameter held at its default. Recursion
//  depth: the parameters; leaves: the space, which fits the cap here.
static void
s_enumerate (kf_tune_t *self, int *point, bool *active, int k)
{
    if (k == self->n_params) {
        s_add (self, point);
        return;
    }
    int p = self->order[k];
    const s_param_t *param = &self->params[p];
    active[p] = s_active (param, active, point);
    for (int v = 0; v < (active[p] ? param->n_values : 1); v++) {
        point[p] = active[p] ? v : param->dflt;
        s_enumerate (self, point, active, k + 1);
    }
}

//  A move of parameter P that its conditions make inactive at the
//  defaults would be the defaults again; so each parameter up its chain
//  of conditions takes the first value after its default that activates
//  the one below it.
static void
s_activate (const kf_tune_t *self, int *point, int p)
{
    for (int c = p, steps = 0; self->params[c].parent >= 0 && steps < self->n_params; steps++) {
        const s_param_t *child = &self->params[c];
        const s_param_t *parent = &self->params[child->parent];
        for (int j = 1; j < parent->n_values && !(child->when >> point[child->parent] & 1); j++)
            point[child->parent] = (parent->dflt + j) % parent->n_values;
        c = child->parent;
    }
}

static void
s_select (kf_tune_t *self, int cap)
{
    int np = self->n_params;
    int point[KF_TUNE_MAX_PARAMS];
    for (int p = 0; p < np; p++)
        point[p] = self->params[p].dflt;
    s_add (self, point);
    if (self->space <= cap) {
        bool active[KF_TUNE_MAX_PARAMS];
        s_enumerate (self, point, active, 0);
        return;
    }
    //  One-parameter moves away from the defaults, round robin.
    for (int k = 1; k < KF_TUNE_MAX_VALUES && self->n_configs < cap; k++)
        for (int p = 0; p < np && self->n_configs < cap; p++) {
            const s_param_t *param = &self->params[p];
            if (k >= param->n_values)
                continue;
            memcpy (point, self->points, (size_t) np * sizeof (int));
            point[p] = (param->dflt + k) % param->n_values;
            s_activate (self, point, p);
            s_add (self, point);
        }
    //  The rest spread by a Weyl sequence: parameter p steps by the
    //  fractional part of the square root of the p-th prime.
    static const int primes[KF_TUNE_MAX_PARAMS] = { 2, 3, 5, 7, 11, 13, 17, 19,
                                                    23, 29, 31, 37, 41, 43, 47, 53 };
    for (long j = 1; j <= 1000L * cap && self->n_configs < cap; j++) {
        for (int p = 0; p < np; p++) {
            double step = sqrt ((double) primes[p]);
            double x = (double) j * (step - floor (step));
            x -= floor (x);
            int v = (int) (x * self->params[p].n_values);
            point[p] = v < self->params[p].n_values ? v : self->params[p].n_values - 1;
        }
        s_add (self, point);
    }
}

kf_tune_t *
kf_tune_new (const char *source, size_t size, int max_configs)
{
    if (!source)
        return NULL;
    kf_tune_t *self = calloc (1, sizeof *self);
    if (!self)
        return NULL;
    s_parse (self, source, size);
    if (self->n_params <= 0) {
        free (self);
        return NULL;
    }
    s_order (self);
    self->space = s_space (self);
    int cap = max_configs < 1 ? 1 : max_configs > S_CONFIGS_MAX ? S_CONFIGS_MAX : max_configs;
    self->points = calloc ((size_t) cap * (unsigned) self->n_params, sizeof (int));
    if (!self->points) {
        free (self);
        return NULL;
    }
    s_select (self, cap);
    self->skipped = self->space - self->n_configs;
    return self;
}

void
kf_tune_destroy (kf_tune_t **self_p)
{
    kf_tune_t *self = KF_TAKE (self_p);
    if (self) {
        free (self->points);
        free (self);
    }
}

int
kf_tune_params (const kf_tune_t *self)
{
    return self ? self->n_params : 0;
}

long
kf_tune_space (const kf_tune_t *self)
{
    return self ? self->space : 0;
}

int
kf_tune_configs (const kf_tune_t *self)
{
    return self ? self->n_configs : 0;
}

long
kf_tune_skipped (const kf_tune_t *self)
{
    return self ? self->skipped : 0;
}

static const char *
s_value (const kf_tune_t *self, int i, int p)
{
    return self->params[p].values[self->points[(size_t) i * self->n_params + p]];
}

json_t *
kf_tune_config_json (const kf_tune_t *self, int i)
{
    if (!self || i < 0 || i >= self->n_configs)
        return NULL;
    json_t *params = json_object ();
    for (int p = 0; p < self->n_params; p++) {
        const char *v = s_value (self, i, p);
        json_object_set_new (params, self->params[p].name,
                             s_is_integer (v, strlen (v))
                             ? json_integer (strtoll (v, NULL, 10)) : json_string (v));
    }
    return params;
}

char *
kf_tune_config_label (const kf_tune_t *self, int i, char *buf, size_t size)
{
    json_t *params = kf_tune_config_json (self, i);
    kf_tune_params_label (params, buf, size);
    json_decref (params);
    return buf;
}

int
kf_tune_config_define (const kf_tune_t *self, int i, int p, char *buf, size_t size)
{
    if (!self || i < 0 || i >= self->n_configs || p < 0 || p >= self->n_params)
        return -1;
    int n = snprintf (buf, size, "-D%s=%s", self->params[p].name, s_value (self, i, p));
    return n < 0 || (size_t) n >= size ? -1 : 0;
}

char *
kf_tune_params_label (json_t *params, char *buf, size_t size)
{
    if (!buf || size == 0)
        return buf;
    buf[0] = 0;
    size_t used = 0;
    const char *name;
    json_t *value;
    json_object_foreach (params, name, value) {
        char text[KF_TUNE_TOKEN_MAX];
        if (json_is_integer (value))
            snprintf (text, sizeof text, "%lld", (long long) json_integer_value (value));
        else
            snprintf (text, sizeof text, "%s", json_is_string (value) ? json_string_value (value) : "?");
        int n = snprintf (buf + used, size - used, "%s%s=%s", used ? " " : "", name, text);
        if (n < 0 || (size_t) n >= size - used) {
            buf[used] = 0;
            break;
        }
        used += (size_t) n;
    }
    return buf;
}
