/*  main.c - kfctl, the user's command line to the coordinator.
 *
 *  Parses its own argv (subcommands with their options, global options
 *  anywhere), finds the endpoints, and runs one command from the table
 *  below: submit, validate, status, workers, drain, undrain, audit, keygen, runs,
 *  show, report, best, cancel, watch (handlers in kfctl_submit.c,
 *  kfctl_validate.c, kfctl_runs.c, kfctl_fleet.c). Exit codes and JSON shapes are documented
 *  in docs/kfctl.md; keep both in step.
 */
#include "kf_log.h"
#include "kfctl_cmd.h"
#include "kfctl_suite.h"
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define S_DEFAULT_TIMEOUT_MS 5000

/* Which options a command accepts beyond the global ones. */
enum {
    S_OPT_SUBMIT = 1,      /* --target --generations --population --seed --wait */
    S_OPT_OUTPUT = 2,      /* -o / --output */
    S_OPT_EXPORT = 0x100,  /* --candidate --torch --force (export) */
    S_OPT_PROFILE = 0x200  /* --top --submit --out (profile-model) */
};

typedef struct s_command_t s_command_t;

struct s_command_t {
    const char *name;
    const char *usage;
    const char *summary;
    int nargs;             /* required positional arguments; -1: one or more */
    int options;
    kf_ctl_handler_fn *handler;
};

static const char *s_global_help =
    "Options of every command:\n"
    "  --endpoint EP          coordinator's client endpoint\n"
    "                         (else $KF_CLIENT_ENDPOINT, else the kf-local state folder)\n"
    "  --status-endpoint EP   status endpoint (else $KF_STATUS_ENDPOINT, ...)\n"
    "  --event-endpoint EP    event endpoint (else $KF_EVENT_ENDPOINT, ...)\n"
    "  --timeout SECONDS      how long to wait for each reply (default 5)\n"
    "  --json                 print the raw reply objects as JSON\n"
    "  -h, --help             this help\n"
    "State folder: $KF_STATE, else /var/lib/kf-local (root) or ~/.kf-local;\n"
    "its file `endpoints` is written by kf-local up.\n"
    "Exit codes: 0 ok, 1 error reply or run failed/cancelled, 2 bad usage or\n"
    "task file, 3 coordinator unreachable, 130 interrupted.\n";

static const s_command_t s_commands[] = {
    { "submit",
      "kfctl submit TASK|PROBLEM.py [--target T] [--generations N] [--population P] "
      "[--seed S] [--model M] [--first-model M] [--budget-tokens N] [--budget-usd X] "
      "[--tune N] [--name N] [--op OP] [--allow-degenerate] [--config FILE]\n"
      "       [--set KEY=VALUE]... [--no-memory] [--wait] [--json]",
      "submit a task file or a PyTorch problem (KernelBench format); prints the run id\n"
      "  --target T          host, cuda, level-zero, opencl, or narrowed: cuda:sm_90\n"
      "  --generations N     generations of the search (1..100000)\n"
      "  --population P      candidates per generation (1..10000)\n"
      "  --seed S            random seed (0..2^63-1)\n"
      "  --model M           generator: offline (default), openai:MODEL,\n"
      "                      anthropic:MODEL, command:NAME, or an ensemble\n"
      "                      with weights: openai:gpt-5-mini=1,openai:gpt-4.1=1\n"
      "  --first-model M     another model for the first generation\n"
      "  --budget-tokens N   stop asking for candidates after N tokens\n"
      "  --budget-usd X      stop asking for candidates after X dollars\n"
      "  --tune N            build and time up to N kf-tune points of each\n"
      "                      candidate (1..16; default 1: no sweep)\n"
      "  --name N            a PyTorch problem's task name (default: the file's stem)\n"
      "  --op OP             its op class (default: the stem when it is softmax,\n"
      "                      rmsnorm, layernorm, activation or row_reduction,\n"
      "                      else pytorch)\n"
      "  --allow-degenerate  run even when the reference's outputs are degenerate\n"
      "                      (constant, input-independent, all near zero); the\n"
      "                      reasons become a run warning instead of failing it\n"
      "  --config FILE       a run config: a JSON object of search settings\n"
      "                      (docs/search.md: islands, gradients, tuning,\n"
      "                      selection, ...); the flags above override it\n"
      "  --set KEY=VALUE     one run-config setting (VALUE as JSON), e.g.\n"
      "                      islands=false, selection.curiosity=1; repeatable\n"
      "  --no-memory         offer no elites of earlier runs of the op as\n"
      "                      inspirations (--set memory=false)\n"
      "  --wait              wait until the run ends; print the best speedup;\n"
      "                      exit 0 when done, 1 when failed or cancelled\n"
      "  --json              with --wait: {run_id, status, best_speedup,\n"
      "                      first_speedup, best_candidate_id, reason}; else {run_id}",
      1, S_OPT_SUBMIT, kf_ctl_cmd_submit },
    { "validate",
      "kfctl validate TASK|PROBLEM.py [--target T] [--name N] [--op OP] [--json]\n"
      "       (submit's other options are accepted and not used)",
      "build and run a task's reference once, here, before anything is queued;\n"
      "  it prints its shapes and dtypes, time per call, degenerate outputs, and why it\n"
      "  fails when it does (a compiler error, a refusal, a traceback), with\n"
      "  your own file names. Runs kf-compile-worker and kf-exec-worker (beside\n"
      "  kfctl, else on PATH) in their standalone modes; needs no coordinator.\n"
      "  Exit 0 when the reference runs, 1 when it does not, 2 on a bad file\n"
      "  --target T          where it runs: host (default), cuda, ...; a task\n"
      "                      written in CUDA runs on cuda, as with submit\n"
      "  --json              {ok, task, target, reference_file, inputs, outputs,\n"
      "                      reference_ms, sets, degenerate, stage, error}",
      1, S_OPT_SUBMIT, kf_ctl_cmd_validate },
    { "suite",
      "kfctl suite submit DIR|FILE... [submit's options] [--name NAME] [--wait] [--json]\n"
      "       kfctl suite show ID [--json]\n"
      "       kfctl suite list [--json]",
      "many problems as one suite, with KernelBench's fast_p figures\n"
      "  submit              every problem (PyTorch .py files in the KernelBench\n"
      "                      format, task files, task folders; a folder is\n"
      "                      scanned in name order) as a run of a new suite;\n"
      "                      what is no problem is skipped, saying why.\n"
      "                      Takes submit's options for every run; --name\n"
      "                      names the suite; prints the suite id\n"
      "  show ID             each problem's status, correctness, best speedup\n"
      "                      over PyTorch eager and over torch.compile and\n"
      "                      candidates spent; the suite's fast_0, fast_1,\n"
      "                      fast_1.5, fast_2 and geometric mean speedup\n"
      "                      against each baseline (n/a where none exists)\n"
      "  list                every suite with its runs counted by status\n"
      "  --wait              (submit) wait until every run ends, then show\n"
      "                      the suite; exit 0 when all are done\n"
      "  --json              the reply objects (docs/kfctl.md)",
      -1, S_OPT_SUBMIT, kf_ctl_cmd_suite },
    { "status", "kfctl status [--json]",
      "coordinator summary: workers per role, queue depths, runs, counters",
      0, 0, kf_ctl_cmd_status },
    { "workers", "kfctl workers [--json]",
      "connected workers with their role, credits, jobs and capabilities", 0,
      0, kf_ctl_cmd_workers },
    { "drain", "kfctl drain WORKER [--json]",
      "stop giving WORKER (an id from 'kfctl workers') new jobs; the ones it\n"
      "  holds run to the end. It stays connected: stop it once its JOBS is 0.\n"
      "  --json              {worker_id, draining, jobs}",
      1, 0, kf_ctl_cmd_drain },
    { "undrain", "kfctl undrain WORKER [--json]",
      "give a drained worker jobs again", 1, 0, kf_ctl_cmd_undrain },
    { "audit", "kfctl audit CANDIDATE accept|reject [--json]",
      "a person's verdict on a correct result held for audit.\n"
      "  A result is held when suspicious (past a measured ceiling or far beyond\n"
      "  its run, and its automatic re-verification failed): until accepted it does not\n"
      "  count towards its run's best and first-correct\n"
      "  figures ('kfctl show' lists it as \"correct, held\"); a rejected one\n"
      "  also leaves the archive. Prints the run's figures after the verdict\n"
      "  --json              {candidate_id, run_id, verdict, audit_reason,\n"
      "                      best_candidate_id, best_speedup, first_speedup}",
      2, 0, kf_ctl_cmd_audit },
    { "keygen", "kfctl keygen DIR NAME [--json]",
      "make a CURVE certificate pair: DIR/NAME (public) and DIR/NAME_secret\n"
      "  (mode 0600); DIR is created (0700) when missing. Give the public file\n"
      "  to the coordinator's allow-list folder (docs/operations.md)",
      2, 0, kf_ctl_cmd_keygen },
    { "runs", "kfctl runs [--json]",
      "every run with status and best speedup, and the suite it belongs to",
      0, 0, kf_ctl_cmd_runs },
    { "show", "kfctl show RUN [--json]",
      "one run's summary and suite, archive grids, best kernel, lineage, candidates",
      1, 0, kf_ctl_cmd_show },
    { "report", "kfctl report RUN [-o PREFIX|FILE.html] [--json]\n"
      "       kfctl report --suite ID -o FILE.html [--json]",
      "write the run's limited-budget curve and progress as CSV and SVG,\n"
      "  or the whole run as one self-contained HTML page\n"
      "  -o, --output PREFIX write PREFIX.csv, PREFIX-generations.csv and\n"
      "                      PREFIX.svg (default run-RUN); prints the paths\n"
      "  -o FILE.html        write the page instead (charts, archive heat maps,\n"
      "                      the best kernel's lineage with diffs, stage times)\n"
      "  --suite ID -o FILE.html  a suite's page instead: its fast_p curves\n"
      "                      against eager and torch.compile, and a row per\n"
      "                      problem\n"
      "  --json              {run_id, budget_csv, generations_csv, svg}, or\n"
      "                      {run_id, html}, or {suite_id, html}",
      1, S_OPT_OUTPUT, kf_ctl_cmd_report },
    { "best", "kfctl best RUN [-o FILE] [--json]",
      "the best candidate's source, on stdout or into FILE\n"
      "  -o, --output FILE   write the source to FILE", 1, S_OPT_OUTPUT,
      kf_ctl_cmd_best },
    { "cancel", "kfctl cancel RUN [--json]", "cancel a running run", 1, 0,
      kf_ctl_cmd_cancel },
    { "source", "kfctl source RUN CANDIDATE [-o FILE] [--json]",
      "any candidate's source, correct or not, with its verdict and compiler log.\n"
      "  The source goes to stdout; on stderr its status, times (its median and\n"
      "  the reference's), the whole verdict detail and the compiler's log\n"
      "  -o, --output FILE   write the source to FILE and the log to FILE.log\n"
      "  --json              {run_id, candidate, compile_log, source}",
      2, S_OPT_OUTPUT, kf_ctl_cmd_source },
    { "export", "kfctl export RUN [--candidate ID] [--torch] -o DIR [--force] [--json]",
      "write a run's best kernel (or one candidate) as something to build and call\n"
      "  PyTorch problem with --torch: DIR/kf_NAME/, a Python package whose Model is\n"
      "  a torch.nn.Module with the problem's forward, running the kernel (built on\n"
      "  first import with the run's compiler flags), and test_kernel.py comparing it\n"
      "  with the problem's Model on fresh inputs. Native task: the source, kf_kernel.h,\n"
      "  task.json and a README with the build line. The tuning point that was\n"
      "  measured is written into the source. Exit 1 when the candidate is not correct\n"
      "  or the run has none\n"
      "  --candidate ID      that candidate of the run instead of the best\n"
      "  --torch             the Python package (a PyTorch problem's run only)\n"
      "  -o, --output DIR    where to write; must not exist or be empty\n"
      "  --force             write into a non-empty DIR (files of the same name are\n"
      "                      replaced)\n"
      "  --json              {run_id, candidate_id, dir, files, package, python}",
      1, S_OPT_EXPORT | S_OPT_OUTPUT, kf_ctl_cmd_export },
    { "profile-model", "kfctl profile-model MODEL.py [--top N] [--out DIR] [--force] "
      "[--target T | --local] [--submit N [submit's options]] [--json]",
      "profile a whole model and write its hottest operators as problems\n"
      "  MODEL.py defines Model, get_inputs and get_init_inputs (KernelBench level 3).\n"
      "  It runs under torch.profiler on an exec worker of --target (default host), as\n"
      "  a model_profile job, or with --local here, with the Python the exec worker\n"
      "  would pick ($KF_PYTHON, /opt/torch/.venv/bin/python3, /usr/bin/python3,\n"
      "  python3). Operators are ranked by self time, each one's share of the total\n"
      "  being the most replacing it could save (Amdahl); one KernelBench-format\n"
      "  problem per top operator, with the shapes and dtypes it was called with, is\n"
      "  written to DIR\n"
      "  --top N             operators to write (1..50, default 5)\n"
      "  --out DIR           where (default MODEL-ops next to MODEL.py); must not\n"
      "                      exist or be empty, unless --force\n"
      "  --force             write into a non-empty DIR\n"
      "  --local             profile on this machine, without a coordinator\n"
      "  --submit N          submit the top N problems as one suite, with submit's\n"
      "                      options (--target, --generations, --wait, ...)\n"
      "  --json              {model, total_us, operators: [{rank, name, self_us,\n"
      "                      share, calls, shapes, dtypes, problem}], dir}",
      1, S_OPT_PROFILE | S_OPT_EXPORT | S_OPT_OUTPUT | S_OPT_SUBMIT,
      kf_ctl_cmd_profile_model },
    { "watch", "kfctl watch RUN [--json]",
      "live progress of a run until it ends\n"
      "  Ctrl-C stops watching (exit 130); the run goes on\n"
      "  --json              one line per event, then {\"run\": run object}",
      1, 0, kf_ctl_cmd_watch },
};
#define S_N_COMMANDS (sizeof s_commands / sizeof s_commands[0])

static void
s_main_help (FILE *out)
{
    fprintf (out, "usage: kfctl COMMAND [ARGS] [OPTIONS]\n\n"
                  "KernelFoundry's command line: talks to kf-coordinator.\n\n"
                  "Commands:\n");
    for (size_t i = 0; i < S_N_COMMANDS; i++)   /* whole first sentences */
        kf_ctl_help_line (out, s_commands[i].name, s_commands[i].summary);
    fprintf (out, "\n'kfctl COMMAND --help' shows a command's options.\n\n%s",
             s_global_help);
}

static void
s_command_help (const s_command_t *cmd)
{
    printf ("usage: %s\n\n%s\n\n%s", cmd->usage, cmd->summary, s_global_help);
}

/* Takes the value of option NAME: "--name=value" or "--name value". */
static int
s_value (int argc, char **argv, int *i, const char *arg, const char *name,
         const char **value)
{
    size_t n = strlen (name);
    if (strncmp (arg, name, n))
        return 0;
    if (arg[n] == '=') {
        *value = arg + n + 1;
        return 1;
    }
    if (arg[n] != '\0')
        return 0;
    if (*i + 1 >= argc) {
        kf_ctl_usage ("%s needs a value\n", name);
        return -1;
    }
    *value = argv[++*i];
    return 1;
}

/* --version (or -V) was given: print it, whatever else was asked. */
static bool s_version = false;

/* Parses argv into ARGS. Returns 0, or an exit code after a message. */
static int
s_parse (int argc, char **argv, kf_ctl_args_t *args, const s_command_t **cmd_p)
{
    memset (args, 0, sizeof *args);
    args->timeout_ms = S_DEFAULT_TIMEOUT_MS;
    *cmd_p = NULL;
    const char *timeout = NULL, *gens = NULL, *pop = NULL, *seed = NULL;
    const char *budget_tokens = NULL, *budget_usd = NULL, *tune = NULL;
    bool options_done = false;
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        if (options_done || arg[0] != '-' || !strcmp (arg, "-")) {
            if (!args->command)
                args->command = arg;
            else if (args->nargs < (int) (sizeof args->args / sizeof args->args[0]))
                args->args[args->nargs++] = arg;
            else {
                kf_ctl_usage ("too many arguments\n");
                return KF_CTL_EXIT_USAGE;
            }
            continue;
        }
        if (!strcmp (arg, "--")) {
            options_done = true;
            continue;
        }
        if (!strcmp (arg, "-h") || !strcmp (arg, "--help")) {
            args->help = true;
            continue;
        }
        if (!strcmp (arg, "--version") || !strcmp (arg, "-V")) {
            s_version = true;
            continue;
        }
        if (!strcmp (arg, "--json")) {
            args->json = true;
            continue;
        }
        if (!strcmp (arg, "--wait")) {
            args->wait = true;
            continue;
        }
        if (!strcmp (arg, "--torch") || !strcmp (arg, "--force")) {
            *(arg[2] == 't' ? &args->torch : &args->force) = true;
            continue;
        }
        if (!strcmp (arg, "--local")) {   /* profile-model */
            args->local = true;
            continue;
        }
        if (!strcmp (arg, "--allow-degenerate")) {
            args->allow_degenerate = true;
            continue;
        }
        const char *value = NULL;
        int set = s_value (argc, argv, &i, arg, "--set", &value);
        if (set < 0)
            return KF_CTL_EXIT_USAGE;
        if (!strcmp (arg, "--no-memory")) {   /* the same as --set memory=false */
            set = 1;
            value = "memory=false";
        }
        if (set == 1) {
            if (args->n_sets == (int) (sizeof args->sets / sizeof args->sets[0])) {
                kf_ctl_usage ("--set: at most 16 of them (use --config FILE)\n");
                return KF_CTL_EXIT_USAGE;
            }
            args->sets[args->n_sets++] = value;
            continue;
        }
        struct {
            const char *name;
            const char **slot;
        } valued[] = {
            { "--endpoint", &args->endpoint },
            { "--status-endpoint", &args->status_endpoint },
            { "--event-endpoint", &args->event_endpoint },
            { "--timeout", &timeout },
            { "--target", &args->target },
            { "--generations", &gens },
            { "--population", &pop },
            { "--seed", &seed },
            { "--model", &args->model },
            { "--first-model", &args->first_model },
            { "--budget-tokens", &budget_tokens },
            { "--budget-usd", &budget_usd },
            { "--tune", &tune },
            { "--config", &args->config_file },
            { "--name", &args->task_name },
            { "--op", &args->op },
            { "--output", &args->output },
            { "--suite", &args->suite },
            { "-o", &args->output },
            { "--out", &args->output },
            { "--candidate", &args->candidate },
            { "--top", &args->top },
            { "--submit", &args->submit_top },
        };
        int hit = 0;
        for (size_t k = 0; k < sizeof valued / sizeof valued[0] && !hit; k++) {
            hit = s_value (argc, argv, &i, arg, valued[k].name, &value);
            if (hit == 1)
                *valued[k].slot = value;
        }
        if (hit < 0)
            return KF_CTL_EXIT_USAGE;
        if (!hit) {   /* with the nearest known option, if one is near */
            const char *names[sizeof valued / sizeof valued[0]];
            for (size_t k = 0; k < sizeof valued / sizeof valued[0]; k++)
                names[k] = valued[k].name;
            kf_ctl_unknown_option (arg, names, sizeof valued / sizeof valued[0]);
            return KF_CTL_EXIT_USAGE;
        }
    }
    if (!args->command)
        return 0;
    for (size_t i = 0; i < S_N_COMMANDS; i++)
        if (!strcmp (args->command, s_commands[i].name))
            *cmd_p = &s_commands[i];
    const s_command_t *cmd = *cmd_p;
    if (!cmd) {
        const char *names[S_N_COMMANDS];
        for (size_t i = 0; i < S_N_COMMANDS; i++)
            names[i] = s_commands[i].name;
        kf_ctl_unknown_command (args->command, names, S_N_COMMANDS);
        return KF_CTL_EXIT_USAGE;
    }
    if (args->help)
        return 0;
    if (!(cmd->options & S_OPT_SUBMIT)
        && (args->target || gens || pop || seed || args->wait || args->model
            || args->first_model || budget_tokens || budget_usd || tune
            || args->task_name || args->op || args->allow_degenerate
            || args->config_file || args->n_sets)) {
        kf_ctl_usage ("%s: --target, --generations, --population, "
                 "--seed, --model, --first-model, --budget-*, --name, --op,"
                 " --allow-degenerate, --config, --set and --wait belong to submit\n",
                 cmd->name);
        return KF_CTL_EXIT_USAGE;
    }
    if (!(cmd->options & S_OPT_EXPORT) && (args->candidate || args->torch || args->force)) {
        kf_ctl_usage ("%s: --candidate, --torch and --force belong to export\n",
                 cmd->name);
        return KF_CTL_EXIT_USAGE;
    }
    if (!(cmd->options & S_OPT_PROFILE) && (args->top || args->submit_top || args->local)) {
        kf_ctl_usage ("%s: --top, --submit and --local belong to profile-model\n",
                 cmd->name);
        return KF_CTL_EXIT_USAGE;
    }
    if (!(cmd->options & S_OPT_OUTPUT) && args->output) {
        kf_ctl_usage ("%s: -o/--output belongs to best and report\n",
                 cmd->name);
        return KF_CTL_EXIT_USAGE;
    }
    if (args->suite && strcmp (cmd->name, "report")) {
        kf_ctl_usage ("%s: --suite belongs to report\n", cmd->name);
        return KF_CTL_EXIT_USAGE;
    }
    if (cmd->nargs < 0 ? args->nargs < 1
                       : args->nargs != cmd->nargs - (args->suite ? 1 : 0)) {
        kf_ctl_usage ("%s: wrong number of arguments\nusage: %s\n",
                 cmd->name, cmd->usage);
        return KF_CTL_EXIT_USAGE;
    }
    if (timeout) {
        char *end = NULL;
        errno = 0;
        double seconds = strtod (timeout, &end);
        if (errno || !*timeout || *end || !(seconds >= 0.1 && seconds <= 3600)) {
            kf_ctl_usage ("--timeout: '%s' is not a number of "
                     "seconds between 0.1 and 3600\n", timeout);
            return KF_CTL_EXIT_USAGE;
        }
        args->timeout_ms = (int) (seconds * 1000);
    }
    if (gens) {
        if (kf_ctl_parse_int (gens, 1, 100000, &args->generations)) {
            kf_ctl_usage ("--generations: '%s' is not an integer "
                     "in 1..100000\n", gens);
            return KF_CTL_EXIT_USAGE;
        }
        args->has_generations = true;
    }
    if (pop) {
        if (kf_ctl_parse_int (pop, 1, 10000, &args->population)) {
            kf_ctl_usage ("--population: '%s' is not an integer "
                     "in 1..10000\n", pop);
            return KF_CTL_EXIT_USAGE;
        }
        args->has_population = true;
    }
    struct {
        const char *name, *text;
        double *slot;
    } budgets[] = { { "--budget-tokens", budget_tokens, &args->budget_tokens },
                    { "--budget-usd", budget_usd, &args->budget_usd } };
    for (size_t k = 0; k < 2; k++) {
        if (!budgets[k].text)
            continue;
        char *end = NULL;
        errno = 0;
        double v = strtod (budgets[k].text, &end);
        if (errno || end == budgets[k].text || *end || !(v > 0)) {
            kf_ctl_usage ("%s: '%s' is not a positive number\n", budgets[k].name,
                     budgets[k].text);
            return KF_CTL_EXIT_USAGE;
        }
        *budgets[k].slot = v;
    }
    if (tune && kf_ctl_parse_int (tune, 1, 16, &args->tune)) {
        kf_ctl_usage ("--tune: '%s' is not an integer in 1..16\n", tune);
        return KF_CTL_EXIT_USAGE;
    }
    if (seed) {
        if (kf_ctl_parse_int (seed, 0, LLONG_MAX, &args->seed)) {
            kf_ctl_usage ("--seed: '%s' is not a non-negative "
                     "integer\n", seed);
            return KF_CTL_EXIT_USAGE;
        }
        args->has_seed = true;
    }
    return 0;
}

int
main (int argc, char **argv)
{
    kf_log_init ("kfctl", false);
    /* Known before parsing, so a usage error is JSON too under --json. */
    for (int i = 1; i < argc && strcmp (argv[i], "--"); i++)
        if (!strcmp (argv[i], "--json"))
            kf_ctl_json_errors = true;
    kf_ctl_args_t args;
    const s_command_t *cmd = NULL;
    int code = s_parse (argc, argv, &args, &cmd);
    if (code)
        return code;
    if (s_version) {
        kf_ctl_print_version (args.json);
        return KF_CTL_EXIT_OK;
    }
    if (!cmd) {
        s_main_help (args.help ? stdout : stderr);
        return args.help ? KF_CTL_EXIT_OK : KF_CTL_EXIT_USAGE;
    }
    if (args.help) {
        s_command_help (cmd);
        return KF_CTL_EXIT_OK;
    }
    kf_ctl_catch_signals ();
    kf_ctl_endpoints_t ep;
    kf_ctl_endpoints_resolve (&ep, args.endpoint, args.status_endpoint,
                              args.event_endpoint);
    code = cmd->handler (&args, &ep);
    kf_ctl_endpoints_clear (&ep);
    /* Sockets are all closed by now; shutting czmq down here rather than
     * at exit keeps its context out of the leak report. */
    zsys_shutdown ();
    if (code == KF_CTL_EXIT_INTERRUPTED)
        fprintf (stderr, "kfctl: interrupted\n");
    return code;
}
