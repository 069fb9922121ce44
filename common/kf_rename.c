/*  kf_rename.c - the user's file names given back in text a worker wrote
 *  (kf_rename.h).
 *
 *  A worker builds or runs the user's file under a name of its own
 *  ("kernel.c" in the compile worker's build folder, "problem.py" in the
 *  reference runner's), so a compiler's error or a traceback names a file
 *  the user does not have. Whoever writes a message about that file
 *  (kfctl validate, the coordinator's reason for a failed run) gives the
 *  user's name back: every whole use of the worker's name, not a longer
 *  name that ends in it ("mykernel.c"), and with the worker's folder in
 *  front of it when the user's name is a path of its own.
 */
#include "kf_rename.h"

#include <ctype.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

//  Whether C can be part of a file name: "mykernel.c" is not "kernel.c".
static bool
s_name_char (char c)
{
    return isalnum ((unsigned char) c) || c == '_' || c == '-' || c == '.';
}

//  Whether C can be part of a path in a compiler's message: a name's
//  characters and '/'. A location ends at ':' or '(', a quoted name at
//  its quote, a word at a blank.
static bool
s_path_char (char c)
{
    return s_name_char (c) || c == '/' || c == '+' || c == '~';
}

char *
kf_rename_file (const char *text, const char *ours, const char *theirs)
{
    size_t n = strlen (ours), m = strlen (theirs), hits = 0;
    if (n == 0)
        return strdup (text);
    for (const char *p = strstr (text, ours); p; p = strstr (p + n, ours))
        hits++;
    char *out = malloc (strlen (text) + hits * (m > n ? m - n : 0) + 1);
    if (!out)
        return NULL;
    //  A user's name with a folder in it replaces the worker's folder too:
    //  "/tmp/build.x/kernel.c" is "examples/x/reference.c", not the two
    //  run together.
    bool path = strchr (theirs, '/') != NULL;
    char *w = out;
    const char *r = text;
    for (const char *p = strstr (r, ours); p; p = strstr (r, ours)) {
        bool after_name = p > text && s_name_char (p[-1]);
        bool whole = !after_name && !s_name_char (p[n]);
        //  A name is followed by ':' (a location), a quote or a blank;
        //  a trailing '.' ends a sentence.
        if (p[n] == '.' && (p[n + 1] == 0 || isspace ((unsigned char) p[n + 1])))
            whole = !after_name;
        const char *from = p;
        if (whole && path)
            while (from > r && s_path_char (from[-1]))
                from--;
        memcpy (w, r, (size_t) (from - r));
        w += from - r;
        if (whole) {
            memcpy (w, theirs, m);
            w += m;
        }
        else {
            memcpy (w, from, n);
            w += n;
        }
        r = p + n;
    }
    strcpy (w, r);
    return out;
}

const char *
kf_rename_worker_name (const char *language)
{
    static const char *const names[][2] = {
        { "cuda", "kernel.cu" }, { "opencl", "kernel.cl" }, { "sycl", "kernel.cpp" },
        { "pytorch", "problem.py" },
    };
    for (size_t i = 0; language && i < sizeof names / sizeof names[0]; i++)
        if (!strcmp (language, names[i][0]))
            return names[i][1];
    return "kernel.c";
}

char *
kf_rename_reference (json_t *task, const char *text)
{
    json_t *ref = json_object_get (task, "reference");
    const char *path = json_string_value (json_object_get (ref, "path"));
    if (!path || !*path)
        return strdup (text);
    const char *language = json_string_value (json_object_get (ref, "language"));
    return kf_rename_file (text, kf_rename_worker_name (language), path);
}
