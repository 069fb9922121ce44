/*  kf_search_idea.c - the kernel each attempt's idea starts from
 *  (kf_search_idea.h).
 */
#include "kf_search_idea.h"
#include "kf_json.h"
#include "kf_prompt.h"
#include "kf_prompt_class.h"
#include "kf_prompt_history.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int
kf_search_idea_pick (const char *idea, const char *language, const kf_elite_t *elites,
                     const char *const *sources, size_t n, int island,
                     const kf_elite_t *chosen, const char *chosen_source)
{
    kf_idea_feature_t f = kf_prompt_idea_feature (idea);
    if (!chosen || f == KF_IDEA_OTHER || !kf_prompt_source_does (chosen_source, language, f))
        return -1;
    for (size_t i = 0; i < n; i++)
        if (elites[i].candidate_id != chosen->candidate_id && sources[i]
            && (island < 0 || elites[i].island == island)
            && !kf_prompt_source_does (sources[i], language, f))
            return (int) i;
    return -1;
}

//  Candidate ID's source (caller frees), or NULL.
static char *
s_source (kf_db_t *db, int64_t id)
{
    char buf[24];
    snprintf (buf, sizeof buf, "%lld", (long long) id);
    void *data = NULL;
    size_t size = 0;
    if (kf_db_fetch_blob (db, "SELECT b.data FROM candidates c JOIN blobs b"
                              " ON b.hash = c.source_hash WHERE c.id = $1::bigint",
                          buf, &data, &size) != 0 || !data)
        return NULL;
    char *text = strndup (data, size);
    free (data);
    return text;
}

const kf_elite_t *
kf_search_idea_parent (kf_db_t *db, json_t *run, int population, int generation, int slot,
                       const kf_elite_t *elites, size_t n, int island, const kf_elite_t *chosen)
{
    if (!chosen || !n || population <= 0)
        return chosen;
    kf_prompt_in_t in = { .spec = json_object_get (run, "spec"),
                          .language = kf_jstr (run, "language"),
                          .target = kf_jstr (run, "target"), .population = population };
    const char *idea = kf_prompt_idea_at (&in, generation, slot);
    if (!idea || kf_prompt_idea_feature (idea) == KF_IDEA_OTHER)
        return chosen;
    //  The elites' sources and the chosen one's (candidate ids as text).
    char **sources = calloc (n + 1, sizeof *sources);
    char *chosen_source = s_source (db, chosen->candidate_id);
    for (size_t k = 0; sources && k < n; k++)
        sources[k] = elites[k].candidate_id == chosen->candidate_id
                     || (island >= 0 && elites[k].island != island)
                         ? NULL : s_source (db, elites[k].candidate_id);
    int pick = sources ? kf_search_idea_pick (idea, in.language, elites,
                                              (const char *const *) sources, n, island, chosen,
                                              chosen_source)
                       : -1;
    for (size_t k = 0; sources && k < n; k++)
        free (sources[k]);
    free (sources);
    free (chosen_source);
    return pick >= 0 ? &elites[pick] : chosen;
}
