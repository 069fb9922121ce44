/*  kf_config.c - load a binary's configuration table from defaults, a file,
 *  the environment and flags, rejecting unknown keys and bad values with
 *  the place they came from. */
#include "kf_str.h"
#include "kf_take.h"
#include "kf_config.h"
#include "kf_log.h"
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <assert.h>
#include <sys/types.h>

struct kf_config_t {
    const kf_cfg_entry_t *table;
    size_t n;
    char **values;           /* owned, one per entry, NULL = unset */
};


static ssize_t
s_find (const kf_config_t *self, const char *key, size_t keylen)
{
    for (size_t i = 0; i < self->n; i++)
        if (strlen (self->table[i].key) == keylen
            && !strncmp (self->table[i].key, key, keylen))
            return (ssize_t) i;
    return -1;
}

/* Checks VALUE against entry I; returns an error text or NULL. */
static char *
s_check (const kf_config_t *self, size_t i, const char *value)
{
    const kf_cfg_entry_t *e = &self->table[i];
    if (e->type == KF_CFG_STR)
        return NULL;
    if (e->type == KF_CFG_BOOL) {
        static const char *ok[] = { "true", "false", "yes", "no", "on",
                                    "off", "1", "0" };
        for (size_t k = 0; k < sizeof ok / sizeof ok[0]; k++)
            if (!strcasecmp (value, ok[k]))
                return NULL;
        return kf_strdupf ("%s: '%s' is not a boolean", e->key, value);
    }
    char *end;
    errno = 0;
    double v = e->type == KF_CFG_INT ? (double) strtoll (value, &end, 10)
                                     : strtod (value, &end);
    if (errno || end == value || *end || !isfinite (v))
        return kf_strdupf ("%s: '%s' is not %s", e->key, value,
                      e->type == KF_CFG_INT ? "an integer" : "a number");
    if (e->min <= e->max && (v < e->min || v > e->max))
        return kf_strdupf ("%s: %s is outside [%g, %g]", e->key, value, e->min,
                      e->max);
    return NULL;
}

static int
s_set (kf_config_t *self, size_t i, const char *value, const char *where,
       char **err)
{
    char *problem = s_check (self, i, value);
    if (problem) {
        *err = kf_strdupf ("%s: %s", where, problem);
        free (problem);
        return -1;
    }
    free (self->values[i]);
    self->values[i] = strdup (value);
    return 0;
}

static char *
s_trim (char *s)
{
    while (isspace ((unsigned char) *s))
        s++;
    char *end = s + strlen (s);
    while (end > s && isspace ((unsigned char) end[-1]))
        *--end = 0;
    return s;
}

int
kf_config_file_lines (const char *path, kf_config_line_fn *fn, void *arg, char **err)
{
    FILE *f = fopen (path, "r");
    if (!f)
        return kf_fail (err, "%s: cannot open: %s", path, strerror (errno));
    char *line = NULL;
    size_t cap = 0;
    int lineno = 0, rc = 0;
    while (rc == 0 && getline (&line, &cap, f) >= 0) {
        lineno++;
        char *hash = strchr (line, '#');
        if (hash)
            *hash = 0;
        char *s = s_trim (line);
        if (!*s)
            continue;
        char *where = kf_strdupf ("%s:%d", path, lineno);
        char *eq = strchr (s, '=');
        if (!where)
            rc = kf_fail (err, "out of memory");
        else if (!eq)
            rc = kf_fail (err, "%s: expected 'key = value'", where);
        else {
            *eq = 0;
            rc = fn (arg, s_trim (s), s_trim (eq + 1), where, err);
        }
        free (where);
    }
    free (line);
    fclose (f);
    return rc;
}

//  A configuration file's line: a value in double quotes loses them.
static int
s_file_line (void *arg, char *key, char *value, const char *where, char **err)
{
    kf_config_t *self = arg;
    size_t vlen = strlen (value);
    if (vlen >= 2 && value[0] == '"' && value[vlen - 1] == '"') {
        value[vlen - 1] = 0;
        value++;
    }
    ssize_t i = s_find (self, key, strlen (key));
    if (i < 0)
        return kf_fail (err, "%s: unknown key '%s'", where, key);
    return s_set (self, (size_t) i, value, where, err);
}

static void
s_print_help (const char *program, const char *usage,
              const kf_cfg_entry_t *table)
{
    printf ("usage: %s\n\noptions (flag, environment variable, config key):\n",
            usage);
    for (const kf_cfg_entry_t *e = table; e->key; e++) {
        char flag[128], env[128];
        snprintf (flag, sizeof flag, "--%s", e->key);
        snprintf (env, sizeof env, "KF_%s", e->key);
        for (char *p = flag; *p; p++)
            if (*p == '_')
                *p = '-';
        for (char *p = env; *p; p++)
            *p = (char) toupper ((unsigned char) *p);
        printf ("  %s%s\n      %s (%s)%s%s\n", flag,
                e->type == KF_CFG_BOOL ? "" : " VALUE", e->help, env,
                e->dflt ? "; default " : "", e->dflt ? e->dflt : "");
    }
    printf ("  --config FILE\n      read 'key = value' lines from FILE "
            "(KF_CONFIG)\n  --help\n      print this and exit\n");
    (void) program;
}

kf_config_t *
kf_config_load (const char *program, const char *usage,
                const kf_cfg_entry_t *table, int *argc, char **argv,
                bool *help, char **err)
{
    *err = NULL;
    *help = false;
    kf_config_t *self = calloc (1, sizeof *self);
    self->table = table;
    while (table[self->n].key)
        self->n++;
    self->values = calloc (self->n + 1, sizeof (char *));
    for (size_t i = 0; i < self->n; i++)
        if (table[i].dflt)
            self->values[i] = strdup (table[i].dflt);

    /* The config file first, so environment and flags override it. */
    const char *file = getenv ("KF_CONFIG");
    for (int i = 1; i < *argc; i++) {
        if (!strcmp (argv[i], "--help") || !strcmp (argv[i], "-h")) {
            s_print_help (program, usage, table);
            *help = true;
            kf_config_destroy (&self);
            return NULL;
        }
        if (!strcmp (argv[i], "--config") && i + 1 < *argc)
            file = argv[i + 1];
    }
    if (file && *file && kf_config_file_lines (file, s_file_line, self, err))
        goto fail;
    for (size_t i = 0; i < self->n; i++) {
        char env[128];
        snprintf (env, sizeof env, "KF_%s", table[i].key);
        for (char *p = env; *p; p++)
            *p = (char) toupper ((unsigned char) *p);
        const char *v = getenv (env);
        if (v && s_set (self, i, v, env, err))
            goto fail;
    }
    int kept = 1;
    for (int i = 1; i < *argc; i++) {
        const char *a = argv[i];
        if (strncmp (a, "--", 2) || !a[2]) {
            argv[kept++] = argv[i];
            continue;
        }
        if (!strcmp (a, "--config")) {
            i++;
            continue;
        }
        char key[128];
        const char *eq = strchr (a + 2, '=');
        size_t len = eq ? (size_t) (eq - a - 2) : strlen (a + 2);
        if (len >= sizeof key) {
            *err = kf_strdupf ("%s: unknown option", a);
            goto fail;
        }
        memcpy (key, a + 2, len);
        key[len] = 0;
        for (char *p = key; *p; p++)
            if (*p == '-')
                *p = '_';
        ssize_t k = s_find (self, key, len);
        if (k < 0) {
            *err = kf_strdupf ("%s: unknown option (see --help)", a);
            goto fail;
        }
        const char *value;
        if (eq)
            value = eq + 1;
        else if (table[k].type == KF_CFG_BOOL)
            value = "true";
        else if (i + 1 < *argc)
            value = argv[++i];
        else {
            *err = kf_strdupf ("%s: needs a value", a);
            goto fail;
        }
        if (s_set (self, (size_t) k, value, a, err))
            goto fail;
    }
    argv[kept] = NULL;
    *argc = kept;
    return self;
fail:
    kf_config_destroy (&self);
    return NULL;
}

void
kf_config_destroy (kf_config_t **self_p)
{
    kf_config_t *self = KF_TAKE (self_p);
    if (self) {
        for (size_t i = 0; i < self->n; i++)
            free (self->values[i]);
        free (self->values);
        free (self);
    }
}

static const char *
s_value (const kf_config_t *self, const char *key)
{
    ssize_t i = s_find (self, key, strlen (key));
    assert (i >= 0 && "configuration key not in the table");
    return self->values[i];
}

const char *
kf_config_str (const kf_config_t *self, const char *key)
{
    return s_value (self, key);
}

int64_t
kf_config_int (const kf_config_t *self, const char *key)
{
    const char *v = s_value (self, key);
    return v ? strtoll (v, NULL, 10) : 0;
}

double
kf_config_double (const kf_config_t *self, const char *key)
{
    const char *v = s_value (self, key);
    return v ? strtod (v, NULL) : 0.0;
}

bool
kf_config_bool (const kf_config_t *self, const char *key)
{
    const char *v = s_value (self, key);
    return v && (!strcasecmp (v, "true") || !strcasecmp (v, "yes")
                 || !strcasecmp (v, "on") || !strcmp (v, "1"));
}

kf_config_t *
kf_config_program (const char *program, const char *usage, const kf_cfg_entry_t *table,
                   int *argc, char **argv, int *exit_code)
{
    char own[128];
    if (!usage) {
        snprintf (own, sizeof own, "%s [options]", program);
        usage = own;
    }
    bool help = false;
    char *err = NULL;
    kf_config_t *self = kf_config_load (program, usage, table, argc, argv, &help, &err);
    if (!self) {
        *exit_code = help ? 0 : 2;
        if (!help)
            fprintf (stderr, "%s: %s\n", program, err ? err : "bad configuration");
        free (err);
        return NULL;
    }
    if (*argc > 1) {
        fprintf (stderr, "%s: unexpected argument '%s' (see --help)\n", program, argv[1]);
        kf_config_destroy (&self);
        *exit_code = 2;
        return NULL;
    }
    ssize_t verbose = s_find (self, "verbose", 7);
    kf_log_init (program, verbose >= 0 && kf_config_bool (self, "verbose"));
    return self;
}

kf_config_t *
kf_config_daemon (const char *program, const kf_cfg_entry_t *table, int argc,
                  char **argv, int *exit_code)
{
    return kf_config_program (program, NULL, table, &argc, argv, exit_code);
}
