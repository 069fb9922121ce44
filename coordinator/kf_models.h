/*  kf_models.h - which generator writes a candidate.
 *
 *  A run names its generator as a model spec: "offline", "openai:gpt-4.1",
 *  "anthropic:claude-sonnet-4-5", "command:NAME", or an ensemble of them
 *  with weights, "openai:gpt-5-mini=1,openai:gpt-4.1=1", and optionally a
 *  different model for its first generation. The pick for a candidate is a
 *  function of its seed only, so a run replays with the same models.
 */
#ifndef KF_MODELS_H
#define KF_MODELS_H

#include <jansson.h>
#include <stdint.h>

/* Parses SPEC into an array of {model, weight} (caller's). Returns NULL
 * with *ERR (caller frees) naming the bad part. */
json_t *kf_models_parse (const char *spec, char **err);

/* Checks one model name: "offline" or BACKEND:NAME with a known backend. */
int kf_models_check (const char *model, char **err);

/* The model of ENSEMBLE (from kf_models_parse) picked by SEED. Borrowed. */
const char *kf_models_pick (json_t *ensemble, int64_t seed);

#endif
