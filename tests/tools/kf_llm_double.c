/*  kf_llm_double - an OpenAI-compatible and Anthropic-compatible test
 *  double: a small HTTP/1.1 server on loopback that answers
 *  POST .../chat/completions in OpenAI's shape and POST .../messages in
 *  Anthropic's, for the gateway's tests and benchmark. Plain sockets and
 *  poll, one thread, keep-alive, no dependency beyond jansson.
 *
 *  What it does is chosen by a directive in the user prompt,
 *  "[[double key=value ...]]":
 *
 *    id=NAME          counts attempts per NAME (default: the whole directive)
 *    fail=CODE        answer CODE (429, 500, 400, ...) ...
 *    times=N          ... for the first N attempts of this id (default 1;
 *                     also applies to stall, malformed, truncated)
 *    retry-after=S    with a Retry-After header of S seconds
 *    stall=MS         hold the answer for MS ms (past a client timeout)
 *    malformed        200 with a body that is not JSON
 *    truncated        a Content-Length larger than the body, then close
 *    reply=KIND       blocks | nocode | empty | bare | length
 *    lang=L           the tag of the answer's code block (default c)
 *    echo-key         401 with the key it got in the body
 *
 *  With --openai-key/--anthropic-key (or KF_DOUBLE_OPENAI_KEY /
 *  KF_DOUBLE_ANTHROPIC_KEY) it checks the key and answers 401 with the
 *  key it got in the body, as some vendors do, so tests can prove the
 *  gateway redacts it. Each request is logged as one line to --log:
 *  "T_MS ROUTE ID ATTEMPT STATUS" (T_MS monotonic).
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <jansson.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define MAX_CONNS 2048

typedef struct {
    int fd;
    char *in;
    size_t in_len, in_cap;
    char *out;
    size_t out_len, out_off;
    int64_t due_ms;              /* a stalled answer goes out then; 0 none */
    char *held;                  /* the stalled answer */
    size_t held_len;
    bool close_after;
} s_conn_t;

typedef struct {
    char *id;
    int count;
} s_counter_t;

static s_conn_t *s_conns[MAX_CONNS];
static int s_n_conns;
static s_counter_t *s_counters;
static int s_n_counters;
static FILE *s_log;
static const char *s_openai_key, *s_anthropic_key;
static volatile sig_atomic_t s_stop;

static int64_t
s_now_ms (void)
{
    struct timespec ts;
    clock_gettime (CLOCK_MONOTONIC, &ts);
    return (int64_t) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void
s_on_signal (int sig)
{
    (void) sig;
    s_stop = 1;
}

static int
s_count (const char *id)
{
    for (int i = 0; i < s_n_counters; i++)
        if (!strcmp (s_counters[i].id, id))
            return ++s_counters[i].count;
    s_counter_t *grown = realloc (s_counters, sizeof *grown * (size_t) (s_n_counters + 1));
    if (!grown)
        return 1;
    s_counters = grown;
    s_counters[s_n_counters].id = strdup (id);
    s_counters[s_n_counters].count = 1;
    s_n_counters++;
    return 1;
}

//  Reads "key=value" (or a bare "key") from the directive text D.
static bool
s_directive (const char *d, const char *key, char *value, size_t size)
{
    size_t klen = strlen (key);
    for (const char *p = d; p && *p; ) {
        while (*p == ' ')
            p++;
        if (!strncmp (p, key, klen) && (p[klen] == '=' || p[klen] == ' ' || p[klen] == ']'
                                        || p[klen] == 0)) {
            value[0] = 0;
            if (p[klen] == '=') {
                size_t n = strcspn (p + klen + 1, " ]");
                n = n < size - 1 ? n : size - 1;
                memcpy (value, p + klen + 1, n);
                value[n] = 0;
            }
            return true;
        }
        p = strchr (p, ' ');
    }
    return false;
}

static void
s_append (s_conn_t *c, const char *data, size_t len)
{
    if (c->out_len + len > 0) {
        char *grown = realloc (c->out, c->out_len + len + 1);
        if (!grown)
            return;
        c->out = grown;
    }
    memcpy (c->out + c->out_len, data, len);
    c->out_len += len;
}

static char *
s_response (int status, const char *extra_headers, const char *body, long content_length,
            size_t *len)
{
    const char *reason = status == 200 ? "OK" : status == 400 ? "Bad Request"
                         : status == 401 ? "Unauthorized" : status == 404 ? "Not Found"
                         : status == 429 ? "Too Many Requests" : "Error";
    size_t blen = strlen (body);
    char *buf = NULL;
    int n = asprintf (&buf, "HTTP/1.1 %d %s\r\nContent-Type: application/json\r\n"
                            "Content-Length: %ld\r\n%s\r\n%s",
                      status, reason, content_length >= 0 ? content_length : (long) blen,
                      extra_headers ? extra_headers : "", body);
    *len = n > 0 ? (size_t) n : 0;
    return n > 0 ? buf : NULL;
}

static const char *s_kernel =
    "#include \"kf_kernel.h\"\n"
    "\n"
    "int\n"
    "kf_forward (const kf_tensor_t *in, int n_in, kf_tensor_t *out, int n_out,\n"
    "            const kf_ctx_t *ctx)\n"
    "{\n"
    "    (void) in; (void) n_in; (void) out; (void) n_out; (void) ctx;\n"
    "    return 0;\n"
    "}\n";

//  The completion text for KIND.
static char *
s_completion (const char *kind, const char *lang)
{
    char *t = NULL;
    int rc;
    if (!strcmp (kind, "nocode"))
        rc = asprintf (&t, "I would rather explain: use shared memory and warp shuffles.");
    else if (!strcmp (kind, "empty"))
        rc = asprintf (&t, "%s", "");
    else if (!strcmp (kind, "bare"))
        rc = asprintf (&t, "Here it is without fences:\n%s", s_kernel);
    else if (!strcmp (kind, "length"))
        rc = asprintf (&t, "```%s\n#include \"kf_kernel.h\"\nint kf_forward (const", lang);
    else if (!strcmp (kind, "blocks"))
        rc = asprintf (&t, "First the idea:\n```python\nimport torch\nprint(1)\n```\n"
                           "A sketch:\n```%s\n// kf_sketch only\n```\nThe kernel:\n```%s\n%s```\n"
                           "Build it:\n```bash\nnvcc -shared k.cu\n```\n", lang, lang, s_kernel);
    else
        rc = asprintf (&t, "Here is the kernel.\n\n```%s\n%s```\n\nIt should be fast.", lang,
                       s_kernel);
    return rc >= 0 ? t : NULL;
}

//  Answers one complete request of C: METHOD PATH, AUTH, BODY.
static void
s_handle (s_conn_t *c, const char *path, const char *auth, const char *api_key,
          const char *body, size_t body_len)
{
    bool openai = strstr (path, "/chat/completions") != NULL;
    bool anthropic = !openai && strstr (path, "/messages") != NULL;
    const char *route = openai ? "openai" : anthropic ? "anthropic" : "none";
    size_t len = 0;
    char *resp = NULL;
    int status = 200;
    char id[128] = "-";
    int attempt = 0;
    json_t *req = NULL;
    if (!openai && !anthropic) {
        status = 404;
        resp = s_response (404, NULL, "{\"error\":\"no such route\"}", -1, &len);
        goto out;
    }
    //  Key check: the double echoes what it got, as a careless vendor
    //  error message might.
    const char *want = openai ? s_openai_key : s_anthropic_key;
    const char *got = openai ? (auth && !strncasecmp (auth, "Bearer ", 7) ? auth + 7 : NULL)
                             : api_key;
    //  "echo-key" in the body plays a vendor refusing a key it got.
    bool echo = body_len && memmem (body, body_len, "echo-key", 8) != NULL;
    if (echo || (want && (!got || strcmp (want, got)))) {
        status = 401;
        char *b = NULL;
        if (asprintf (&b, "{\"error\":{\"message\":\"Incorrect API key provided: %s\"}}",
                      got ? got : "(none)") < 0)
            b = NULL;
        resp = s_response (401, NULL, b ? b : "{}", -1, &len);
        free (b);
        goto out;
    }
    json_error_t jerr;
    req = json_loadb (body, body_len, 0, &jerr);
    json_t *messages = json_object_get (req, "messages");
    const char *prompt = json_string_value (json_object_get (
        json_array_get (messages, json_array_size (messages) - 1), "content"));
    if (!prompt) {
        status = 400;
        resp = s_response (400, NULL, "{\"error\":{\"message\":\"no user message\"}}", -1, &len);
        goto out;
    }
    const char *model = json_string_value (json_object_get (req, "model"));
    char d[512] = "";
    const char *dstart = strstr (prompt, "[[double");
    if (dstart) {
        const char *dend = strstr (dstart, "]]");
        size_t n = dend ? (size_t) (dend - dstart - 8) : strlen (dstart + 8);
        n = n < sizeof d - 1 ? n : sizeof d - 1;
        memcpy (d, dstart + 8, n);
        d[n] = 0;
    }
    char v[128];
    if (!s_directive (d, "id", id, sizeof id))
        snprintf (id, sizeof id, "%s", dstart ? "anon" : "-");
    attempt = dstart ? s_count (id) : 0;
    int times = s_directive (d, "times", v, sizeof v) ? atoi (v) : 1;
    bool hit = attempt <= times;
    char lang[32] = "c";
    s_directive (d, "lang", lang, sizeof lang);
    if (hit && s_directive (d, "fail", v, sizeof v)) {
        status = atoi (v);
        char hdr[64] = "";
        char ra[32];
        if (s_directive (d, "retry-after", ra, sizeof ra))
            snprintf (hdr, sizeof hdr, "Retry-After: %s\r\n", ra);
        char b[128];
        snprintf (b, sizeof b, "{\"error\":{\"message\":\"simulated %d\"}}", status);
        resp = s_response (status, hdr, b, -1, &len);
        goto out;
    }
    if (hit && s_directive (d, "malformed", v, sizeof v)) {
        resp = s_response (200, NULL, "{\"choices\": [ this is not json", -1, &len);
        goto out;
    }
    if (hit && s_directive (d, "truncated", v, sizeof v)) {
        resp = s_response (200, NULL, "{\"choices\": [{\"mess", 4000, &len);
        c->close_after = true;
        goto out;
    }
    char kind[32] = "";
    s_directive (d, "reply", kind, sizeof kind);
    char *text = s_completion (kind, lang);
    bool cut = !strcmp (kind, "length");
    //  Anthropic counts cache reads apart from input_tokens; OpenAI counts
    //  them inside prompt_tokens. Half the prompt is "cached" here.
    int64_t in_tokens = (int64_t) strlen (prompt) / 4 + 1;
    json_t *answer;
    if (openai)
        answer = json_pack ("{s:s, s:s, s:s, s:[{s:i, s:{s:s, s:s}, s:s}], "
                            "s:{s:I, s:i, s:I, s:{s:i}}}",
                            "id", "chatcmpl-double", "object", "chat.completion", "model",
                            model ? model : "?", "choices", "index", 0, "message", "role",
                            "assistant", "content", text ? text : "", "finish_reason",
                            cut ? "length" : "stop", "usage", "prompt_tokens",
                            (json_int_t) in_tokens, "completion_tokens", 100, "total_tokens",
                            (json_int_t) in_tokens + 100, "prompt_tokens_details",
                            "cached_tokens", (int) (in_tokens / 2));
    else
        answer = json_pack ("{s:s, s:s, s:s, s:s, s:[{s:s, s:s}], s:s, s:{s:I, s:i, s:i, s:i}}",
                            "id", "msg_double", "type", "message", "role", "assistant",
                            "model", model ? model : "?", "content", "type", "text", "text",
                            text ? text : "", "stop_reason", cut ? "max_tokens" : "end_turn",
                            "usage", "input_tokens", (json_int_t) in_tokens, "output_tokens",
                            100, "cache_read_input_tokens", (json_int_t) in_tokens / 2,
                            "cache_creation_input_tokens", 0);
    free (text);
    char *b = json_dumps (answer, JSON_COMPACT);
    json_decref (answer);
    resp = s_response (200, NULL, b ? b : "{}", -1, &len);
    free (b);
    if (hit && s_directive (d, "stall", v, sizeof v)) {
        c->held = resp;
        c->held_len = len;
        c->due_ms = s_now_ms () + atol (v);
        resp = NULL;
    }
out:
    if (s_log) {
        fprintf (s_log, "%lld %s %s %d %d\n", (long long) s_now_ms (), route, id, attempt, status);
        fflush (s_log);
    }
    if (resp)
        s_append (c, resp, len);
    free (resp);
    json_decref (req);
}

//  Parses as many complete requests as C's input holds.
static void
s_parse (s_conn_t *c)
{
    while (c->in_len && !c->held) {
        c->in[c->in_len] = 0;
        char *end = strstr (c->in, "\r\n\r\n");
        if (!end)
            return;
        size_t head_len = (size_t) (end - c->in) + 4;
        long clen = 0;
        char path[512] = "", auth[512] = "", key[512] = "";
        char *line = c->in;
        bool first = true;
        while (line < end) {
            char *eol = strstr (line, "\r\n");
            *eol = 0;
            if (first) {
                sscanf (line, "%*s %511s", path);
                first = false;
            }
            else if (!strncasecmp (line, "content-length:", 15))
                clen = atol (line + 15);
            else if (!strncasecmp (line, "authorization:", 14))
                sscanf (line + 14, " %511[^\r\n]", auth);
            else if (!strncasecmp (line, "x-api-key:", 10))
                sscanf (line + 10, " %511s", key);
            line = eol + 2;
        }
        if (c->in_len < head_len + (size_t) clen) {
            //  Undo the NULs we wrote, so the next pass parses afresh.
            for (char *p = c->in; p < end; p++)
                if (!*p)
                    *p = '\r';
            return;
        }
        s_handle (c, path, auth[0] ? auth : NULL, key[0] ? key : NULL, c->in + head_len,
                  (size_t) clen);
        memmove (c->in, c->in + head_len + clen, c->in_len - head_len - (size_t) clen);
        c->in_len -= head_len + (size_t) clen;
    }
}

static void
s_close (int i)
{
    s_conn_t *c = s_conns[i];
    close (c->fd);
    free (c->in);
    free (c->out);
    free (c->held);
    free (c);
    s_conns[i] = s_conns[--s_n_conns];
}

int
main (int argc, char **argv)
{
    int port = 0;
    const char *log_path = NULL;
    s_openai_key = getenv ("KF_DOUBLE_OPENAI_KEY");
    s_anthropic_key = getenv ("KF_DOUBLE_ANTHROPIC_KEY");
    static struct option opts[] = { { "port", 1, 0, 'p' }, { "log", 1, 0, 'l' },
                                    { "openai-key", 1, 0, 'o' }, { "anthropic-key", 1, 0, 'a' },
                                    { "help", 0, 0, 'h' }, { 0, 0, 0, 0 } };
    int o;
    while ((o = getopt_long (argc, argv, "", opts, NULL)) != -1) {
        switch (o) {
        case 'p': port = atoi (optarg); break;
        case 'l': log_path = optarg; break;
        case 'o': s_openai_key = optarg; break;
        case 'a': s_anthropic_key = optarg; break;
        default:
            printf ("usage: kf_llm_double [--port N] [--log FILE] [--openai-key K] "
                    "[--anthropic-key K]\nOpenAI- and Anthropic-compatible test double "
                    "(see the file header for the prompt directives).\n");
            return o == 'h' ? 0 : 2;
        }
    }
    signal (SIGPIPE, SIG_IGN);
    signal (SIGTERM, s_on_signal);
    signal (SIGINT, s_on_signal);
    if (log_path && !(s_log = fopen (log_path, "a"))) {
        perror (log_path);
        return 1;
    }
    int lfd = socket (AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    int one = 1;
    setsockopt (lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    struct sockaddr_in addr = { .sin_family = AF_INET, .sin_port = htons ((uint16_t) port),
                                .sin_addr.s_addr = htonl (INADDR_LOOPBACK) };
    if (bind (lfd, (struct sockaddr *) &addr, sizeof addr) || listen (lfd, 512)) {
        perror ("kf_llm_double: bind");
        return 1;
    }
    socklen_t alen = sizeof addr;
    getsockname (lfd, (struct sockaddr *) &addr, &alen);
    printf ("port %d\n", ntohs (addr.sin_port));
    fflush (stdout);

    static struct pollfd pfds[MAX_CONNS + 1];
    while (!s_stop) {
        int64_t now = s_now_ms ();
        int timeout = 1000;
        pfds[0] = (struct pollfd) { lfd, POLLIN, 0 };
        for (int i = 0; i < s_n_conns; i++) {
            s_conn_t *c = s_conns[i];
            if (c->held && c->due_ms <= now) {
                s_append (c, c->held, c->held_len);
                free (c->held);
                c->held = NULL;
                s_parse (c);
            }
            if (c->held && c->due_ms - now < timeout)
                timeout = (int) (c->due_ms - now);
            short ev = POLLIN;
            if (c->out_off < c->out_len)
                ev |= POLLOUT;
            pfds[i + 1] = (struct pollfd) { c->fd, ev, 0 };
        }
        int n = poll (pfds, (nfds_t) s_n_conns + 1, timeout < 0 ? 0 : timeout);
        if (n < 0)
            continue;
        if (pfds[0].revents & POLLIN) {
            int fd;
            while ((fd = accept4 (lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC)) >= 0) {
                if (s_n_conns == MAX_CONNS) {
                    close (fd);
                    continue;
                }
                setsockopt (fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
                s_conn_t *c = calloc (1, sizeof *c);
                c->fd = fd;
                s_conns[s_n_conns++] = c;
            }
        }
        //  Walk backwards: s_close moves the last connection into i.
        int polled = s_n_conns;
        for (int i = polled - 1; i >= 0; i--) {
            s_conn_t *c = s_conns[i];
            if (c->fd != pfds[i + 1].fd)
                continue;    //  a connection accepted in this pass
            short re = pfds[i + 1].revents;
            bool dead = false;
            if (re & POLLIN) {
                if (c->in_cap - c->in_len < 65536 + 1) {
                    size_t cap = c->in_cap ? c->in_cap * 2 : 131072;
                    char *g = realloc (c->in, cap);
                    if (g) {
                        c->in = g;
                        c->in_cap = cap;
                    }
                }
                ssize_t r = read (c->fd, c->in + c->in_len, c->in_cap - c->in_len - 1);
                if (r > 0) {
                    c->in_len += (size_t) r;
                    s_parse (c);
                }
                else if (r == 0 || (errno != EAGAIN && errno != EINTR))
                    dead = true;
            }
            else if (re & (POLLERR | POLLHUP))
                dead = true;
            if (!dead && c->out_off < c->out_len) {
                ssize_t w = write (c->fd, c->out + c->out_off, c->out_len - c->out_off);
                if (w > 0)
                    c->out_off += (size_t) w;
                else if (w < 0 && errno != EAGAIN && errno != EINTR)
                    dead = true;
                if (c->out_off == c->out_len) {
                    c->out_off = c->out_len = 0;
                    if (c->close_after)
                        dead = true;
                }
            }
            if (dead)
                s_close (i);
        }
    }
    while (s_n_conns)
        s_close (s_n_conns - 1);
    for (int i = 0; i < s_n_counters; i++)
        free (s_counters[i].id);
    free (s_counters);
    close (lfd);
    if (s_log)
        fclose (s_log);
    return 0;
}
