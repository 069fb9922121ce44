/*  kf_models.c - model specs, ensembles and the per-candidate pick. */
#include "kf_models.h"
#include "kf_str.h"
#include <stdlib.h>
#include <string.h>

int
kf_models_check (const char *model, char **err)
{
    static const char *backends[] = { "openai", "anthropic", "command" };
    static const char *name_chars = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                    "0123456789._:/-@";
    if (!strcmp (model, "offline"))
        return 0;
    const char *colon = strchr (model, ':');
    if (!colon || !colon[1] || strlen (model) > 200
        || strspn (colon + 1, name_chars) != strlen (colon + 1))
        return kf_fail (err, "model '%s': expected offline or BACKEND:NAME "
                        "(openai, anthropic, command)", model);
    for (size_t i = 0; i < sizeof backends / sizeof backends[0]; i++)
        if (strlen (backends[i]) == (size_t) (colon - model)
            && !strncmp (model, backends[i], strlen (backends[i])))
            return 0;
    return kf_fail (err, "model '%s': unknown backend '%.*s' (openai, anthropic, command)",
                    model, (int) (colon - model), model);
}

json_t *
kf_models_parse (const char *spec, char **err)
{
    if (!spec || !*spec) {
        kf_fail (err, "model: empty");
        return NULL;
    }
    json_t *out = json_array ();
    char *copy = strdup (spec), *save = NULL;
    for (char *item = strtok_r (copy, ",", &save); item; item = strtok_r (NULL, ",", &save)) {
        double weight = 1.0;
        char *eq = strrchr (item, '=');
        if (eq) {
            char *end;
            *eq = 0;
            weight = strtod (eq + 1, &end);
            if (end == eq + 1 || *end || !(weight > 0 && weight < 1e6)) {
                kf_fail (err, "model '%s': weight '%s' is not a positive number", item, eq + 1);
                goto fail;
            }
        }
        if (kf_models_check (item, err))
            goto fail;
        json_array_append_new (out, json_pack ("{s:s, s:f}", "model", item, "weight", weight));
    }
    free (copy);
    if (json_array_size (out) == 0) {
        json_decref (out);
        kf_fail (err, "model: empty");
        return NULL;
    }
    return out;
fail:
    free (copy);
    json_decref (out);
    return NULL;
}

const char *
kf_models_pick (json_t *ensemble, int64_t seed)
{
    double total = 0;
    size_t i;
    json_t *m;
    json_array_foreach (ensemble, i, m)
        total += json_number_value (json_object_get (m, "weight"));
    /* A multiplicative hash of the seed, so neighbouring seeds spread. */
    uint64_t h = (uint64_t) seed * 0x9E3779B97F4A7C15ULL;
    double r = (double) (h >> 11) / (double) (1ULL << 53) * total;
    json_array_foreach (ensemble, i, m) {
        r -= json_number_value (json_object_get (m, "weight"));
        if (r < 0)
            return json_string_value (json_object_get (m, "model"));
    }
    return json_string_value (json_object_get (json_array_get (ensemble, 0), "model"));
}
