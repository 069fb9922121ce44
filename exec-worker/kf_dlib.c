/*  kf_dlib.c - a device runtime's library, found when it is asked for
 *  (kf_dlib.h).
 */
#include "kf_dlib.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

void *
kf_dlib_open (const char *env, const char *const *names, int flags, const char *missing,
              char *path, size_t path_size, char *why, size_t why_size)
{
    const char *forced = getenv (env);
    if (forced && *forced) {
        void *lib = dlopen (forced, flags);
        if (!lib)
            snprintf (why, why_size, "cannot load %s=%s: %s", env, forced, dlerror ());
        else
            snprintf (path, path_size, "%s", forced);
        return lib;
    }
    for (int i = 0; names[i]; i++) {
        void *lib = dlopen (names[i], flags);
        if (lib) {
            snprintf (path, path_size, "%s", names[i]);
            return lib;
        }
    }
    snprintf (why, why_size, "%s", missing);
    return NULL;
}
