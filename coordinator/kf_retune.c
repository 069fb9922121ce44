/*  kf_retune.c - a template re-centred on its sweep's winner
 *  (kf_retune.h).
 */
#include "kf_retune.h"
#include "kf_json.h"
#include "kf_load_busy.h"
#include "kf_prompt_target.h"
#include "kf_tune.h"
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bool
kf_retune_is_template (const char *source)
{
    return source && strstr (source, "kf-tune:") != NULL;
}

json_t *
kf_retune_winner (json_t *configs)
{
    json_t *full = NULL, *screen = NULL;
    double full_s = 0, screen_s = 0;
    size_t i;
    json_t *row;
    json_array_foreach (configs, i, row) {
        if (strcmp (kf_jstr (row, "verdict"), "correct")
            || !json_is_object (json_object_get (row, "params")))
            continue;
        double f = json_is_number (json_object_get (row, "full_speedup"))
                       ? kf_jnum (row, "full_speedup", 0)
                   : !strcmp (kf_jstr (row, "fidelity"), "full") ? kf_jnum (row, "speedup", 0)
                                                                 : 0;
        double s = kf_jnum (row, "speedup", 0);
        if (f > full_s) {
            full = row;
            full_s = f;
        }
        if (s > screen_s) {
            screen = row;
            screen_s = s;
        }
    }
    return full ? full : screen;
}

//  The identifier at P (at most SIZE - 1 characters) into BUF; its end.
static const char *
s_ident (const char *p, char *buf, size_t size)
{
    size_t n = 0;
    while ((isalnum ((unsigned char) *p) || *p == '_') && n + 1 < size)
        buf[n++] = *p++;
    buf[n] = 0;
    return p;
}

//  A parameter's value as text ("64", "FAST").
static void
s_value (json_t *v, char *buf, size_t size)
{
    if (json_is_integer (v))
        snprintf (buf, size, "%lld", (long long) json_integer_value (v));
    else if (json_is_string (v))
        snprintf (buf, size, "%s", json_string_value (v));
    else if (json_is_number (v))
        snprintf (buf, size, "%.17g", json_number_value (v));
    else
        buf[0] = 0;
}

char *
kf_retune_source (const char *source, json_t *params, bool *changed)
{
    if (changed)
        *changed = false;
    size_t cap = strlen (source) + 1;
    char *out = malloc (cap);
    if (!out)
        return NULL;
    size_t used = 0;
    for (const char *line = source; *line; ) {
        const char *eol = strchr (line, '\n');
        size_t n = eol ? (size_t) (eol - line) + 1 : strlen (line);
        //  A line grows by at most a value's length.
        if (used + n + 64 + 1 > cap) {
            char *grown = realloc (out, cap + n + 64 + 1);
            if (!grown) {
                free (out);
                return NULL;
            }
            out = grown;
            cap += n + 64 + 1;
        }
        const char *p = line;
        while (*p == ' ' || *p == '\t')
            p++;
        char name[64] = "", value[64] = "";
        const char *name_end = NULL;
        if (*p == '#') {
            p++;
            while (*p == ' ' || *p == '\t')
                p++;
            if (!strncmp (p, "define", 6) && (p[6] == ' ' || p[6] == '\t')) {
                p += 6;
                while (*p == ' ' || *p == '\t')
                    p++;
                name_end = s_ident (p, name, sizeof name);
            }
        }
        json_t *v = *name ? json_object_get (params, name) : NULL;
        if (v)
            s_value (v, value, sizeof value);
        if (v && *value && (*name_end == ' ' || *name_end == '\t')) {
            //  "#define NAME old  // comment" -> "#define NAME new  // comment"
            const char *old = name_end;
            while (*old == ' ' || *old == '\t')
                old++;
            const char *old_end = old;
            while (*old_end && !isspace ((unsigned char) *old_end))
                old_end++;
            size_t vlen = strlen (value);
            if (changed && ((size_t) (old_end - old) != vlen || strncmp (old, value, vlen)))
                *changed = true;
            used += (size_t) snprintf (out + used, cap - used, "%.*s%s", (int) (old - line), line,
                                       value);
            memcpy (out + used, old_end, n - (size_t) (old_end - line));
            used += n - (size_t) (old_end - line);
        }
        else {
            memcpy (out + used, line, n);
            used += n;
        }
        out[used] = 0;
        line += n;
    }
    return out;
}

char *
kf_retune_recentre (const char *source, json_t *configs, json_t **winner, bool *converged)
{
    json_t *won = kf_retune_winner (configs);
    json_t *params = json_object_get (won, "params");
    bool changed = true;
    char *out = params ? kf_retune_source (source, params, &changed) : strdup (source);
    if (winner)
        *winner = won;
    if (converged)
        *converged = out && params && !changed && json_array_size (configs) >= 2
                     && kf_retune_is_template (source);
    return out;
}

size_t
kf_retune_combination (json_t *configs, char *buf, size_t size)
{
    buf[0] = 0;
    json_t *won = kf_retune_winner (configs);
    json_t *wp = json_object_get (won, "params");
    json_t *base = json_array_get (configs, 0);
    json_t *dp = json_object_get (base, "params");
    if (!wp || !json_is_object (dp) || won == base
        || strcmp (kf_jstr (base, "verdict"), "correct"))
        return 0;
    //  The parameters the winner moved, and each of them moved alone.
    const char *key;
    json_t *v;
    int moved = 0;
    json_object_foreach (wp, key, v)
        moved += !json_equal (v, json_object_get (dp, key));
    if (moved < 2)
        return 0;
    char label[256];
    kf_tune_params_label (wp, label, sizeof label);
    size_t n = (size_t) snprintf (buf, size, "The point that won (%s) moved %d parameters "
                                  "from the defaults at once: %.2fx on the screen against the "
                                  "defaults' %.2fx", label, moved,
                                  kf_jnum (won, "speedup", 0), kf_jnum (base, "speedup", 0));
    int alone = 0;
    bool each_less = true;
    json_object_foreach (wp, key, v) {
        if (json_equal (v, json_object_get (dp, key)))
            continue;
        json_t *want = json_deep_copy (dp);
        json_object_set (want, key, v);
        size_t i;
        json_t *row, *hit = NULL;
        json_array_foreach (configs, i, row)
            if (json_equal (json_object_get (row, "params"), want))
                hit = row;
        json_decref (want);
        if (!hit || n >= size)
            continue;
        json_t *one = json_pack ("{s:O}", key, v);
        kf_tune_params_label (one, label, sizeof label);
        json_decref (one);
        bool ok = !strcmp (kf_jstr (hit, "verdict"), "correct");
        each_less &= ok && kf_jnum (hit, "speedup", 0) < kf_jnum (won, "speedup", 0) / 1.05;
        if (ok)
            n += (size_t) snprintf (buf + n, size - n, "%s %s gave %.2fx",
                                    alone++ ? "," : "; moved alone,", label,
                                    kf_jnum (hit, "speedup", 0));
        else
            n += (size_t) snprintf (buf + n, size - n, "%s %s was %s",
                                    alone++ ? "," : "; moved alone,", label,
                                    kf_jstr (hit, "verdict"));
    }
    if (n < size)
        n += (size_t) snprintf (buf + n, size - n, "%s",
                                alone == moved && each_less
                                    ? ": the combination won, not any of its moves alone."
                                : alone ? "." : "; no point moved them one at a time.");
    if (n >= size)
        n = size - 1;
    return n;
}

bool
kf_retune_sweep_busy (json_t *configs, double *lo, double *hi)
{
    double least = -1, most = -1;
    size_t i;
    json_t *row;
    json_array_foreach (configs, i, row) {
        json_t *load = json_object_get (row, "host_load");
        double share = kf_jnum (load, "others_cpu_share", -1);
        if (share < 0 || kf_prompt_load_undisturbed (load))
            continue;
        least = least < 0 || share < least ? share : least;
        most = share > most ? share : most;
    }
    if (lo)
        *lo = least;
    if (hi)
        *hi = most;
    return most >= 0 && kf_load_busy (-1, most);
}
