/*  kf_secrets.c - scrubbing this process's secrets from what it reports
 *  (kf_secrets.h).
 */
#include "kf_secrets.h"

#include <ctype.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define S_MAX 64
#define S_MIN_LEN 8

extern char **environ;

static pthread_once_t s_once = PTHREAD_ONCE_INIT;
static char *s_values[S_MAX];
static int s_n;

bool
kf_secrets_is_secret_name (const char *name)
{
    static const char *const marks[] = { "KEY", "TOKEN", "SECRET", "PASSWORD", "PASSWD",
                                         "CREDENTIAL", "DATABASE_URL", NULL };
    char up[128];
    size_t n = 0;
    for (; name[n] && name[n] != '=' && n + 1 < sizeof up; n++)
        up[n] = (char) toupper ((unsigned char) name[n]);
    up[n] = 0;
    for (int i = 0; marks[i]; i++)
        if (strstr (up, marks[i]))
            return true;
    return false;
}

static void
s_add (const char *value, size_t len)
{
    if (len >= S_MIN_LEN && s_n < S_MAX && (s_values[s_n] = strndup (value, len)))
        s_n++;
}

static void
s_load (void)
{
    for (char **e = environ; e && *e; e++) {
        const char *eq = strchr (*e, '=');
        if (!eq || !kf_secrets_is_secret_name (*e))
            continue;
        const char *value = eq + 1;
        s_add (value, strlen (value));
        //  scheme://user:PASSWORD@host: the password alone too.
        const char *scheme = strstr (value, "://");
        const char *at = scheme ? strchr (scheme + 3, '@') : NULL;
        const char *colon = scheme ? strchr (scheme + 3, ':') : NULL;
        if (at && colon && colon < at)
            s_add (colon + 1, (size_t) (at - colon - 1));
    }
}

//  TEXT with every secret replaced, or NULL when it holds none.
static char *
s_scrubbed (const char *text)
{
    char *out = NULL;
    for (int i = 0; i < s_n; i++) {
        const char *src = out ? out : text;
        if (!strstr (src, s_values[i]))
            continue;
        size_t len = strlen (s_values[i]), cap = strlen (src) + 1;
        char *next = malloc (cap + 16 * (cap / len + 1));
        if (!next)
            break;
        char *to = next;
        for (const char *p = src; *p;) {
            const char *hit = strstr (p, s_values[i]);
            if (!hit) {
                strcpy (to, p);
                to += strlen (p);
                break;
            }
            memcpy (to, p, (size_t) (hit - p));
            to += hit - p;
            memcpy (to, "[redacted]", 10);
            to += 10;
            p = hit + len;
        }
        *to = 0;
        free (out);
        out = next;
    }
    return out;
}

static int
s_walk (json_t *json)
{
    int changed = 0;
    if (json_is_string (json)) {
        char *clean = s_scrubbed (json_string_value (json));
        if (clean) {
            json_string_set (json, clean);
            free (clean);
            changed = 1;
        }
    }
    else if (json_is_object (json)) {
        const char *key;
        json_t *value;
        json_object_foreach (json, key, value)
            changed += s_walk (value);
    }
    else if (json_is_array (json)) {
        size_t i;
        json_t *value;
        json_array_foreach (json, i, value)
            changed += s_walk (value);
    }
    return changed;
}

int
kf_secrets_scrub (json_t *json)
{
    pthread_once (&s_once, s_load);
    return s_n ? s_walk (json) : 0;
}
