/*  test_config.c - the configuration table: defaults, file < environment
 *  < flags, bounds, unknown keys with file and line, stray arguments. */
#include "../kf_test.h"
#include "kf_config.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const kf_cfg_entry_t s_table[] = {
    { "endpoint", KF_CFG_STR, "ipc:///x", 0, -1, "where" },
    { "count", KF_CFG_INT, "3", 1, 10, "how many" },
    { "ratio", KF_CFG_DOUBLE, "0.5", 0, 1, "how much" },
    { "verbose", KF_CFG_BOOL, "false", 0, -1, "say more" },
    KF_CFG_END
};

static kf_config_t *
s_load (int argc, const char **args, char **err)
{
    char *argv[16];
    for (int i = 0; i < argc; i++)
        argv[i] = (char *) args[i];
    argv[argc] = NULL;
    bool help;
    return kf_config_load ("t", "t [options]", s_table, &argc, argv, &help, err);
}

static void
s_write (const char *path, const char *text)
{
    FILE *f = fopen (path, "w");
    fputs (text, f);
    fclose (f);
}

//  kf_config_file_lines's callback: keeps "key=value(length):line;" and
//  refuses the key "stop".
static int
s_collect (void *arg, char *key, char *value, const char *where, char **err)
{
    char *all = arg;
    if (!strcmp (key, "stop")) {
        *err = strdup ("stopped");
        return -1;
    }
    size_t used = strlen (all);
    snprintf (all + used, 512 - used, "%s=%.9s(%zu)%s;", key, value, strlen (value),
              strrchr (where, ':'));
    return 0;
}

static void
s_test_file_lines (const char *path)
{
    char all[512] = "";
    char *err = NULL;
    //  Comments and blank lines skipped, key and value trimmed, quotes
    //  and '=' in a value kept for the caller, lines past 4 KiB whole.
    char *text = malloc (6000);
    snprintf (text, 6000, "# head\n\n  a = 1 # why\nb=\"x = y\"\n long =%05000d\n", 0);
    s_write (path, text);
    free (text);
    CHECK (kf_config_file_lines (path, s_collect, all, &err) == 0 && !err);
    CHECK (!strcmp (all, "a=1(1):3;b=\"x = y\"(7):4;long=000000000(5000):5;"));
    //  A line without '=' is named by file and line, and ends the reading.
    all[0] = 0;
    s_write (path, "a = 1\nnonsense\nb = 2\n");
    CHECK (kf_config_file_lines (path, s_collect, all, &err) == -1);
    CHECK (err && strstr (err, path) && strstr (err, ":2: expected 'key = value'"));
    CHECK (!strcmp (all, "a=1(1):1;"));
    free (err);
    err = NULL;
    //  The callback's refusal is the result.
    all[0] = 0;
    s_write (path, "stop = now\nb = 2\n");
    CHECK (kf_config_file_lines (path, s_collect, all, &err) == -1);
    CHECK (err && !strcmp (err, "stopped") && !all[0]);
    free (err);
    err = NULL;
    CHECK (kf_config_file_lines ("/nonexistent/kf.conf", s_collect, all, &err) == -1);
    CHECK (err && strstr (err, "/nonexistent/kf.conf: cannot open: "));
    free (err);
}

int
main (void)
{
    char *err = NULL;
    unsetenv ("KF_COUNT");
    unsetenv ("KF_CONFIG");
    const char *a0[] = { "t" };
    kf_config_t *c = s_load (1, a0, &err);
    CHECK (c && kf_config_int (c, "count") == 3);
    CHECK (c && !strcmp (kf_config_str (c, "endpoint"), "ipc:///x"));
    CHECK (c && !kf_config_bool (c, "verbose"));
    kf_config_destroy (&c);

    char path[] = "/tmp/kf-config-test-XXXXXX";
    int fd = mkstemp (path);
    close (fd);
    s_write (path, "# comment\ncount = 4\nratio = 0.25\n");
    const char *a1[] = { "t", "--config", path, "--ratio=0.75", "extra" };
    setenv ("KF_COUNT", "5", 1);
    int argc = 5;
    char *argv[6];
    for (int i = 0; i < 5; i++)
        argv[i] = (char *) a1[i];
    bool help;
    c = kf_config_load ("t", "t", s_table, &argc, argv, &help, &err);
    CHECK (c && kf_config_int (c, "count") == 5);             /* env beats file */
    CHECK (c && kf_config_double (c, "ratio") == 0.75);       /* flag beats file */
    CHECK (argc == 2 && !strcmp (argv[1], "extra"));          /* strays kept */
    kf_config_destroy (&c);
    unsetenv ("KF_COUNT");

    s_write (path, "count = 4\nbogus = 1\n");
    const char *a2[] = { "t", "--config", path };
    c = s_load (3, a2, &err);
    CHECK (!c && err && strstr (err, ":2:") && strstr (err, "bogus"));
    free (err);
    err = NULL;

    s_write (path, "count = 11\n");
    c = s_load (3, a2, &err);
    CHECK (!c && err && strstr (err, ":1:") && strstr (err, "count"));
    free (err);
    err = NULL;

    setenv ("KF_RATIO", "abc", 1);
    c = s_load (1, a0, &err);
    CHECK (!c && err && strstr (err, "KF_RATIO"));
    free (err);
    err = NULL;
    unsetenv ("KF_RATIO");

    const char *a3[] = { "t", "--count" };
    c = s_load (2, a3, &err);
    CHECK (!c && err && strstr (err, "needs a value"));
    free (err);
    err = NULL;
    const char *a4[] = { "t", "--verbose", "--nope" };
    c = s_load (3, a4, &err);
    CHECK (!c && err && strstr (err, "--nope"));
    free (err);
    s_test_file_lines (path);
    unlink (path);
    return kf_test_done ("test_config");
}
