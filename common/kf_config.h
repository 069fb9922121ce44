/*  kf_config.h - configuration as a declarative table.
 *
 *  Each binary declares its keys once: name, type, default, bounds, help.
 *  Values come, later ones winning, from the defaults, a config file
 *  (--config FILE or KF_CONFIG; lines "key = value", '#' comments), the
 *  environment (KF_ + upper-case key, e.g. KF_WORKER_ENDPOINT) and flags
 *  (--worker-endpoint VALUE, or --flag for booleans). An unknown key or a
 *  bad value is an error naming the file and line (or the flag or
 *  variable). --help prints the table.
 */
#ifndef KF_CONFIG_H
#define KF_CONFIG_H

#include <stdbool.h>
#include <stdint.h>

typedef enum { KF_CFG_STR, KF_CFG_INT, KF_CFG_DOUBLE, KF_CFG_BOOL } kf_cfg_type_t;

typedef struct {
    const char *key;          /* snake_case */
    kf_cfg_type_t type;
    const char *dflt;         /* NULL: no default (string reads as NULL) */
    double min, max;          /* numbers: inclusive bounds; min > max = none */
    const char *help;
} kf_cfg_entry_t;

#define KF_CFG_END { NULL, 0, NULL, 0, 0, NULL }

typedef struct kf_config_t kf_config_t;

/* Loads the configuration for PROGRAM from TABLE (ended by KF_CFG_END).
 * Arguments that are not options are left in *ARGC/ARGV (argv[0] kept),
 * in order. Returns NULL with *ERR (caller frees) on a bad key or value;
 * with --help prints USAGE and the table to stdout and sets *HELP. */
kf_config_t *kf_config_load (const char *program, const char *usage,
                             const kf_cfg_entry_t *table, int *argc,
                             char **argv, bool *help, char **err);
void kf_config_destroy (kf_config_t **self_p);

/* For a program's main, the one loader every daemon uses: kf_config_load
 * with USAGE (NULL: "PROGRAM [options]"), the arguments that are not
 * options left in *ARGC/ARGV for the caller to take first, any left over
 * after that refused, errors printed as "PROGRAM: message", and logging
 * started (debug records when the table's "verbose" key is set). Returns
 * NULL with *EXIT_CODE set: 0 after --help, 2 on a bad value or a stray
 * argument. */
kf_config_t *kf_config_program (const char *program, const char *usage,
                                const kf_cfg_entry_t *table, int *argc, char **argv,
                                int *exit_code);

/* kf_config_program for a daemon that takes no argument of its own. */
kf_config_t *kf_config_daemon (const char *program, const kf_cfg_entry_t *table,
                               int argc, char **argv, int *exit_code);

/* What kf_config_file_lines calls for each line: KEY and VALUE trimmed
 * (writable, valid for the call), WHERE "PATH:N" for messages. Returns 0,
 * or -1 with *ERR set (caller frees), which ends the reading. */
typedef int (kf_config_line_fn) (void *arg, char *key, char *value, const char *where,
                                  char **err);

/* Reads PATH as "key = value" lines, '#' to the end of a line a comment,
 * blank lines skipped, and calls FN with each in order until one fails:
 * the configuration file's format, and that of the files a program
 * names in it (the gateway's models file). Returns 0, or -1 with *ERR
 * naming the file: "PATH: cannot open: why", "PATH:N: expected 'key =
 * value'", or FN's own. */
int kf_config_file_lines (const char *path, kf_config_line_fn *fn, void *arg, char **err);

const char *kf_config_str (const kf_config_t *self, const char *key);
int64_t kf_config_int (const kf_config_t *self, const char *key);
double kf_config_double (const kf_config_t *self, const char *key);
bool kf_config_bool (const kf_config_t *self, const char *key);

#endif
