/*  test_peer_modules.c - the coordinator's defences against its peers, module by
 *  module (issue 13, items 5-7): text[] literals no element can break
 *  (kf_pgarray), lease tokens and the lease book (kf_lease), RESULTs held
 *  by bytes (kf_inbox), and the bounded receive of the codec: a message
 *  of thousands of frames, or of many frames adding up past the cap, is
 *  refused while it is read, with the routing id kept to answer. */
#include "../kf_test.h"
#include "../../coordinator/kf_inbox.h"
#include "../../coordinator/kf_lease.h"
#include "../../coordinator/kf_pgarray.h"
#include "kf_proto.h"
#include <string.h>

int
main (void)
{
    CHECK (kf_pgarray_test (false) == 0);
    CHECK (kf_lease_test (false) == 0);
    CHECK (kf_inbox_test (false) == 0);

    zsock_t *server = zsock_new_router ("inproc://peers-test");
    zsock_t *client = zsock_new_dealer ("inproc://peers-test");
    const char sig[3] = { 'K', 'F', KF_PROTO_VERSION };
    /* 1. Ten thousand frames in one message. */
    zmsg_t *m = zmsg_new ();
    zmsg_addmem (m, sig, 3);
    zmsg_addstr (m, "HEARTBEAT");
    zmsg_addstr (m, "{}");
    for (int i = 0; i < 10000; i++)
        zmsg_addmem (m, "x", 1);
    CHECK (zmsg_send (&m, client) == 0);
    /* 2. Sixteen frames of 100 KiB: each under the cap, together over. */
    static char chunk[100 * 1024];
    m = zmsg_new ();
    zmsg_addmem (m, sig, 3);
    zmsg_addstr (m, "HEARTBEAT");
    zmsg_addstr (m, "{}");
    for (int i = 0; i < 16; i++)
        zmsg_addmem (m, chunk, sizeof chunk);
    CHECK (zmsg_send (&m, client) == 0);
    /* 3. A proper one after them: the stream is still in step. */
    kf_msg_t *hb = kf_msg_new ("HEARTBEAT", NULL);
    CHECK (kf_msg_send (&hb, client, NULL, NULL) == 0);

    zframe_t *route = NULL;
    kf_msg_t *msg = NULL;
    const char *reason = NULL;
    CHECK (kf_msg_recv (server, KF_EP_WORKER_IN, 1 << 20, true, &route, &msg, &reason)
           == KF_PROTO_MALFORMED);
    CHECK (route != NULL && msg == NULL);
    CHECK (reason && strstr (reason, "frames"));
    zframe_destroy (&route);
    CHECK (kf_msg_recv (server, KF_EP_WORKER_IN, 1 << 20, true, &route, &msg, &reason)
           == KF_PROTO_OVERSIZED);
    CHECK (route != NULL && msg == NULL);
    zframe_destroy (&route);
    CHECK (kf_msg_recv (server, KF_EP_WORKER_IN, 1 << 20, true, &route, &msg, &reason)
           == KF_PROTO_OK);
    CHECK (msg && !strcmp (msg->type, "HEARTBEAT"));
    kf_msg_destroy (&msg);
    zframe_destroy (&route);

    /* The raw bounded receive keeps only the lead frame of a refused one. */
    m = zmsg_new ();
    for (int i = 0; i < 100; i++)
        zmsg_addmem (m, "y", 1);
    CHECK (zmsg_send (&m, client) == 0);
    zmsg_t *got = NULL;
    CHECK (kf_proto_recv_bounded (server, 1, 1 << 20, &got, &reason) == KF_PROTO_MALFORMED);
    CHECK (got && zmsg_size (got) == 1);
    zmsg_destroy (&got);
    zsock_set_rcvtimeo (server, 0);
    CHECK (kf_proto_recv_bounded (server, 1, 1 << 20, &got, &reason) == KF_PROTO_NOMSG);
    CHECK (got == NULL);

    zsock_destroy (&client);
    zsock_destroy (&server);
    return kf_test_done ("test_peer_modules");
}
