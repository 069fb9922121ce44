/*  kf_gen_offline_starter.h - the offline generator's starter tables.
 *
 *  Internal to the offline generator: a starter is one template (a file of
 *  llm-gateway/templates/, embedded at build time) and a table of
 *  parameters whose values pick real implementation choices; a language
 *  is its starters and the prelude their templates place. The tables are
 *  kf_gen_offline_starters.c, the logic that fills a template
 *  kf_gen_offline.c.
 */
#ifndef KF_GEN_OFFLINE_STARTER_H
#define KF_GEN_OFFLINE_STARTER_H

#include <stddef.h>

#define KF_OFFLINE_MAX_PARAMS 8
#define KF_OFFLINE_MAX_VALUES 6

typedef struct {
    const char *name;
    const char *values[KF_OFFLINE_MAX_VALUES + 1];   //  NULL-ended; [0] is the baseline
} kf_offline_param_t;

typedef struct {
    const char *key;            //  starter name, also in the source's title
    const char *title;
    int n_inputs;               //  inputs the kernel reads, all f32
    const char *inputs_help;    //  for the error when a task has fewer
    const char *fixed;          //  #defines set by the task, not tuned, or NULL
    const char *tmpl;           //  the template, placeholders and all
    kf_offline_param_t params[KF_OFFLINE_MAX_PARAMS];
} kf_offline_starter_t;

typedef struct {
    const char *language;       //  as a generate job names it
    const char *backend;        //  as the source's title names it
    const char *prelude;        //  the text a template places at @PRELUDE@
    const char *rows;           //  the text placed at @ROWS@, or NULL
    const kf_offline_starter_t *starters;
    size_t n_starters;
} kf_offline_lang_t;

//  The languages, host C first (a job that names none gets it).
extern const kf_offline_lang_t kf_offline_langs[];
extern const size_t kf_offline_n_langs;

//  The title lines every source opens with (templates/banner.txt).
extern const char kf_tmpl_banner_txt[];
/* The host's polynomial exponential (templates/exp_poly.c), for @EXP_POLY@. */
extern const char kf_tmpl_exp_poly_c[];

#endif
