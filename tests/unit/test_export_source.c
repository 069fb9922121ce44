/*  test_export_source.c - what `kfctl export` decides without a coordinator:
 *  the tuning point written in front of the source (the measured
 *  configuration, not the template's defaults, and nothing but NAME
 *  value pairs of identifiers and integers: the point comes from a
 *  generated source's kf-tune line), and when an output folder may be
 *  written. */
#include "../kf_test.h"
#include "../../kfctl/kfctl_export.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *s_source =
    "/* kf-tune: LANES=1,4,8 ALGO=twopass,online */\n"
    "#ifndef LANES\n#define LANES 1\n#endif\n"
    "#ifndef ALGO\n#define ALGO twopass\n#endif\n"
    "int kf_forward (void);";

/* The text of SOURCE with CONFIG (JSON text) applied, or NULL. */
static char *
s_tuned (const char *config, char *why, size_t size)
{
    json_t *c = config ? json_loads (config, 0, NULL) : NULL;
    char *text = kf_ctl_export_tuned_source (s_source, strlen (s_source), c, "banner", why,
                                             size);
    json_decref (c);
    return text;
}

int
main (void)
{
    char why[300] = "";
    char *t = s_tuned ("{\"LANES\": 8, \"ALGO\": \"online\"}", why, sizeof why);
    CHECK (t != NULL);
    if (t) {
        char *lanes = strstr (t, "#define LANES 8\n");
        char *algo = strstr (t, "#define ALGO online\n");
        char *guard = strstr (t, "#ifndef LANES");
        CHECK (lanes && algo && guard && lanes < guard && algo < guard);
        CHECK (strncmp (t, "/* banner */\n", 13) == 0);
        CHECK (strstr (t, "int kf_forward (void);\n") != NULL);   /* the source, whole */
    }
    free (t);

    /* No point (an untuned candidate): the source as it is, after the banner. */
    t = s_tuned (NULL, why, sizeof why);
    CHECK (t && !strstr (t, "#define LANES 8") && strstr (t, s_source));
    free (t);
    t = s_tuned ("{}", why, sizeof why);
    CHECK (t && strstr (t, "tuning point") == NULL);
    free (t);

    /* Anything but NAME=integer or NAME=identifier is refused. */
    const char *bad[] = {
        "{\"LANES\": \"8\\n#include </etc/passwd>\"}",
        "{\"LANES\": \"a b\"}",
        "{\"LANES\": 1.5}",
        "{\"LANES\": [1]}",
        "{\"1ANES\": 4}",
        "{\"LA-NES\": 4}",
        "{\"LANES\": \"\"}",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        why[0] = 0;
        t = s_tuned (bad[i], why, sizeof why);
        CHECK (t == NULL && strstr (why, "not NAME=integer or NAME=identifier"));
        if (t)
            fprintf (stderr, "taken: %s\n", bad[i]);
        free (t);
    }

    /* The folder: missing or empty is fine; not empty needs force; a
     * file is never a folder. */
    char dir[] = "/tmp/kf-test-export.XXXXXX";
    CHECK (mkdtemp (dir) != NULL);
    char path[300];
    CHECK (kf_ctl_export_dir_ok (dir, false, why, sizeof why) == 0);
    snprintf (path, sizeof path, "%s/missing", dir);
    CHECK (kf_ctl_export_dir_ok (path, false, why, sizeof why) == 0);
    snprintf (path, sizeof path, "%s/file", dir);
    FILE *f = fopen (path, "w");
    CHECK (f != NULL);
    if (f)
        fclose (f);
    CHECK (kf_ctl_export_dir_ok (dir, false, why, sizeof why) == -1
           && strstr (why, "is not empty: give --force"));
    CHECK (kf_ctl_export_dir_ok (dir, true, why, sizeof why) == 0);
    CHECK (kf_ctl_export_dir_ok (path, true, why, sizeof why) == -1
           && strstr (why, "is not a folder"));
    unlink (path);
    rmdir (dir);
    return kf_test_done ("test_export_source");
}
