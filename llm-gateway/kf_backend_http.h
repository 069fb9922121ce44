/*  kf_backend_http.h - the request and response plumbing the HTTP model
 *  backends share (kf_backend_http.c).
 *
 *  An attempt is one POST of a JSON body through the gateway's curl
 *  engine. What a vendor's file says is only what differs: how its body
 *  is built from a request, which headers go with it, and how its answer
 *  reads. Queuing the POST, classifying failures for retry (429, 5xx,
 *  timeouts, connection errors), parsing the JSON, a 2xx that is not an
 *  answer, the done call and freeing header lines that hold a key are
 *  here, once. A new HTTP backend is one file with these two functions.
 */
#ifndef KF_BACKEND_HTTP_H
#define KF_BACKEND_HTTP_H

#include "kf_backend.h"

typedef struct {
    const char *name;            /* "openai": the backend's name, and the
                                    start of its error messages */
    /* REQ as the vendor's request body (a new reference), or NULL when it
     * cannot be built (a prompt that is not UTF-8). */
    json_t *(*body) (const kf_gen_request_t *req);
    /* Reads a 2xx answer, ROOT (NULL when the body was not JSON), into
     * REPLY: text, finish_reason, truncated and the token counts. Returns
     * NULL, or what ROOT is not ("not a message", a static string) when it
     * is no answer: such an attempt is worth retrying. */
    const char *(*read) (json_t *root, kf_gen_reply_t *reply);
} kf_http_vendor_t;

#define KF_HTTP_HEADERS_MAX 4

/* A backend that posts VENDOR's bodies to URL through HTTP, sending
 * HEADERS[0..N_HEADERS) ("Name: value"; a NULL one is skipped). URL and
 * the headers are taken, also on failure; headers are freed as secrets.
 * Returns NULL when out of memory. */
kf_backend_t *kf_backend_http_new (const kf_http_vendor_t *vendor, kf_http_t *http, char *url,
                                   char **headers, int n_headers);

#endif
