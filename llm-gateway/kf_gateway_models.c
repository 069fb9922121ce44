/*  kf_gateway_models.c - what the gateway reads at start beside its
 *  configuration: an API key from its file or the environment, and the
 *  models file (command_NAME = command line, limits_MODEL = rpm=N tpm=N;
 *  docs/llm-gateway.md), with every bad line named by file and number.
 */
#include "kf_gateway_models.h"
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

int
kf_gateway_load_models (kf_ratelimit_t *limits, const char *path, kf_gateway_pair_t **commands,
                        int *n_commands, char **err)
{
    FILE *f = fopen (path, "r");
    if (!f)
        return kf_fail (err, "%s: cannot open the models file", path);
    char line[1024];
    int lineno = 0, rc = 0;
    while (rc == 0 && fgets (line, sizeof line, f)) {
        lineno++;
        char *hash = strchr (line, '#');
        if (hash)
            *hash = 0;
        char *p = line;
        while (isspace ((unsigned char) *p))
            p++;
        if (!*p)
            continue;
        char *eq = strchr (p, '=');
        if (!eq) {
            rc = kf_fail (err, "%s:%d: expected KEY = VALUE", path, lineno);
            break;
        }
        char *kend = eq;
        while (kend > p && isspace ((unsigned char) kend[-1]))
            kend--;
        *kend = 0;
        char *value = eq + 1;
        while (isspace ((unsigned char) *value))
            value++;
        size_t vlen = strlen (value);
        while (vlen && isspace ((unsigned char) value[vlen - 1]))
            value[--vlen] = 0;
        if (!strncmp (p, "command_", 8) && p[8]) {
            if (!*value) {
                rc = kf_fail (err, "%s:%d: %s has no command line", path, lineno, p);
                break;
            }
            kf_gateway_pair_t *grown = realloc (*commands, sizeof *grown * (size_t) (*n_commands + 1));
            if (!grown) {
                rc = kf_fail (err, "out of memory");
                break;
            }
            *commands = grown;
            grown[*n_commands] = (kf_gateway_pair_t) { strdup (p + 8), strdup (value) };
            (*n_commands)++;
        }
        else if (!strncmp (p, "limits_", 7) && p[7]) {
            double rpm = 0, tpm = 0;
            char *save = NULL;
            for (char *tok = strtok_r (value, " \t,", &save); tok && rc == 0;
                 tok = strtok_r (NULL, " \t,", &save)) {
                char *end;
                if (!strncmp (tok, "rpm=", 4))
                    rpm = strtod (tok + 4, &end);
                else if (!strncmp (tok, "tpm=", 4))
                    tpm = strtod (tok + 4, &end);
                else {
                    rc = kf_fail (err, "%s:%d: %s: expected rpm=N tpm=N, not '%s'", path,
                                  lineno, p, tok);
                    break;
                }
                if (*end || !isfinite (rpm) || !isfinite (tpm) || rpm < 0 || tpm < 0)
                    rc = kf_fail (err, "%s:%d: %s: '%s' is not a number >= 0", path, lineno,
                                  p, tok);
            }
            if (rc == 0 && kf_ratelimit_set (limits, p + 7, rpm, tpm))
                rc = kf_fail (err, "out of memory");
        }
        else
            rc = kf_fail (err, "%s:%d: unknown key '%s' (command_NAME, limits_MODEL)", path,
                          lineno, p);
    }
    fclose (f);
    return rc;
}
