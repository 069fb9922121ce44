/*  kf_gateway_models.h - what the gateway reads at start beside its
 *  configuration: API keys and the models file (kf_gateway_models.c).
 */
#ifndef KF_GATEWAY_MODELS_H
#define KF_GATEWAY_MODELS_H

#include "kf_ratelimit.h"

/* One named command of the models file: command_NAME = VALUE. */
typedef struct {
    char *name;
    char *value;
} kf_gateway_pair_t;

/* The key in FILE (its first word), or when FILE is NULL the value of the
 * environment variable ENV; caller frees. NULL with *ERR when FILE cannot
 * be read or is empty, NULL without when ENV is unset. */
char *kf_gateway_read_key (const char *file, const char *env, char **err);

/* Reads the models file PATH: each limits_MODEL line into LIMITS, each
 * command_NAME line appended to *COMMANDS (grown, *N_COMMANDS counts
 * them; the caller frees names, values and array). Returns 0, or -1 with
 * *ERR naming the file and line. */
int kf_gateway_load_models (kf_ratelimit_t *limits, const char *path, kf_gateway_pair_t **commands,
                            int *n_commands, char **err);

#endif
