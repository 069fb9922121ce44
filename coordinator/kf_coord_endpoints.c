/*  kf_coord_endpoints.c - the coordinator's sockets: binding with CURVE
 *  where the endpoint needs it, sending and answering, publishing events,
 *  and reading each socket's waiting messages, bounded while they are
 *  received, into the worker and client handlers.
 */
#include "kf_coord_internal.h"
#include "kf_curve.h"
#include "kf_log.h"
#include <string.h>

/* CURVE on every tcp:// endpoint when we have a certificate; without one,
 * tcp:// beyond loopback only when the operator allowed it. */
static int
s_secure (kf_coord_t *self, zsock_t *sock, const char *endpoint)
{
    kf_scope_t scope = kf_curve_scope (endpoint);
    if (scope == KF_SCOPE_LOCAL)
        return 0;
    if (self->auth) {
        kf_auth_secure (self->auth, sock);
        return 0;
    }
    if (scope == KF_SCOPE_REMOTE && !self->cfg.allow_plain_tcp) {
        kf_error ("refusing to serve %s without CURVE: give curve_cert and"
                  " curve_allow_dir, or allow_plain_tcp to send in the clear", endpoint);
        return -1;
    }
    if (scope == KF_SCOPE_REMOTE)
        kf_warn ("serving %s as PLAIN TCP: anyone who can reach it can read and"
                 " send everything (allow_plain_tcp)", endpoint);
    return 0;
}

int
kf_coord_bind (kf_coord_t *self, zsock_t **sock, int type, const char *endpoint,
               size_t max_message)
{
    *sock = zsock_new (type);
    if (!*sock)
        return -1;
    if (s_secure (self, *sock, endpoint))
        return -1;
    zsock_set_linger (*sock, 0);
    zsock_set_rcvtimeo (*sock, 0);
    if (type != ZMQ_PUB)
        /* Past twice the cap the connection is dropped without reading;
         * between the cap and that, the codec answers "oversized". */
        zsock_set_maxmsgsize (*sock, (int64_t) max_message * 2);
    if (zsock_bind (*sock, "%s", endpoint) < 0) {
        kf_error ("cannot bind %s: %s", endpoint, zmq_strerror (zmq_errno ()));
        return -1;
    }
    return 0;
}

void
kf_coord_send (kf_coord_t *self, zsock_t *sock, zframe_t *route, const char *type,
               json_t *body)
{
    kf_msg_t *msg = kf_msg_new (type, body);
    if (msg && kf_msg_send (&msg, sock, route, NULL) == 0)
        self->counters[KF_COORD_SENT]++;
}

void
kf_coord_reply_error (kf_coord_t *self, zsock_t *sock, zframe_t *route, const char *code,
                      const char *reason)
{
    kf_coord_send (self, sock, route, "ERROR",
                   json_pack ("{s:s, s:s}", "code", code, "reason", reason));
}

void
kf_coord_reply_missing (kf_coord_t *self, zsock_t *sock, zframe_t *route, bool failed,
                        const char *why)
{
    kf_coord_reply_error (self, sock, route, failed ? "unavailable" : "not-found",
                          failed ? "database unavailable" : why);
}

void
kf_coord_publish_events (kf_coord_t *self)
{
    size_t i;
    json_t *ev;
    json_array_foreach (self->search.events, i, ev) {
        kf_msg_t *msg = kf_msg_new ("EVENT", json_incref (json_object_get (ev, "body")));
        kf_msg_send (&msg, self->events, NULL,
                     json_string_value (json_object_get (ev, "topic")));
    }
    json_array_clear (self->search.events);
}

void
kf_coord_truncate_events (kf_coord_t *self, size_t keep)
{
    while (json_array_size (self->search.events) > keep)
        json_array_remove (self->search.events, json_array_size (self->search.events) - 1);
}

/* Reads every waiting message from SOCK, up to the batch size. */
void
kf_coord_drain (kf_coord_t *self, zsock_t *sock, kf_endpoint_t ep)
{
    for (int i = 0; i < self->cfg.batch; i++) {
        /* Bounded while it is read (kf_proto_recv_bounded): frames past
         * the count or size cap are let go as they come. */
        zmsg_t *zmsg = NULL;
        const char *reason = "";
        kf_proto_rc_t rc = kf_proto_recv_bounded (sock, 1, self->cfg.max_message, &zmsg,
                                                  &reason);
        if (rc == KF_PROTO_NOMSG)
            break;
        self->counters[KF_COORD_RECEIVED]++;
        zframe_t *route = NULL;
        kf_msg_t *msg = NULL;
        /* An ERROR is never answered with an ERROR, even a malformed one. */
        bool is_error = false;
        if (zmsg && zmsg_size (zmsg) >= 3) {
            zmsg_first (zmsg);                 /* routing id */
            zmsg_next (zmsg);                  /* signature */
            zframe_t *type = zmsg_next (zmsg);
            is_error = type && zframe_streq (type, "ERROR");
        }
        if (rc == KF_PROTO_OK)
            rc = kf_msg_decode (&zmsg, ep, self->cfg.max_message, true, false, &route, &msg,
                                &reason);
        else {
            route = zmsg_pop (zmsg);
            zmsg_destroy (&zmsg);
        }
        if (rc != KF_PROTO_OK) {
            self->errors[rc]++;
            if (route && !is_error)
                kf_coord_reply_error (self, sock, route, kf_proto_rc_name (rc), reason);
        }
        else if (ep == KF_EP_WORKER_IN)
            kf_coord_on_worker_message (self, route, &msg);
        else
            kf_coord_on_client_message (self, sock, route, msg);
        kf_msg_destroy (&msg);
        zframe_destroy (&route);
    }
}
