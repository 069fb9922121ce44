/*  kf_search_idea_small.c - an idea whose gain an estimate or the host's
 *  own figures cap at a few percent is handed out only when no other is
 *  left (kf_search_idea_small, kf_search_idea_idle_cores,
 *  kf_search_idea.h).
 *
 *  Round 17 of the model in the loop: generation 0 of a 512 -> 256
 *  linear layer with a layer norm after it handed one of its three
 *  attempts the idea that fuses the layer norm into the product, while
 *  the same prompt's Epilogue line put the layer norm at about 0.018 ms
 *  of a 2.37 ms one-core floor (1%). That attempt's kernel (one dot
 *  product an output, the epilogue fused) took 7.27 ms, against 3.21 ms
 *  for the register-blocked one beside it.
 */
#include "kf_search_idea.h"
#include "kf_json.h"
#include "kf_prompt_class.h"
#include "kf_prompt_epilogue.h"
#include "kf_prompt_threads.h"

int
kf_search_idea_small (const char *const *ideas, size_t count, json_t *spec, json_t *hardware,
                      double *share)
{
    *share = 0;
    kf_epilogue_t e;
    double product_ms, epi_ms;
    json_t *dev = json_array_get (json_object_get (hardware, "devices"), 0);
    if (!kf_prompt_epilogue_ms (spec, dev, &e, &product_ms, &epi_ms))
        return -1;
    for (size_t i = 0; i < count; i++)
        if (kf_prompt_idea_feature (ideas[i]) == KF_IDEA_EPILOGUE
            && epi_ms < KF_SEARCH_IDEA_SMALL * (product_ms + epi_ms)) {
            *share = epi_ms / (product_ms + epi_ms);
            return (int) i;
        }
    return -1;
}

//  Round 25's notes: threads were handed on a host whose start figures
//  found all cores no faster than one core alone (a VM whose second vCPU
//  was busy).
int
kf_search_idea_idle_cores (const char *const *ideas, size_t count, json_t *spec,
                           json_t *hardware, bool *spent)
{
    if (!kf_prompt_cores_no_gain (hardware, spec, NULL))
        return 0;
    int marked = 0;
    for (size_t i = 0; i < count; i++)
        if (kf_prompt_idea_feature (ideas[i]) == KF_IDEA_THREADS) {
            spent[i] = true;
            marked++;
        }
    return marked;
}
