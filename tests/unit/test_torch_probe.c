/*  test_torch_probe.c - the Python that imports torch, kept for the boot
 *  (exec-worker/kf_torch_probe.h). $KF_PYTHON, the first candidate, names
 *  a file of the test's that is absent at first, so the interpreter the
 *  worker would find is chosen after it: the first find asks Python (in
 *  the jobs' sandbox) and keeps the answer, the second takes it back
 *  without Python, and that first candidate appearing, a changed torch
 *  file, another boot's answer, a spoiled answer, a file others may write
 *  and a link in its place each make a find ask again. A candidate
 *  without torch keeps nothing. Skipped (passing) where no Python imports
 *  torch.
 */
#include "../../exec-worker/kf_torch_probe.h"
#include "../kf_test.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static char s_dir[] = "/tmp/kf-torch-probe.XXXXXX";
static char s_keep[300], s_first[300];

//  One find (CONFIGURED: the worker's python option; NULL: the candidates).
static kf_torch_found_t
s_find (const char *configured)
{
    kf_torch_found_t f;
    CHECK (kf_torch_find (configured, s_keep, &f) == 0);
    return f;
}

//  Sets KEY (under AT when given) of the kept file to VALUE (JSON text).
static void
s_edit (const char *at, const char *key, const char *value)
{
    json_t *doc = json_load_file (s_keep, 0, NULL);
    json_t *obj = at ? json_object_get (doc, at) : doc;
    json_object_set_new (obj, key, json_loads (value, JSON_DECODE_ANY, NULL));
    CHECK (json_dump_file (doc, s_keep, 0) == 0);
    json_decref (doc);
    chmod (s_keep, 0644);
}

//  A find that must ask Python again, and then keep its answer anew.
static void
s_asks_again (const char *what)
{
    kf_torch_found_t f = s_find (NULL);
    printf ("%s: %s\n", what, f.kept ? "taken back (wrong)" : "asked again");
    CHECK (!f.kept && f.python != NULL);
    kf_torch_found_free (&f);
    f = s_find (NULL);
    CHECK (f.kept);
    kf_torch_found_free (&f);
}

int
main (void)
{
    kf_torch_found_t any;
    CHECK (kf_torch_find (NULL, NULL, &any) == 0);
    if (!any.python) {
        printf ("test_torch_probe: skipped (no Python imports torch: %s)\n", any.tried);
        kf_torch_found_free (&any);
        return kf_test_done ("test_torch_probe");
    }
    CHECK (!any.kept);
    if (!mkdtemp (s_dir))
        return 1;
    snprintf (s_keep, sizeof s_keep, "%s/python-found.json", s_dir);
    snprintf (s_first, sizeof s_first, "%s/python", s_dir);
    setenv ("KF_PYTHON", s_first, 1);

    struct timespec t0, t1;
    clock_gettime (CLOCK_MONOTONIC, &t0);
    kf_torch_found_t first = s_find (NULL);
    clock_gettime (CLOCK_MONOTONIC, &t1);
    double ask_s = (double) (t1.tv_sec - t0.tv_sec) + (double) (t1.tv_nsec - t0.tv_nsec) * 1e-9;
    CHECK (!first.kept && first.python && !strcmp (first.python, any.python));
    CHECK (first.tried && strstr (first.tried, s_first));
    CHECK (first.version && !strcmp (first.version, any.version) && first.cuda == any.cuda);
    struct stat st;
    CHECK (stat (s_keep, &st) == 0 && (st.st_mode & 0777) == 0644);

    clock_gettime (CLOCK_MONOTONIC, &t0);
    kf_torch_found_t second = s_find (NULL);
    clock_gettime (CLOCK_MONOTONIC, &t1);
    double kept_s = (double) (t1.tv_sec - t0.tv_sec) + (double) (t1.tv_nsec - t0.tv_nsec) * 1e-9;
    printf ("asked: %.3f s (torch %s); taken back: %.4f s\n", ask_s, first.version, kept_s);
    CHECK (second.kept && second.python && !strcmp (second.python, first.python));
    CHECK (second.version && !strcmp (second.version, first.version));
    CHECK (second.cuda == first.cuda && second.tried && !strcmp (second.tried, first.tried));
    kf_torch_found_free (&second);

    //  A candidate before the one chosen appeared (it may import torch).
    FILE *f = fopen (s_first, "w");
    CHECK (f != NULL);
    if (f) {
        fputs ("#!/bin/sh\nexit 1\n", f);
        fclose (f);
    }
    chmod (s_first, 0755);
    s_asks_again ("a candidate before it appeared");

    //  torch changed (an upgrade rewrites its files).
    json_t *doc = json_load_file (s_keep, 0, NULL);
    const char *path = NULL;
    json_t *v;
    json_object_foreach (json_object_get (doc, "torch_files"), path, v)
        break;
    CHECK (path != NULL);
    if (path) {
        char *p = strdup (path);
        s_edit ("torch_files", p, "\"1:2:3:4.000000005\"");
        s_asks_again ("a torch file changed");
        free (p);
    }
    json_decref (doc);

    //  Another boot's answer.
    s_edit ("key", "boot_id", "\"00000000-0000-0000-0000-000000000000\"");
    s_asks_again ("another boot");

    //  A chosen candidate out of range, a version with a space in it.
    s_edit (NULL, "chosen", "7");
    s_asks_again ("a candidate out of range");
    s_edit (NULL, "version", "\"2.0 evil\"");
    s_asks_again ("a version with a space");

    //  A file anyone in the group may write.
    chmod (s_keep, 0664);
    s_asks_again ("a group-writable file");

    //  A link in the file's place.
    char other[320];
    snprintf (other, sizeof other, "%s/other.json", s_dir);
    CHECK (rename (s_keep, other) == 0 && symlink (other, s_keep) == 0);
    s_asks_again ("a link in its place");
    CHECK (lstat (s_keep, &st) == 0 && S_ISREG (st.st_mode));

    //  No candidate imports torch: nothing kept, nothing taken back.
    unlink (s_keep);
    kf_torch_found_t none = s_find ("/bin/false");
    CHECK (!none.python && none.tried && strstr (none.tried, "/bin/false"));
    CHECK (access (s_keep, F_OK) != 0);
    kf_torch_found_free (&none);

    kf_torch_found_free (&first);
    kf_torch_found_free (&any);
    unlink (s_keep);
    unlink (other);
    unlink (s_first);
    rmdir (s_dir);
    return kf_test_done ("test_torch_probe");
}
