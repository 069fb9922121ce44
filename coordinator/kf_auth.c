/*  kf_auth.c - the coordinator's CURVE server side and its ZAP handler.
 *
 *  libzmq asks a ZAP handler (a REP socket bound at inproc://zeromq.zap.01
 *  in the same context) about every CURVE handshake. Ours lives in the
 *  coordinator's one zmq_poll, so no thread and no lock is needed; the
 *  price is that a handshake waits while the loop is inside a database
 *  statement, which is milliseconds. czmq's zauth actor would do the same
 *  checks in a thread of its own but could not tell us what it refused.
 *
 *  The allow-list is a folder of public certificates in czmq's format.
 *  It is re-scanned when its modification time changes, or when two
 *  seconds have passed since the last scan (a file rewritten in place
 *  does not change the folder's time), but never per handshake: a peer
 *  flooding handshakes costs a hash lookup each, not a folder scan.
 */
#include "kf_auth.h"
#include "kf_take.h"
#include "kf_log.h"
#include "kf_str.h"
#include <dirent.h>
#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define S_ZAP_ENDPOINT "inproc://zeromq.zap.01"
#define S_RESCAN_MS 2000

struct kf_auth_t {
    zcert_t *cert;
    char *allow_dir;
    zsock_t *zap;
    zhashx_t *allowed;        /* Z85 public key -> certificate name */
    struct timespec dir_mtime;
    int64_t scanned_at;
    long accepted, denied;
    char last_denied[41];
};

/* Reads every certificate of the folder into a fresh table. Files named
 * *_secret are skipped: an allow-list holds public keys only. */
static void
s_scan (kf_auth_t *self)
{
    struct stat st;
    if (stat (self->allow_dir, &st) == 0)
        self->dir_mtime = st.st_mtim;
    self->scanned_at = zclock_mono ();
    zhashx_t *allowed = zhashx_new ();
    zhashx_set_destructor (allowed, (zhashx_destructor_fn *) zstr_free);
    DIR *dir = opendir (self->allow_dir);
    if (!dir)
        kf_warn ("cannot read the allow-list folder %s: %s", self->allow_dir,
                 strerror (errno));
    struct dirent *e;
    while (dir && (e = readdir (dir))) {
        size_t n = strlen (e->d_name);
        if (e->d_name[0] == '.' || (n > 7 && !strcmp (e->d_name + n - 7, "_secret")))
            continue;
        char *path = kf_strdupf ("%s/%s", self->allow_dir, e->d_name);
        zconfig_t *root = path ? zconfig_load (path) : NULL;
        const char *key = root ? zconfig_get (root, "curve/public-key", NULL) : NULL;
        uint8_t raw[32];
        if (key && strlen (key) == 40 && zmq_z85_decode (raw, key))
            zhashx_update (allowed, key, strdup (e->d_name));
        zconfig_destroy (&root);
        free (path);
    }
    if (dir)
        closedir (dir);
    if (!self->allowed || zhashx_size (allowed) != zhashx_size (self->allowed))
        kf_info ("allow-list %s: %zu key(s)", self->allow_dir, zhashx_size (allowed));
    zhashx_destroy (&self->allowed);
    self->allowed = allowed;
}

static void
s_maybe_rescan (kf_auth_t *self)
{
    struct stat st;
    bool changed = stat (self->allow_dir, &st) == 0
                   && (st.st_mtim.tv_sec != self->dir_mtime.tv_sec
                       || st.st_mtim.tv_nsec != self->dir_mtime.tv_nsec);
    if (changed || zclock_mono () - self->scanned_at >= S_RESCAN_MS)
        s_scan (self);
}

kf_auth_t *
kf_auth_new (const char *cert_path, const char *allow_dir, char **err)
{
    if (!allow_dir || !*allow_dir) {
        kf_fail (err, "curve_allow_dir is needed with curve_cert (the folder of"
                 " the public certificates to admit)");
        return NULL;
    }
    kf_auth_t *self = calloc (1, sizeof *self);
    self->cert = zcert_load (cert_path);
    static const uint8_t zero[32];
    if (!self->cert || !memcmp (zcert_secret_key (self->cert), zero, 32)) {
        kf_fail (err, "cannot load a secret certificate from %s", cert_path);
        kf_auth_destroy (&self);
        return NULL;
    }
    self->allow_dir = strdup (allow_dir);
    struct stat st;
    if (stat (allow_dir, &st) || !S_ISDIR (st.st_mode)) {
        kf_fail (err, "curve_allow_dir %s is not a folder", allow_dir);
        kf_auth_destroy (&self);
        return NULL;
    }
    self->zap = zsock_new (ZMQ_REP);
    if (!self->zap || zsock_bind (self->zap, S_ZAP_ENDPOINT) < 0) {
        kf_fail (err, "cannot bind the ZAP handler: %s", zmq_strerror (zmq_errno ()));
        kf_auth_destroy (&self);
        return NULL;
    }
    zsock_set_rcvtimeo (self->zap, 0);
    s_scan (self);
    return self;
}

void
kf_auth_destroy (kf_auth_t **self_p)
{
    kf_auth_t *self = KF_TAKE (self_p);
    if (self) {
        zsock_destroy (&self->zap);
        zcert_destroy (&self->cert);
        zhashx_destroy (&self->allowed);
        free (self->allow_dir);
        free (self);
    }
}

void
kf_auth_secure (kf_auth_t *self, zsock_t *sock)
{
    zcert_apply (self->cert, sock);
    zsock_set_curve_server (sock, 1);
    /* A domain makes libzmq consult ZAP on every connection of SOCK. */
    zsock_set_zap_domain (sock, "kf");
}

void *
kf_auth_socket (kf_auth_t *self)
{
    return zsock_resolve (self->zap);
}

/* One ZAP request (RFC 27): version, request id, domain, address,
 * identity, mechanism, credentials; the reply echoes version and request
 * id, then status code, status text, user id and metadata. */
static void
s_answer (kf_auth_t *self, zmsg_t *req)
{
    char *version = zmsg_popstr (req);
    char *request_id = zmsg_popstr (req);
    char *domain = zmsg_popstr (req);
    char *address = zmsg_popstr (req);
    char *identity = zmsg_popstr (req);
    char *mechanism = zmsg_popstr (req);
    zframe_t *key = zmsg_pop (req);
    const char *code = "400", *text = "no access";
    char *user = NULL;
    if (version && !strcmp (version, "1.0") && mechanism && !strcmp (mechanism, "CURVE")
        && key && zframe_size (key) == 32) {
        char txt[41];
        zmq_z85_encode (txt, zframe_data (key), 32);
        s_maybe_rescan (self);
        const char *name = zhashx_lookup (self->allowed, txt);
        if (name) {
            code = "200";
            text = "OK";
            user = strdup (name);
            self->accepted++;
        }
        else {
            self->denied++;
            memcpy (self->last_denied, txt, sizeof txt);
            kf_warn ("refused a CURVE peer from %s: key %s is not in %s",
                     address ? address : "?", txt, self->allow_dir);
        }
    }
    else
        self->denied++;
    zmsg_t *reply = zmsg_new ();
    zmsg_addstr (reply, "1.0");
    zmsg_addstr (reply, request_id ? request_id : "");
    zmsg_addstr (reply, code);
    zmsg_addstr (reply, text);
    zmsg_addstr (reply, user ? user : "");
    zmsg_addmem (reply, "", 0);
    zmsg_send (&reply, self->zap);
    zmsg_destroy (&reply);
    free (user);
    zframe_destroy (&key);
    zstr_free (&version);
    zstr_free (&request_id);
    zstr_free (&domain);
    zstr_free (&address);
    zstr_free (&identity);
    zstr_free (&mechanism);
}

void
kf_auth_handle (kf_auth_t *self)
{
    zmsg_t *req;
    while ((req = zmsg_recv (self->zap))) {
        s_answer (self, req);
        zmsg_destroy (&req);
    }
}

json_t *
kf_auth_status (kf_auth_t *self)
{
    return json_pack ("{s:s, s:s, s:i, s:i, s:i, s:s?}", "public_key",
                      zcert_public_txt (self->cert), "allow_dir", self->allow_dir,
                      "allowed_keys", (int) zhashx_size (self->allowed), "accepted",
                      (int) self->accepted, "denied", (int) self->denied, "last_denied",
                      self->last_denied[0] ? self->last_denied : NULL);
}

long
kf_auth_denied (const kf_auth_t *self)
{
    return self->denied;
}
