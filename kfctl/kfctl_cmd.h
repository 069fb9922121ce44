/*  kfctl_cmd.h - what kfctl's commands share: the parsed command line,
 *  the handler each command is, and the few helpers every handler uses
 *  (one request with its failures turned into messages and exit codes).
 *
 *  main.c parses argv into a kf_ctl_args_t and calls the command's
 *  handler; the handlers live by idea: kfctl_submit.c (submit),
 *  kfctl_runs.c (watch, runs, show, report, best, cancel) and
 *  kfctl_fleet.c (status, workers, drain, undrain, audit, keygen).
 */
#ifndef KFCTL_CMD_H
#define KFCTL_CMD_H

#include "kfctl_client.h"
#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>

/* How often a followed run is asked for with SHOW. */
#define KF_CTL_POLL_MS 1000

typedef struct {
    const char *command;
    const char *args[256];                /* suite submit takes many paths */
    int nargs;
    const char *endpoint, *status_endpoint, *event_endpoint;
    int timeout_ms;
    bool json, help, wait;
    const char *target, *output;
    long long generations, population, seed;
    bool has_generations, has_population, has_seed;
    const char *model, *first_model;      /* checked by the coordinator */
    double budget_tokens, budget_usd;     /* 0: none */
    long long tune;                       /* 0: the coordinator's default */
    const char *task_name, *op;           /* a PyTorch problem's name and op */
    bool allow_degenerate;
    const char *config_file;              /* submit --config FILE */
    const char *sets[16];                 /* submit --set KEY=VALUE, in order */
    int n_sets;
    const char *candidate;                /* export --candidate ID */
    bool torch, force;                    /* export --torch, --force */
    const char *top, *submit_top;         /* profile-model --top N, --submit N */
    bool local;                           /* profile-model --local */
    const char *suite;                    /* report --suite ID */
} kf_ctl_args_t;

/* One command: returns its exit code (KF_CTL_EXIT_*). */
typedef int (kf_ctl_handler_fn) (kf_ctl_args_t *args, kf_ctl_endpoints_t *ep);

kf_ctl_handler_fn kf_ctl_cmd_submit;
kf_ctl_handler_fn kf_ctl_cmd_watch;
kf_ctl_handler_fn kf_ctl_cmd_runs;
kf_ctl_handler_fn kf_ctl_cmd_show;
kf_ctl_handler_fn kf_ctl_cmd_report;
kf_ctl_handler_fn kf_ctl_cmd_best;
kf_ctl_handler_fn kf_ctl_cmd_cancel;
kf_ctl_handler_fn kf_ctl_cmd_status;
kf_ctl_handler_fn kf_ctl_cmd_workers;
kf_ctl_handler_fn kf_ctl_cmd_drain;
kf_ctl_handler_fn kf_ctl_cmd_undrain;
kf_ctl_handler_fn kf_ctl_cmd_audit;
kf_ctl_handler_fn kf_ctl_cmd_keygen;
kf_ctl_handler_fn kf_ctl_cmd_source;           /* kfctl_source.c */
kf_ctl_handler_fn kf_ctl_cmd_export;          /* kfctl_export.c */
kf_ctl_handler_fn kf_ctl_cmd_profile_model;   /* kfctl_profile_model.c */
kf_ctl_handler_fn kf_ctl_cmd_validate;        /* kfctl_validate.c */

/* Submit's pieces, which suites reuse (kfctl_submit.c): the task of the
 * file at PATH (a task file, or a PyTorch problem in the KernelBench
 * format made into one), and the run config the user wrote (--config,
 * --set, submit's flags). Caller's; NULL with *ERR (caller frees). */
json_t *kf_ctl_submit_task (const kf_ctl_args_t *args, const char *path, char **err);
json_t *kf_ctl_submit_config (const kf_ctl_args_t *args, char **err);
/* With no target in CONFIG, the one TASK's language needs (cuda), set in
 * CONFIG; -1 with *ERR when it needs a choice (opencl, sycl). */
int kf_ctl_submit_target (json_t *task, json_t *config, const char *path, char **err);

/* Set by main when --json is on the command line: errors kfctl finds
 * itself also go to stdout as {"code", "reason"}, as a coordinator's
 * ERROR reply would (kf_ctl_usage, kf_ctl_error_json). */
extern bool kf_ctl_json_errors;

/* A usage error: "kfctl: " and FMT on stderr (FMT may end in a newline),
 * and under --json {"code": "usage", "reason"} on stdout. */
void kf_ctl_usage (const char *fmt, ...) __attribute__ ((format (printf, 1, 2)));

/* An error of COMMAND: "kfctl: COMMAND: " and FMT on stderr, and under
 * --json {"code": CODE, "reason"} on stdout. */
void kf_ctl_fail (const char *command, const char *code, const char *fmt, ...)
    __attribute__ ((format (printf, 3, 4)));

/* {"code": CODE, "reason": REASON} on stdout when --json is on. */
void kf_ctl_error_json (const char *code, const char *reason);

/* The unknown option ARG, with the nearest of NAMES (N valued options;
 * the flags every command knows are added) as "did you mean". */
void kf_ctl_unknown_option (const char *arg, const char *const *names, size_t n);

/* The unknown command WORD, with the nearest of NAMES (N). */
void kf_ctl_unknown_command (const char *word, const char *const *names, size_t n);

/* One line of the top-level help: NAME and the first sentence of SUMMARY
 * (up to "; ", ". " or its first option line), whole, wrapped. */
void kf_ctl_help_line (FILE *out, const char *name, const char *summary);

/* "kfctl VERSION (protocol N)" on stdout; --json: {kfctl, protocol}. */
void kf_ctl_print_version (bool json);

/* VALUE (borrowed) as one line of compact JSON on stdout. */
void kf_ctl_print_json (json_t *value);

/* Says that the page args->output was written, for the run or suite ID:
 * its path, or with --json {KEY: ID, html: path}. */
void kf_ctl_print_html_written (const kf_ctl_args_t *args, const char *key, long long id);

/* TEXT as an integer in MIN..MAX into *OUT. Returns 0, or -1. */
int kf_ctl_parse_int (const char *text, long long min, long long max, long long *out);

/* Says that no WHICH ("client" or "status") endpoint is known and how to
 * give one. Returns KF_CTL_EXIT_UNREACHABLE. */
int kf_ctl_no_endpoint (const char *which);

/* Runs one request TYPE with BODY (consumed) and turns every failure into
 * its message and exit code. Returns 0 with *REPLY_P set (caller's), or
 * the exit code. */
int kf_ctl_call (const char *endpoint, const kf_ctl_args_t *args, const char *type,
                 json_t *body, const char *expect, kf_msg_t **reply_p);

/* A request with an empty body whose reply is printed whole (--json) or
 * by PRINT, given the reply's field KEY (NULL: the whole body). WHAT
 * names the endpoint for the message when ENDPOINT is NULL. */
int kf_ctl_query (kf_ctl_args_t *args, const char *endpoint, const char *what,
                  const char *type, const char *key, void (*print) (FILE *, json_t *));

/* What a run command does with the reply REPLY (borrowed) about RUN_ID:
 * prints it, and returns the exit code. */
typedef int (kf_ctl_run_reply_fn) (kf_ctl_args_t *args, long long run_id, kf_msg_t *reply);

/* Requests TYPE {run_id} for the command's RUN argument and hands the
 * reply (of type EXPECT) to DONE. Returns DONE's exit code, or the
 * request's when it failed. */
int kf_ctl_run_call (kf_ctl_args_t *args, kf_ctl_endpoints_t *ep, const char *type,
                     const char *expect, kf_ctl_run_reply_fn *done);

/* Follows RUN_ID until it ends. WATCH: the progress is the output (stdout,
 * or events as JSON lines); else progress goes to stderr when it is a
 * terminal and the caller prints the result. *RUN_P gets the last run
 * object (caller's). Returns 0 when the run ended, else an exit code. */
int kf_ctl_follow (const kf_ctl_args_t *args, kf_ctl_endpoints_t *ep, long long run_id,
                   bool watch, json_t **run_p);

/* Exit code for a finished run: 0 only when it is done. */
int kf_ctl_run_exit (json_t *run);

/* "run N STATUS: best speedup ..., first correct ..." and the reason. */
void kf_ctl_print_outcome (json_t *run, long long run_id);

/* The end of a followed run RUN_ID, RUN (taken) its last run object:
 * prints AS_JSON (taken; built by the caller only under --json) or the
 * outcome, and returns the run's exit code (kf_ctl_run_exit). */
int kf_ctl_run_ended (const kf_ctl_args_t *args, json_t *run, long long run_id,
                      json_t *as_json);

#endif
