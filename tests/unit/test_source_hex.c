/*  test_source_hex.c - a source brought with its row as hex
 *  (kf_prompt_source_hex; the meta round's outcomes and the tuning
 *  round's shapes read it so): the same JSON string kf_prompt_source
 *  makes from the blob's bytes, backslashes and bytes past ASCII as they
 *  are, none where there is no blob or the bytes are not UTF-8.
 */
#include "../../coordinator/kf_prompt.h"
#include "../kf_test.h"
#include <string.h>

static json_t *
s_of (const char *hex)
{
    json_t *h = json_string (hex);
    json_t *src = kf_prompt_source_hex (h);
    json_decref (h);
    return src;
}

int
main (void)
{
    //  "a\\b\n" and "é": escape encoding would have doubled the backslash.
    json_t *s = s_of ("615c620a");
    CHECK (s && !strcmp (json_string_value (s), "a\\b\n"));
    json_decref (s);
    s = s_of ("c3a9");
    CHECK (s && !strcmp (json_string_value (s), "\xc3\xa9"));
    json_decref (s);
    //  An empty blob is an empty source; a NUL byte is kept in the length.
    s = s_of ("");
    CHECK (s && json_string_length (s) == 0);
    json_decref (s);
    s = s_of ("610062");
    CHECK (s && json_string_length (s) == 3);
    json_decref (s);
    //  Not UTF-8, or no blob: none.
    CHECK (s_of ("ff") == NULL);
    CHECK (kf_prompt_source_hex (NULL) == NULL);
    json_t *null = json_null ();
    CHECK (kf_prompt_source_hex (null) == NULL);
    json_decref (null);
    return kf_test_done ("test_source_hex");
}
