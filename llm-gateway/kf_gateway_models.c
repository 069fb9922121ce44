/*  kf_gateway_models.c - what the gateway reads at start beside its
 *  configuration: an API key from its file or the environment, and the
 *  models file (command_NAME = command line, limits_MODEL = rpm=N tpm=N;
 *  docs/llm-gateway.md), with every bad line named by file and number.
 */
#include "kf_gateway_models.h"
#include "kf_config.h"
#include "kf_str.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

char *
kf_gateway_read_key (const char *file, const char *env, char **err)
{
    if (file) {
        FILE *f = fopen (file, "r");
        if (!f) {
            kf_fail (err, "%s: cannot read the key file", file);
            return NULL;
        }
        char buf[1024] = "";
        size_t n = fread (buf, 1, sizeof buf - 1, f);
        fclose (f);
        buf[n] = 0;
        char *p = buf;
        while (isspace ((unsigned char) *p))
            p++;
        size_t len = strcspn (p, " \t\r\n");
        char *key = len ? strndup (p, len) : NULL;
        memset (buf, 0, sizeof buf);
        if (!key)
            kf_fail (err, "%s: the key file is empty", file);
        return key;
    }
    const char *v = getenv (env);
    return v && *v ? strdup (v) : NULL;
}

//  ---------------------------------------------------------------------
//  The models file: command_NAME = command line, limits_MODEL = rpm=N tpm=N

typedef struct {
    kf_ratelimit_t *limits;
    kf_gateway_pair_t **commands;
    int *n_commands;
} s_models_t;

static int
s_models_line (void *arg, char *key, char *value, const char *where, char **err)
{
    s_models_t *m = arg;
    if (!strncmp (key, "command_", 8) && key[8]) {
        if (!*value)
            return kf_fail (err, "%s: %s has no command line", where, key);
        kf_gateway_pair_t *grown = realloc (*m->commands,
                                            sizeof *grown * (size_t) (*m->n_commands + 1));
        if (!grown)
            return kf_fail (err, "out of memory");
        *m->commands = grown;
        grown[*m->n_commands] = (kf_gateway_pair_t) { strdup (key + 8), strdup (value) };
        (*m->n_commands)++;
        return 0;
    }
    if (strncmp (key, "limits_", 7) || !key[7])
        return kf_fail (err, "%s: unknown key '%s' (command_NAME, limits_MODEL)", where, key);
    double rpm = 0, tpm = 0;
    char *save = NULL;
    for (char *tok = strtok_r (value, " \t,", &save); tok; tok = strtok_r (NULL, " \t,", &save)) {
        char *end;
        if (!strncmp (tok, "rpm=", 4))
            rpm = strtod (tok + 4, &end);
        else if (!strncmp (tok, "tpm=", 4))
            tpm = strtod (tok + 4, &end);
        else
            return kf_fail (err, "%s: %s: expected rpm=N tpm=N, not '%s'", where, key, tok);
        if (*end || !isfinite (rpm) || !isfinite (tpm) || rpm < 0 || tpm < 0)
            return kf_fail (err, "%s: %s: '%s' is not a number >= 0", where, key, tok);
    }
    if (kf_ratelimit_set (m->limits, key + 7, rpm, tpm))
        return kf_fail (err, "out of memory");
    return 0;
}

int
kf_gateway_load_models (kf_ratelimit_t *limits, const char *path, kf_gateway_pair_t **commands,
                        int *n_commands, char **err)
{
    s_models_t m = { limits, commands, n_commands };
    return kf_config_file_lines (path, s_models_line, &m, err);
}
