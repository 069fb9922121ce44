/*  test_proto.c - the codec: round trips, every rejection code, and random
 *  frames that must come back as errors, never as crashes. */
#include "../kf_test.h"
#include "kf_proto.h"
#include <dirent.h>
#include <string.h>

/* The fuzzer's harness, so every input of its corpus (and every crash it
 * ever found, kept there) is replayed here under the sanitizers of the
 * suite's build. It aborts on any property it checks. */
#include "../fuzz/fuzz_proto.c"

/* Replays every file of tests/fuzz/corpus/; returns how many. */
static int
s_replay_corpus (void)
{
    const char *root = getenv ("KF_ROOT");
    char dir[4096];
    snprintf (dir, sizeof dir, "%s/tests/fuzz/corpus", root ? root : ".");
    DIR *d = opendir (dir);
    if (!d)
        return -1;
    int n = 0;
    struct dirent *e;
    while ((e = readdir (d))) {
        if (e->d_name[0] == '.')
            continue;
        char path[4400];
        snprintf (path, sizeof path, "%s/%s", dir, e->d_name);
        FILE *f = fopen (path, "rb");
        if (!f)
            continue;
        static uint8_t buf[1 << 16];
        size_t size = fread (buf, 1, sizeof buf, f);
        fclose (f);
        LLVMFuzzerTestOneInput (buf, size);
        n++;
    }
    closedir (d);
    return n;
}

static zmsg_t *
s_raw (const char *sig, size_t siglen, const char *type, const char *body)
{
    zmsg_t *m = zmsg_new ();
    zmsg_addmem (m, "peer", 4);          /* routing id */
    if (sig)
        zmsg_addmem (m, sig, siglen);
    if (type)
        zmsg_addstr (m, type);
    if (body)
        zmsg_addstr (m, body);
    return m;
}

static kf_proto_rc_t
s_decode (zmsg_t *m, kf_endpoint_t ep, size_t cap)
{
    kf_msg_t *msg = NULL;
    zframe_t *route = NULL;
    kf_proto_rc_t rc = kf_msg_decode (&m, ep, cap, true, false, &route, &msg, NULL);
    CHECK ((rc == KF_PROTO_OK) == (msg != NULL));
    kf_msg_destroy (&msg);
    zframe_destroy (&route);
    return rc;
}

int
main (void)
{
    /* Round trip over a real socket pair, with binary frames. */
    zsock_t *server = zsock_new_router ("inproc://proto-test");
    zsock_t *client = zsock_new_dealer ("inproc://proto-test");
    kf_msg_t *msg = kf_msg_new ("HELLO", json_pack ("{s:s, s:s, s:i, s:{}}", "worker_id",
                                                    "w1", "role", "compile", "credits",
                                                    2, "capabilities"));
    kf_msg_add_frame (msg, "\0\1\2", 3);
    CHECK (kf_msg_send (&msg, client, NULL, NULL) == 0);
    CHECK (msg == NULL);
    zframe_t *route = NULL;
    const char *reason;
    CHECK (kf_msg_recv (server, KF_EP_WORKER_IN, 1 << 20, true, &route, &msg, &reason)
           == KF_PROTO_OK);
    CHECK (msg && !strcmp (msg->type, "HELLO"));
    CHECK (msg && kf_msg_int (msg, "credits", 0) == 2);
    CHECK (msg && kf_msg_frame_count (msg) == 1);
    CHECK (msg && zframe_size (kf_msg_frame (msg, 0)) == 3);
    CHECK (route != NULL);
    kf_msg_destroy (&msg);
    zframe_destroy (&route);
    zsock_destroy (&client);
    zsock_destroy (&server);

    const char sig[3] = { 'K', 'F', KF_PROTO_VERSION };
    const char badver[3] = { 'K', 'F', 9 };
    const char *hello = "{\"worker_id\":\"a\",\"role\":\"r\",\"credits\":1,\"capabilities\":{}}";
    CHECK (s_decode (s_raw (sig, 3, "HELLO", hello), KF_EP_WORKER_IN, 1 << 20) == KF_PROTO_OK);
    CHECK (s_decode (s_raw ("XY\1", 3, "HELLO", hello), KF_EP_WORKER_IN, 1 << 20) == KF_PROTO_MALFORMED);
    CHECK (s_decode (s_raw (badver, 3, "HELLO", hello), KF_EP_WORKER_IN, 1 << 20) == KF_PROTO_VERSION_ERR);
    CHECK (s_decode (s_raw (sig, 3, "hello", hello), KF_EP_WORKER_IN, 1 << 20) == KF_PROTO_MALFORMED);
    CHECK (s_decode (s_raw (sig, 3, "HELLO", "[1]"), KF_EP_WORKER_IN, 1 << 20) == KF_PROTO_MALFORMED);
    CHECK (s_decode (s_raw (sig, 3, "HELLO", "{\"worker_id\":"), KF_EP_WORKER_IN, 1 << 20) == KF_PROTO_MALFORMED);
    CHECK (s_decode (s_raw (sig, 3, "HELLO", "{\"worker_id\":\"a\"}"), KF_EP_WORKER_IN, 1 << 20) == KF_PROTO_MALFORMED);
    CHECK (s_decode (s_raw (sig, 3, "HELLO", "{\"worker_id\":1,\"role\":\"r\",\"credits\":1,\"capabilities\":{}}"),
                     KF_EP_WORKER_IN, 1 << 20) == KF_PROTO_MALFORMED);
    CHECK (s_decode (s_raw (sig, 3, "HELLO", hello), KF_EP_WORKER_IN, 20) == KF_PROTO_OVERSIZED);
    CHECK (s_decode (s_raw (sig, 3, "NOPE", "{}"), KF_EP_WORKER_IN, 1 << 20) == KF_PROTO_UNKNOWN_TYPE);
    /* Known type, wrong endpoint: SUBMIT is for clients, STATUS only for status. */
    CHECK (s_decode (s_raw (sig, 3, "SUBMIT", "{\"task\":{},\"config\":{}}"), KF_EP_WORKER_IN, 1 << 20)
           == KF_PROTO_UNKNOWN_TYPE);
    CHECK (s_decode (s_raw (sig, 3, "CANCEL", "{\"run_id\":1}"), KF_EP_STATUS_IN, 1 << 20)
           == KF_PROTO_UNKNOWN_TYPE);
    CHECK (s_decode (s_raw (sig, 3, "STATUS", "{}"), KF_EP_STATUS_IN, 1 << 20) == KF_PROTO_OK);
    CHECK (s_decode (s_raw (sig, 3, NULL, NULL), KF_EP_WORKER_IN, 1 << 20) == KF_PROTO_MALFORMED);
    CHECK (s_decode (s_raw (NULL, 0, NULL, NULL), KF_EP_WORKER_IN, 1 << 20) == KF_PROTO_MALFORMED);
    zmsg_t *many = s_raw (sig, 3, "HEARTBEAT", "{}");
    for (int i = 0; i < KF_PROTO_MAX_FRAMES + 1; i++)
        zmsg_addmem (many, "x", 1);
    CHECK (s_decode (many, KF_EP_WORKER_IN, 1 << 20) == KF_PROTO_MALFORMED);

    /* Random and truncated frames: every one decodes to some code. */
    srandom (42);
    int ok = 0, bad = 0;
    for (int i = 0; i < 10000; i++) {
        zmsg_t *m = zmsg_new ();
        zmsg_addmem (m, "peer", 4);
        int frames = (int) (random () % 6);
        for (int f = 0; f < frames; f++) {
            char buf[64];
            size_t n = (size_t) (random () % sizeof buf);
            for (size_t k = 0; k < n; k++)
                buf[k] = (char) random ();
            if (f == 0 && random () % 2) {
                memcpy (buf, sig, 3);
                n = 3;
            }
            if (f == 1 && random () % 2) {
                strcpy (buf, "RESULT");
                n = 6;
            }
            if (f == 2 && random () % 2) {
                const char *j = "{\"job_id\":1,\"lease\":1,\"ok\":true,\"result\":{}}";
                n = strlen (j) - (size_t) (random () % 8);
                memcpy (buf, j, n);
            }
            zmsg_addmem (m, buf, n);
        }
        kf_proto_rc_t rc = s_decode (m, KF_EP_WORKER_IN, 1 << 20);
        if (rc == KF_PROTO_OK)
            ok++;
        else
            bad++;
    }
    CHECK (bad > 9000);
    CHECK (ok + bad == 10000);

    /* kf_msg_encode gives the frames kf_msg_send sends: they decode to the
     * same message, routing id and topic handled as on the sockets. */
    msg = kf_msg_new ("DRAIN", json_pack ("{s:s, s:b}", "worker_id", "w-1", "resume", 0));
    kf_msg_add_frame (msg, "x", 1);
    zframe_t *peer = zframe_new ("peer", 4);
    zmsg_t *enc = kf_msg_encode (&msg, peer, NULL);
    CHECK (msg == NULL && enc && zmsg_size (enc) == 5);
    kf_msg_t *back = NULL;
    route = NULL;
    CHECK (kf_msg_decode (&enc, KF_EP_CLIENT_IN, 1 << 20, true, false, &route, &back, NULL)
           == KF_PROTO_OK);
    CHECK (back && !strcmp (back->type, "DRAIN") && !strcmp (kf_msg_str (back, "worker_id"), "w-1"));
    CHECK (back && kf_msg_frame_count (back) == 1);
    CHECK (route && zframe_eq (route, peer));
    kf_msg_destroy (&back);
    zframe_destroy (&route);
    zframe_destroy (&peer);
    msg = kf_msg_new ("EVENT", json_pack ("{s:i, s:s}", "run_id", 1, "event", "finished"));
    enc = kf_msg_encode (&msg, NULL, "run/1/");
    CHECK (kf_msg_decode (&enc, KF_EP_EVENT_OUT, 1 << 20, false, true, NULL, &back, NULL)
           == KF_PROTO_OK);
    kf_msg_destroy (&back);

    /* DRAIN: a client request only, with a worker_id; DRAINING its reply. */
    CHECK (s_decode (s_raw (sig, 3, "DRAIN", "{\"worker_id\":\"w\"}"), KF_EP_CLIENT_IN, 1 << 20)
           == KF_PROTO_OK);
    CHECK (s_decode (s_raw (sig, 3, "DRAIN", "{}"), KF_EP_CLIENT_IN, 1 << 20)
           == KF_PROTO_MALFORMED);
    CHECK (s_decode (s_raw (sig, 3, "DRAIN", "{\"worker_id\":\"w\"}"), KF_EP_STATUS_IN, 1 << 20)
           == KF_PROTO_UNKNOWN_TYPE);
    CHECK (s_decode (s_raw (sig, 3, "DRAIN", "{\"worker_id\":\"w\"}"), KF_EP_WORKER_IN, 1 << 20)
           == KF_PROTO_UNKNOWN_TYPE);

    /* The fuzzer's corpus, replayed (make fuzz grows it). */
    int replayed = s_replay_corpus ();
    printf ("test_proto: replayed %d fuzz corpus inputs\n", replayed);
    CHECK (replayed >= 16);
    return kf_test_done ("test_proto");
}
