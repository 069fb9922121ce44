/*  kf_backend_http.c - what the HTTP model backends share: one attempt,
 *  one POST; the answer classified, parsed and read by the vendor's
 *  function (kf_backend_http.h). The vendors' files (OpenAI-compatible,
 *  Anthropic) hold only their bodies, headers and readers.
 */
#include "kf_backend_http.h"
#include "kf_str.h"

#include <curl/curl.h>
#include <stdlib.h>
#include <string.h>

//  A reply's body in an error is cut, and control characters made spaces,
//  so one bad response cannot flood a log line or a database row.
#define KF_BODY_TRIM 300

typedef struct {
    const kf_http_vendor_t *vendor;
    kf_http_t *http;             /* shared with the other HTTP backends */
    char *url;
    char *headers[KF_HTTP_HEADERS_MAX + 1];   /* NULL-ended; may hold a key */
} s_http_t;

typedef struct {
    const kf_http_vendor_t *vendor;
    kf_gen_done_fn *done;
    void *arg;
} s_attempt_t;

static char *
s_trim_body (const char *body, size_t len)
{
    if (!body || !len)
        return strdup ("(empty body)");
    size_t n = len < KF_BODY_TRIM ? len : KF_BODY_TRIM;
    char *out = malloc (n + 4);
    if (!out)
        return NULL;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char) body[i];
        out[i] = c < 0x20 || c == 0x7f ? ' ' : (char) c;
    }
    strcpy (out + n, len > n ? "..." : "");
    return out;
}

//  The reply for a transport failure or a non-2xx status, classified for
//  retry (429, 5xx, timeouts and connection errors are worth another
//  attempt; other 4xx are not). Returns true when RESP was such a failure
//  and REPLY is filled.
static bool
s_http_failure (const kf_http_response_t *resp, kf_gen_reply_t *reply)
{
    reply->status = resp->status;
    reply->retry_after_ms = resp->retry_after_ms;
    reply->timed_out = resp->timed_out;
    if (resp->aborted) {
        reply->outcome = KF_GEN_FAIL;
        reply->error = strdup ("the gateway is stopping");
        return true;
    }
    if (resp->curl_code != CURLE_OK) {
        //  Timeouts, refused or reset connections, a body cut short: the
        //  network's failures, all worth another attempt. A response too
        //  big for our cap (a write error) is not.
        reply->outcome = resp->curl_code == CURLE_WRITE_ERROR ? KF_GEN_FAIL : KF_GEN_RETRY;
        reply->error = kf_strdupf ("%s%s", resp->timed_out ? "timeout: " : "",
                                   resp->error ? resp->error : "transfer failed");
        return true;
    }
    if (resp->status >= 200 && resp->status < 300)
        return false;
    char *body = s_trim_body (resp->body, resp->body_len);
    reply->outcome = resp->status == 429 || resp->status >= 500 ? KF_GEN_RETRY : KF_GEN_FAIL;
    reply->error = kf_strdupf ("HTTP %ld: %s", resp->status, body ? body : "");
    free (body);
    return true;
}

static void
s_on_response (void *arg, const kf_http_response_t *resp)
{
    s_attempt_t *at = arg;
    kf_gen_reply_t reply = { .retry_after_ms = -1 };
    if (!s_http_failure (resp, &reply)) {
        reply.status = resp->status;
        json_error_t jerr;
        json_t *root = resp->body ? json_loadb (resp->body, resp->body_len, 0, &jerr) : NULL;
        const char *not_answer = at->vendor->read (root, &reply);
        if (not_answer) {
            //  A 200 that is not an answer comes from a proxy cut short
            //  or confused; another attempt usually gets through.
            reply.outcome = KF_GEN_RETRY;
            reply.error = kf_strdupf ("malformed response: %s", not_answer);
        }
        else
            reply.outcome = KF_GEN_OK;
        json_decref (root);
    }
    at->done (at->arg, &reply);
    kf_gen_reply_clear (&reply);
    free (at);
}

static int
s_start (kf_backend_t *self, const kf_gen_request_t *req, kf_gen_done_fn *done, void *arg,
         char **err)
{
    s_http_t *st = self->state;
    const char *name = st->vendor->name;
    json_t *body = st->vendor->body (req);
    if (!body)
        return kf_fail (err, "%s: cannot build the request (is the prompt valid UTF-8?)", name);
    char *text = json_dumps (body, JSON_COMPACT);
    json_decref (body);
    s_attempt_t *at = calloc (1, sizeof *at);
    if (!text || !at) {
        free (text);
        free (at);
        return kf_fail (err, "%s: out of memory", name);
    }
    at->vendor = st->vendor;
    at->done = done;
    at->arg = arg;
    int rc = kf_http_post (st->http, st->url, st->headers[0] ? (const char *const *) st->headers
                                                              : NULL,
                           text, strlen (text), s_on_response, at);
    free (text);
    if (rc) {
        free (at);
        return kf_fail (err, "%s: cannot queue the request", name);
    }
    return 0;
}

static void
s_destroy (kf_backend_t *self)
{
    s_http_t *st = self->state;
    free (st->url);
    for (int i = 0; st->headers[i]; i++)
        kf_http_secret_free (st->headers[i]);
    free (st);
    free (self);
}

kf_backend_t *
kf_backend_http_new (const kf_http_vendor_t *vendor, kf_http_t *http, char *url,
                     char **headers, int n_headers)
{
    kf_backend_t *self = calloc (1, sizeof *self);
    s_http_t *st = calloc (1, sizeof *st);
    if (!self || !st || !url || n_headers > KF_HTTP_HEADERS_MAX) {
        free (self);
        free (st);
        free (url);
        for (int i = 0; i < n_headers; i++)
            kf_http_secret_free (headers[i]);
        return NULL;
    }
    st->vendor = vendor;
    st->http = http;
    st->url = url;
    for (int i = 0, n = 0; i < n_headers; i++)
        if (headers[i])
            st->headers[n++] = headers[i];
    self->name = vendor->name;
    self->start = s_start;
    self->destroy = s_destroy;
    self->state = st;
    return self;
}
