/*  kf_curve.c - client-side CURVE, the endpoint scope rule and the making
 *  of certificate pairs (kf_curve.h).
 *
 *  Certificates are czmq's text format (zcert_save): NAME holds the public
 *  key, NAME_secret both keys. Loading NAME finds NAME_secret beside it, so
 *  an operator can name either file.
 */
#include "kf_curve.h"
#include "kf_str.h"
#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

kf_scope_t
kf_curve_scope (const char *endpoint)
{
    if (!strncmp (endpoint, "ipc://", 6) || !strncmp (endpoint, "inproc://", 9))
        return KF_SCOPE_LOCAL;
    if (strncmp (endpoint, "tcp://", 6))
        return KF_SCOPE_REMOTE;
    const char *host = endpoint + 6;
    /* A connect may name "source;destination": the destination counts. */
    const char *semi = strchr (host, ';');
    if (semi)
        host = semi + 1;
    if (!strncmp (host, "127.", 4) || !strncmp (host, "localhost:", 10)
        || !strncmp (host, "[::1]:", 6) || !strncmp (host, "lo:", 3))
        return KF_SCOPE_LOOPBACK;
    return KF_SCOPE_REMOTE;
}

int
kf_curve_public_key (const char *key_or_path, char out[41], char **err)
{
    struct stat st;
    if (strlen (key_or_path) == 40 && stat (key_or_path, &st) != 0) {
        uint8_t raw[32];
        if (!zmq_z85_decode (raw, key_or_path))
            return kf_fail (err, "'%s' is neither a certificate file nor a Z85 key",
                            key_or_path);
        memcpy (out, key_or_path, 41);
        return 0;
    }
    zcert_t *cert = zcert_load (key_or_path);
    if (!cert)
        return kf_fail (err, "cannot load the certificate %s", key_or_path);
    memcpy (out, zcert_public_txt (cert), 41);
    zcert_destroy (&cert);
    return 0;
}

int
kf_curve_client_apply (zsock_t *sock, const char *endpoint, const char *cert_path,
                       const char *server_key, bool allow_plain, char **err)
{
    kf_scope_t scope = kf_curve_scope (endpoint);
    bool have_cert = cert_path && *cert_path, have_key = server_key && *server_key;
    if (scope == KF_SCOPE_LOCAL)
        return 0;
    if (!have_cert && !have_key) {
        if (scope == KF_SCOPE_REMOTE && !allow_plain)
            return kf_fail (err, "%s leaves this host: give curve_cert and curve_server_key"
                            " (or allow_plain_tcp to send in the clear)", endpoint);
        return 0;
    }
    if (!have_cert || !have_key)
        return kf_fail (err, "CURVE needs both curve_cert (ours) and curve_server_key"
                        " (the coordinator's)");
    char server[41];
    if (kf_curve_public_key (server_key, server, err))
        return -1;
    zcert_t *cert = zcert_load (cert_path);
    if (!cert)
        return kf_fail (err, "cannot load the certificate %s", cert_path);
    /* A public-only file loads with a zero secret key: useless as ours. */
    static const uint8_t zero[32];
    if (!memcmp (zcert_secret_key (cert), zero, 32)) {
        zcert_destroy (&cert);
        return kf_fail (err, "%s holds no secret key (name the _secret file, or the"
                        " pair's base name)", cert_path);
    }
    zcert_apply (cert, sock);
    zcert_destroy (&cert);
    zsock_set_curve_serverkey (sock, server);
    return 0;
}

int
kf_curve_keygen (const char *dir, const char *name, char public_txt[41], char **err)
{
    if (!*name || strchr (name, '/') || name[0] == '.')
        return kf_fail (err, "NAME must be a plain file name, not '%s'", name);
    if (mkdir (dir, 0700) && errno != EEXIST)
        return kf_fail (err, "cannot create %s: %s", dir, strerror (errno));
    char *path = kf_strdupf ("%s/%s", dir, name);
    char *secret = kf_strdupf ("%s/%s_secret", dir, name);
    struct stat st;
    if (stat (path, &st) == 0 || stat (secret, &st) == 0) {
        kf_fail (err, "%s already exists; not overwriting a key", path);
        free (path);
        free (secret);
        return -1;
    }
    zcert_t *cert = zcert_new ();
    char host[256] = "";
    gethostname (host, sizeof host - 1);
    zcert_set_meta (cert, "name", "%s", name);
    zcert_set_meta (cert, "created-on", "%s", host);
    /* The secret file is written under a umask that keeps it private. */
    mode_t old = umask (077);
    int rc = zcert_save_secret (cert, secret);
    umask (old);
    if (rc == 0)
        rc = zcert_save_public (cert, path);
    if (rc == 0) {
        chmod (path, 0644);
        memcpy (public_txt, zcert_public_txt (cert), 41);
    }
    else
        kf_fail (err, "cannot write %s: %s", path, strerror (errno));
    zcert_destroy (&cert);
    free (path);
    free (secret);
    return rc ? -1 : 0;
}
