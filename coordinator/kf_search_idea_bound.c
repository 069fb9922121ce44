/*  kf_search_idea_bound.c - an idea that moves no fewer bytes is not
 *  handed alone to a kernel at the memory bound (kf_search_idea.h).
 *
 *  Round 16: candidate 8 ran at 100% of the measured copy bandwidth, and
 *  its two children of generation 2 were handed explicit SIMD and
 *  streaming stores, one each: the SIMD child could change nothing
 *  measurable, since the kernel's time was its bytes. Where the parent's
 *  position line puts it at or above KF_SEARCH_IDEA_BOUND of the copy
 *  bandwidth, such an idea is paired with one that cuts the bytes moved
 *  and that the parent does not do yet.
 */
#include "kf_search_idea.h"
#include "kf_json.h"
#include "kf_prompt_class.h"
#include "kf_prompt_target.h"

double
kf_search_idea_memory_share (json_t *kernel, json_t *spec, kf_target_kind_t kind)
{
    json_t *bw = json_object_get (kernel, "bandwidth");
    double gbs = kf_jnum (bw, "candidate_gbs", 0), copy = kf_jnum (bw, "copy_gbs", 0);
    if (!(gbs > 0) || !(copy > 0))
        return 0;
    //  As the position line counts them (kf_prompt_position.c): on the
    //  host an ordinary store reads its line first, so the outputs count
    //  twice unless the code stores with streaming stores.
    const char *source = kf_jstr (kernel, "source");
    if (kind == KF_TARGET_HOST && *source)
        gbs *= kf_prompt_store_factor (spec, kf_prompt_source_does (source, NULL,
                                                                    KF_IDEA_STREAM));
    return gbs / copy;
}

bool
kf_search_idea_cuts_bytes (const char *idea)
{
    kf_idea_feature_t f = kf_prompt_idea_feature (idea);
    return f == KF_IDEA_STREAM || f == KF_IDEA_FUSED_ROW || f == KF_IDEA_EPILOGUE;
}

int
kf_search_idea_pair (const char *const *ideas, size_t n, size_t idx, double share,
                     unsigned parent_features, int parent_built, const bool *spent)
{
    if (idx >= n || share < KF_SEARCH_IDEA_BOUND || kf_search_idea_cuts_bytes (ideas[idx]))
        return -1;
    for (size_t c = 0; c < n; c++)
        if (kf_search_idea_cuts_bytes (ideas[c]) && (int) c != parent_built
            && !((parent_features >> kf_prompt_idea_feature (ideas[c])) & 1u)
            && !(spent && spent[c]))
            return (int) c;
    return -1;
}
