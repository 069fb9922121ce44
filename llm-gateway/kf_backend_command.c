/*  kf_backend_command.c - a configured external program as a generator.
 *
 *  For `ollama run llama3`, `llm -m ...` or a local script: the system
 *  text and the prompt go to the program's standard input, its standard
 *  output is the completion, and it has a time limit. Commands are named
 *  in the gateway's models file (command_NAME = program args...) and
 *  chosen with model "command:NAME"; nothing from a job reaches a command
 *  line, so a prompt cannot run anything.
 *
 *  kf_subproc_run blocks until the child ends, which the loop must never
 *  do, so each attempt runs in a thread of its own and posts its finished
 *  record to a pipe that the loop polls; done is called from there, on
 *  the loop thread, like every other backend's.
 */
#include "kf_backend.h"
#include "kf_log.h"
#include "kf_str.h"
#include "kf_file.h"
#include "kf_subproc.h"
#include "kf_command_argv.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct {
    char *name;
    char **argv;                 /* split command line, NULL-ended */
} s_command_t;

typedef struct s_run_t s_run_t;

typedef struct {
    s_command_t *commands;
    int n_commands;
    double time_limit_s;
    size_t output_cap;
    int pipe[2];                 /* threads write finished s_run_t pointers */
    s_run_t *runs;               /* in flight, joined on destroy */
} s_state_t;

struct s_run_t {
    s_state_t *st;
    pthread_t thread;
    char **argv;                 /* borrowed from the command */
    char *input;                 /* system + prompt */
    char *env_line;              /* the job's settings for the program */
    kf_gen_done_fn *done;
    void *arg;
    kf_gen_reply_t reply;
    s_run_t *next;
};

static char **
s_split (const char *line)
{
    size_t n = 0, cap = 4;
    char **argv = calloc (cap, sizeof *argv);
    char *copy = strdup (line);
    char *save = NULL;
    if (!argv || !copy) {
        free (argv);
        free (copy);
        return NULL;
    }
    for (char *tok = strtok_r (copy, " \t", &save); tok; tok = strtok_r (NULL, " \t", &save)) {
        if (n + 2 > cap) {
            char **grown = realloc (argv, sizeof *argv * (cap *= 2));
            if (!grown)
                break;
            argv = grown;
        }
        argv[n++] = strdup (tok);
    }
    argv[n] = NULL;
    free (copy);
    return argv;
}

//  Reads what the child left in FILE (its stdout), or NULL.
static char *
s_slurp (const char *path, size_t cap)
{
    FILE *f = fopen (path, "rb");
    if (!f)
        return NULL;
    char *buf = malloc (cap + 1);
    size_t n = buf ? fread (buf, 1, cap, f) : 0;
    fclose (f);
    if (buf)
        buf[n] = 0;
    return buf;
}

static void *
s_run_main (void *arg)
{
    s_run_t *run = arg;
    s_state_t *st = run->st;
    kf_gen_reply_t *reply = &run->reply;
    kf_subproc_limits_t limits;
    kf_subproc_limits_default (&limits);
    limits.time_limit_s = st->time_limit_s;
    limits.output_cap = 4096;
    //  The operator's own program: it may need the network (a local model
    //  server), its memory and its user's home; only time is limited.
    limits.memory_bytes = 0;
    limits.file_bytes = 0;
    limits.max_procs = 0;
    limits.no_network = false;
    limits.drop_privileges = false;
    //  The operator's own program: it may need their keys.
    limits.keep_env = true;
    char *dir = kf_subproc_mkdtemp (&limits);
    if (!dir || kf_file_write (dir, "prompt.txt", run->input, strlen (run->input))) {
        reply->outcome = KF_GEN_FAIL;
        reply->error = strdup ("command: cannot write the prompt file");
    }
    else {
        //  The shell only redirects; the command's words are passed as
        //  arguments ("$@"), never parsed again (kf_command_argv.c).
        char *script = kf_strdupf ("%s exec \"$@\" < prompt.txt > completion.txt", run->env_line);
        char **argv = script ? kf_command_argv (script, run->argv, NULL) : NULL;
        limits.workdir = dir;
        kf_subproc_result_t res = { 0 };
        int rc = argv && script ? kf_subproc_run (argv, &limits, &res) : -1;
        int start_errno = errno;
        char *out = rc == 0 ? kf_strdupf ("%s/completion.txt", dir) : NULL;
        if (rc != 0) {
            reply->outcome = KF_GEN_FAIL;
            reply->error = kf_strdupf ("command: cannot start /bin/sh for %s: %s",
                                       run->argv[0], strerror (start_errno));
        }
        else if (res.timed_out) {
            reply->outcome = KF_GEN_RETRY;
            reply->timed_out = true;
            reply->error = kf_strdupf ("timeout: command ran past %.0f s", st->time_limit_s);
        }
        else if (res.exit_code != 0) {
            reply->outcome = KF_GEN_FAIL;
            reply->error = kf_strdupf ("command exited with %d%s: %.300s", res.exit_code,
                                       res.signal ? " (signal)" : "",
                                       res.output ? res.output : "");
        }
        else {
            reply->outcome = KF_GEN_OK;
            reply->text = out ? s_slurp (out, st->output_cap) : NULL;
            if (!reply->text)
                reply->text = strdup ("");
            reply->output_tokens = (int64_t) strlen (reply->text) / 4;
            reply->input_tokens = (int64_t) strlen (run->input) / 4;
        }
        free (out);
        kf_subproc_result_free (&res);
        free (argv);
        free (script);
    }
    if (dir) {
        kf_subproc_rmtree (dir);
        free (dir);
    }
    ssize_t w = write (st->pipe[1], &run, sizeof run);
    (void) w;    //  a pipe write of a pointer is atomic; it cannot be short
    return NULL;
}

static s_command_t *
s_find (s_state_t *st, const char *name)
{
    for (int i = 0; i < st->n_commands; i++)
        if (!strcmp (st->commands[i].name, name))
            return &st->commands[i];
    return NULL;
}

static bool
s_knows (kf_backend_t *self, const char *model)
{
    return s_find (self->state, model) != NULL;
}

//  The job's settings for the program, as shell assignments of values we
//  formatted ourselves (numbers, and a language that is letters only).
static char *
s_env_line (const kf_gen_request_t *req)
{
    char lang[16] = "c";
    size_t i = 0;
    for (const char *p = req->language ? req->language : "c"; *p && i < sizeof lang - 1; p++)
        if ((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9'))
            lang[i++] = *p;
    lang[i] = 0;
    return kf_strdupf ("KF_LANGUAGE=%s KF_MAX_TOKENS=%d KF_TEMPERATURE=%g KF_TOP_P=%g", lang,
                       req->max_tokens, req->temperature, req->top_p);
}

static int
s_start (kf_backend_t *self, const kf_gen_request_t *req, kf_gen_done_fn *done, void *arg,
         char **err)
{
    s_state_t *st = self->state;
    s_command_t *cmd = s_find (st, req->model);
    if (!cmd)
        return kf_fail (err, "command: no command named '%s' (models_file: command_%s = ...)",
                        req->model, req->model);
    s_run_t *run = calloc (1, sizeof *run);
    if (!run)
        return kf_fail (err, "command: out of memory");
    run->st = st;
    run->argv = cmd->argv;
    run->done = done;
    run->arg = arg;
    run->reply.retry_after_ms = -1;
    run->input = kf_strdupf ("%s\n\n%s\n", req->system ? req->system : "",
                             req->prompt ? req->prompt : "");
    run->env_line = s_env_line (req);
    if (!run->input || !run->env_line
        || pthread_create (&run->thread, NULL, s_run_main, run) != 0) {
        free (run->input);
        free (run->env_line);
        free (run);
        return kf_fail (err, "command: cannot start a thread");
    }
    run->next = st->runs;
    st->runs = run;
    return 0;
}

static int
s_prepare (kf_backend_t *self, zmq_pollitem_t *items, int max)
{
    s_state_t *st = self->state;
    if (!st->runs)
        return 0;
    if (max >= 1)
        items[0] = (zmq_pollitem_t) { NULL, st->pipe[0], ZMQ_POLLIN, 0 };
    return 1;
}

static void
s_finish (s_state_t *st, s_run_t *run)
{
    pthread_join (run->thread, NULL);
    for (s_run_t **p = &st->runs; *p; p = &(*p)->next)
        if (*p == run) {
            *p = run->next;
            break;
        }
    run->done (run->arg, &run->reply);
    kf_gen_reply_clear (&run->reply);
    free (run->input);
    free (run->env_line);
    free (run);
}

static void
s_dispatch (kf_backend_t *self, zmq_pollitem_t *items, int n)
{
    s_state_t *st = self->state;
    if (n < 1 || !(items[0].revents & ZMQ_POLLIN))
        return;
    s_run_t *run;
    while (read (st->pipe[0], &run, sizeof run) == (ssize_t) sizeof run)
        s_finish (st, run);
}

static void
s_destroy (kf_backend_t *self)
{
    s_state_t *st = self->state;
    //  Each thread ends within its time limit; wait for them, so none
    //  writes to a closed pipe or a freed record.
    if (st->runs) {
        int flags = fcntl (st->pipe[0], F_GETFL);
        fcntl (st->pipe[0], F_SETFL, flags & ~O_NONBLOCK);
    }
    while (st->runs) {
        s_run_t *run;
        if (read (st->pipe[0], &run, sizeof run) != (ssize_t) sizeof run)
            break;
        kf_gen_reply_clear (&run->reply);
        run->reply.outcome = KF_GEN_FAIL;
        run->reply.error = strdup ("the gateway is stopping");
        s_finish (st, run);
    }
    for (int i = 0; i < st->n_commands; i++) {
        free (st->commands[i].name);
        for (char **a = st->commands[i].argv; a && *a; a++)
            free (*a);
        free (st->commands[i].argv);
    }
    free (st->commands);
    close (st->pipe[0]);
    close (st->pipe[1]);
    free (st);
    free (self);
}

kf_backend_t *
kf_backend_command_new (const kf_command_backend_config_t *config)
{
    kf_backend_t *self = calloc (1, sizeof *self);
    s_state_t *st = calloc (1, sizeof *st);
    if (!self || !st || pipe2 (st->pipe, O_CLOEXEC) != 0) {
        free (self);
        free (st);
        return NULL;
    }
    fcntl (st->pipe[0], F_SETFL, fcntl (st->pipe[0], F_GETFL) | O_NONBLOCK);
    st->time_limit_s = config->time_limit_s > 0 ? config->time_limit_s : 300;
    st->output_cap = config->output_cap ? config->output_cap : (1u << 20);
    st->commands = calloc ((size_t) config->n + 1, sizeof *st->commands);
    for (int i = 0; st->commands && i < config->n; i++) {
        char **argv = s_split (config->command_lines[i]);
        if (!argv || !argv[0]) {
            kf_warn ("command_%s: empty command line, ignored", config->names[i]);
            free (argv);
            continue;
        }
        st->commands[st->n_commands].name = strdup (config->names[i]);
        st->commands[st->n_commands].argv = argv;
        st->n_commands++;
    }
    self->name = "command";
    self->start = s_start;
    self->prepare = s_prepare;
    self->dispatch = s_dispatch;
    self->destroy = s_destroy;
    self->knows = s_knows;
    self->state = st;
    return self;
}
