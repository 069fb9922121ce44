/*  test_hash.c - SHA-256 against the FIPS 180-4 / NIST example vectors,
 *  including messages that straddle the one- and two-block padding cases. */
#include "kf_hash.h"
#include "../kf_test.h"

#include <stdlib.h>
#include <string.h>

int
main (void)
{
    char out[65];
    kf_sha256_hex ("", 0, out);
    CHECK (strcmp (out, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855") == 0);
    kf_sha256_hex ("abc", 3, out);
    CHECK (strcmp (out, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad") == 0);
    //  56 bytes: the length no longer fits in the first block.
    const char *two = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
    kf_sha256_hex (two, strlen (two), out);
    CHECK (strcmp (out, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1") == 0);
    //  One million 'a': many full blocks.
    size_t n = 1000000;
    char *big = malloc (n);
    CHECK (big != NULL);
    if (big) {
        memset (big, 'a', n);
        kf_sha256_hex (big, n, out);
        CHECK (strcmp (out, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0") == 0);
        free (big);
    }
    return kf_test_done ("test_hash");
}
