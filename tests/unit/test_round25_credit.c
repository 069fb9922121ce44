/*  test_round25_credit.c - two things round 24 of the model in the loop
 *  (issue 15, docs/search.md "Twenty-fourth round") left open, mended
 *  before round 25:
 *
 *  1. an idea's try was credited to the idea handed, not to what the
 *     code changed: candidate 7 of celu_colscale_add, handed an exact
 *     identity that shares calls (celu makes one exp an element),
 *     changed only how its threads split the rows, and the identity was
 *     handed again as "tried: inconclusive (13.65x vs parent 9.30x)".
 *     A try now counts for the idea handed only where its code did it,
 *     else it is "handed, not done"; it counts for the ideas its code
 *     changed; the run's idea_credit setting turns this off;
 *  2. the feature reader did not know work handed out by an atomic
 *     counter: that candidate's code "added no feature this reading
 *     knows", and the prompt said only "starts threads" of such a
 *     kernel. Its threads now read as taking their work as they go
 *     (tests/fixtures/descriptors/c_r25_celu_rows_counter.c), and the
 *     words and the thread-cost paragraph say so.
 */
#include "../../common/kf_json.h"
#include "../../coordinator/kf_prompt.h"
#include "../../coordinator/kf_prompt_class.h"
#include "../../coordinator/kf_prompt_credit.h"
#include "../../coordinator/kf_prompt_threads.h"
#include "../../coordinator/kf_search.h"
#include "../../coordinator/kf_search_idea.h"
#include "../../common/kf_file.h"
#include "../kf_test.h"
#include "../kf_test_text.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define S_BIT(f) (1u << (f))
#define FIX "tests/fixtures/descriptors/"

static char *
s_read (const char *path)
{
    size_t size;
    return kf_file_read (path, 1 << 16, &size);
}

//  Round 24's candidate 7 and its parent (candidate 2): SIMD celu rows,
//  the parent's threads on fixed halves.
static const unsigned s_parent = S_BIT (KF_IDEA_THREADS) | S_BIT (KF_IDEA_SIMD);
static const unsigned s_child = S_BIT (KF_IDEA_THREADS) | S_BIT (KF_IDEA_SIMD)
                                | S_BIT (KF_IDEA_DYNAMIC);

static const char *const s_ideas[] = {
    "use every core, by threads over contiguous ranges",
    "call fewer expensive functions per element, by an exact identity that shares or "
    "removes calls",
    "spend fewer cycles a vector, by explicit SIMD intrinsics",
};
#define S_THREADS 0
#define S_IDENTITY 1
#define S_SIMD 2

//  A judged try of IDEA by candidate ID: its FEATURES, its PARENT's.
static json_t *
s_try (int id, const char *idea, unsigned features, unsigned parent, double s, double p)
{
    return json_pack ("{s:i, s:s, s:I, s:I, s:i, s:I, s:f, s:f, s:f}", "id", id, "idea", idea,
                      "features", (json_int_t) features, "parent_features", (json_int_t) parent,
                      "parent_id", 2, "added", (json_int_t) (features & ~parent), "speedup", s,
                      "parent_speedup", p, "noise", 0.04);
}

//  2. The reader
static void
s_test_reader (void)
{
    char *src = s_read (FIX "c_r25_celu_rows_counter.c");
    CHECK (src != NULL);
    unsigned f = kf_prompt_source_features (src, "c");
    printf ("c_r25_celu_rows_counter.c: %#x\n", f);
    CHECK ((f & s_child) == s_child);
    //  Its parent: the same rows on fixed halves.
    const char *from = "    for (;;) {\n        long r0 = __atomic_fetch_add (&j->next, CHUNK_ROWS, "
                       "__ATOMIC_RELAXED);\n        if (r0 >= j->rows)\n            break;\n"
                       "        s_rows (j, r0, r0 + CHUNK_ROWS < j->rows ? r0 + CHUNK_ROWS : "
                       "j->rows);\n    }\n";
    char *at = src ? strstr (src, from) : NULL;
    CHECK (at != NULL);
    if (at) {
        const char *to = "    s_rows (j, j->next, j->next + j->rows / 2);\n";
        char *halves = calloc (1, strlen (src) + 1);
        snprintf (halves, strlen (src) + 1, "%.*s%s%s", (int) (at - src), src, to,
                  at + strlen (from));
        unsigned g = kf_prompt_source_features (halves, "c");
        printf ("fixed halves: %#x\n", g);
        CHECK ((g & S_BIT (KF_IDEA_THREADS)) && !(g & S_BIT (KF_IDEA_DYNAMIC)));
        free (halves);
    }
    free (src);
    //  The other counters the descriptors know (stdatomic, a claim under a
    //  lock, a dynamic schedule), and threads on fixed shares or with
    //  atomics on shared results, which are not.
    static const struct { const char *file; bool dynamic; } fixtures[] = {
        { "c_r7_mish_chunk_counter.c", true }, { "c_r9_mish_chunk_relaxed.c", true },
        { "c_r4_gemm_dynamic.c", true }, { "c_r5_gemm_atomic_int.c", true },
        { "c_r5_gemm_mutex_next.c", true }, { "c_r4_mish_threads.c", false },
        { "c_gelu_bias_omp.c", false }, { "c_row_sum_omp_atomic.c", false },
    };
    for (size_t i = 0; i < sizeof fixtures / sizeof fixtures[0]; i++) {
        char path[256];
        snprintf (path, sizeof path, FIX "%s", fixtures[i].file);
        char *s = s_read (path);
        unsigned b = kf_prompt_source_features (s, "c");
        bool ok = (b & S_BIT (KF_IDEA_THREADS))
                  && ((b >> KF_IDEA_DYNAMIC) & 1u) == fixtures[i].dynamic;
        if (!ok)
            fprintf (stderr, "  %s: features %#x\n", fixtures[i].file, b);
        CHECK (ok);
        free (s);
    }
    const char *sync = "#include <pthread.h>\nstatic long next;\nstatic void *w (void *a) {\n"
                       "  float *y = a; long i;\n"
                       "  while ((i = __sync_fetch_and_add (&next, 64)) < 4096)\n"
                       "    for (long k = i; k < i + 64; k++) y[k] = 0;\n  return 0; }\n"
                       "int kf_forward (void) { pthread_t t; pthread_create (&t, 0, w, 0);\n"
                       "  pthread_join (t, 0); return 0; }\n";
    CHECK (kf_prompt_source_does (sync, "c", KF_IDEA_DYNAMIC));
    //  In words: the threads once, as taking their work as they go.
    char words[KF_PROMPT_FEATURE_WORDS_MAX];
    kf_prompt_feature_words (s_child, words, sizeof words);
    printf ("words: %s\n", words);
    const char *both = "threads that take their work as they go (chunks from a shared counter "
                       "or a dynamic schedule, not fixed shares), explicit SIMD";
    CHECK (!strncmp (words, both, strlen (both)));
    kf_prompt_feature_words (s_child & ~s_parent, words, sizeof words);
    CHECK (!strcmp (words, "threads that take their work as they go (chunks from a shared "
                           "counter or a dynamic schedule, not fixed shares)"));
    kf_prompt_feature_words (s_parent, words, sizeof words);
    CHECK (!strncmp (words, "threads, explicit SIMD", 22));
}

//  2. The prompt's paragraph and twin
static void
s_test_paragraph (void)
{
    char *src = s_read (FIX "c_r25_celu_rows_counter.c");
    json_t *hw = json_pack ("{s:[{s:f, s:f}]}", "devices", "thread_start_join_us", 30.0,
                            "cores", 2.0);
    json_t *base = json_pack ("{s:i, s:s, s:f}", "id", 7, "source", src ? src : "",
                              "candidate_ns", 9.67e6);
    kf_prompt_in_t in = { .language = "c", .target = "host", .base = base, .hardware = hw };
    char *text = NULL;
    size_t size = 0;
    FILE *f = open_memstream (&text, &size);
    kf_prompt_thread_cost (f, &in, s_ideas[S_THREADS]);
    fclose (f);
    printf ("paragraph: %.200s\n", text ? text : "");
    CHECK (kf_test_has (text, "The kernel to improve starts threads, which take their work as "
                              "they go (chunks from a shared counter or a dynamic schedule), "
                              "not fixed shares."));
    free (text);
    //  Its one-thread form is the same design less both threads bits.
    json_t *history = json_pack ("[{s:i, s:I, s:s, s:s, s:f}, {s:i, s:I, s:i, s:s, s:s, s:f}]",
                                 "id", 4, "features", (json_int_t) S_BIT (KF_IDEA_SIMD),
                                 "status", "correct", "fidelity", "full", "candidate_ns",
                                 12.6e6, "id", 7, "features", (json_int_t) s_child,
                                 "parent_id", 2, "status", "correct", "fidelity", "full",
                                 "candidate_ns", 9.67e6);
    in.history = history;
    double ns;
    CHECK (kf_prompt_threads_twin (&in, base, &ns, NULL) == 4 && ns == 12.6e6);
    json_decref (history);
    json_decref (base);
    json_decref (hw);
    free (src);
}

//  1. The credit of one try
static void
s_test_credit (void)
{
    const char *threads = s_ideas[S_THREADS], *identity = s_ideas[S_IDENTITY],
               *simd = s_ideas[S_SIMD];
    //  Candidate 7: handed the identity, changed only the split.
    json_t *t = s_try (7, identity, s_child, s_parent, 13.65, 9.30);
    CHECK (kf_prompt_try_credit (t, identity, identity, true) == KF_CREDIT_NOT_DONE);
    CHECK (kf_prompt_try_credit (t, identity, threads, true) == KF_CREDIT_CODE);
    CHECK (kf_prompt_try_credit (t, identity, simd, true) == KF_CREDIT_NONE);
    //  Off (idea_credit false): as before.
    CHECK (kf_prompt_try_credit (t, identity, identity, false) == KF_CREDIT_HANDED);
    CHECK (kf_prompt_try_credit (t, identity, threads, false) == KF_CREDIT_NONE);
    json_decref (t);
    //  Handed threads, its code on one thread as its parent: not done.
    t = s_try (8, threads, S_BIT (KF_IDEA_SIMD), S_BIT (KF_IDEA_SIMD), 10.0, 9.0);
    CHECK (kf_prompt_try_credit (t, threads, threads, true) == KF_CREDIT_NOT_DONE);
    CHECK (kf_prompt_try_credit (t, threads, threads, false) == KF_CREDIT_HANDED);
    json_decref (t);
    //  Handed threads, and done: from one thread, or a threaded parent's
    //  split changed.
    t = s_try (9, threads, s_parent, S_BIT (KF_IDEA_SIMD), 12.0, 9.0);
    CHECK (kf_prompt_try_credit (t, threads, threads, true) == KF_CREDIT_HANDED);
    json_decref (t);
    t = s_try (10, threads, s_child, s_parent, 12.0, 9.0);
    CHECK (kf_prompt_try_credit (t, threads, threads, true) == KF_CREDIT_HANDED);
    json_decref (t);
    //  Handed the identity, its code changed nothing the reading knows:
    //  the identity's try, as no feature shows it.
    t = s_try (11, identity, s_parent, s_parent, 10.0, 9.3);
    CHECK (kf_prompt_try_credit (t, identity, identity, true) == KF_CREDIT_HANDED);
    json_decref (t);
    //  What the code did not known (written not yet): the idea handed.
    t = json_pack ("{s:i, s:s, s:i}", "id", 12, "idea", threads, "parent_id", 2);
    CHECK (kf_prompt_try_credit (t, threads, threads, true) == KF_CREDIT_HANDED);
    json_decref (t);
    //  Written from scratch: by what its code does.
    t = json_pack ("{s:i, s:I}", "id", 13, "features", (json_int_t) S_BIT (KF_IDEA_SIMD));
    CHECK (kf_prompt_try_credit (t, simd, simd, true) == KF_CREDIT_HANDED);
    CHECK (kf_prompt_try_credit (t, threads, threads, true) == KF_CREDIT_NOT_DONE);
    CHECK (kf_prompt_try_credit (t, identity, identity, true) == KF_CREDIT_HANDED);
    json_decref (t);
}

//  1. The record and the tally's words
static void
s_test_record (void)
{
    size_t n = sizeof s_ideas / sizeof s_ideas[0];
    bool aside[8];
    //  Candidate 7 as above; candidate 8, handed threads, lost beyond the
    //  noise on one thread.
    json_t *tries = json_pack ("[o, o]", s_try (7, s_ideas[S_IDENTITY], s_child, s_parent,
                                                13.65, 9.30),
                               s_try (8, s_ideas[S_THREADS], S_BIT (KF_IDEA_SIMD),
                                      S_BIT (KF_IDEA_SIMD), 8.0, 10.0));
    json_t *notes = kf_search_idea_record (s_ideas, n, tries, aside);
    const char *id_note = kf_jstr (notes, s_ideas[S_IDENTITY]);
    const char *th_note = kf_jstr (notes, s_ideas[S_THREADS]);
    printf ("identity: %s\nthreads: %s\n", id_note, th_note);
    CHECK (!strcmp (id_note, "handed, not seen done: candidate 7 (the code changed what other "
                             "ideas are about)"));
    CHECK (!strcmp (th_note, "tried: candidate 7, handed another idea: won (13.65x vs "
                             "parent 9.30x); handed, not seen done: candidate 8 (the reading of "
                             "its code sees no change of it)"));
    //  Neither idea is set aside: the identity was not tried, and threads
    //  won where done; candidate 8's loss is no loss of threads.
    CHECK (!aside[S_IDENTITY] && !aside[S_THREADS]);
    bool spent[8];
    kf_search_idea_spent (s_ideas, n, tries, spent);
    CHECK (!spent[S_IDENTITY] && !spent[S_THREADS]);
    json_decref (notes);
    //  The switch off (the run's idea_credit false): by the idea handed.
    size_t i;
    json_t *t;
    json_array_foreach (tries, i, t)
        json_object_set_new (t, "by_change", json_false ());
    notes = kf_search_idea_record (s_ideas, n, tries, aside);
    CHECK (kf_test_has (kf_jstr (notes, s_ideas[S_IDENTITY]), "tried: won (13.65x"));
    CHECK (!strcmp (kf_jstr (notes, s_ideas[S_THREADS]), "tried: lost (8.00x vs parent "
                                                           "10.00x)"));
    CHECK (aside[S_THREADS]);
    json_decref (notes);
    json_decref (tries);
}

//  An elementwise host task with a threads and a streaming idea.
static json_t *
s_spec (void)
{
    return json_pack ("{s:s, s:s, s:s, s:[{s:s, s:[i], s:s}], s:[{s:s, s:[i], s:s}],"
                      " s:{s:s, s:s}, s:{s:f, s:f}}",
                      "name", "t", "op", "logsigmoid_gate", "description", "a task", "inputs",
                      "name", "in0", "shape", 4096, "dtype", "f32", "outputs", "name", "out0",
                      "shape", 4096, "dtype", "f32", "reference", "language", "pytorch",
                      "source", "def forward(self, x):\n    return F.logsigmoid(x) * 2\n",
                      "tolerance", "rtol", 0.01, "atol", 1e-5);
}

//  1. The prompt's "Tried before"
static void
s_test_prompt (void)
{
    json_t *spec = s_spec ();
    size_t n;
    const char *const *ideas = kf_prompt_ideas_for (spec, KF_TARGET_HOST, &n);
    const char *threads = NULL;
    for (size_t i = 0; i < n; i++)
        if (kf_prompt_idea_feature (ideas[i]) == KF_IDEA_THREADS)
            threads = ideas[i];
    CHECK (threads != NULL);
    //  Candidate 8, handed threads, on one thread as its parent.
    json_t *history = json_pack ("[{s:i, s:i, s:i, s:s, s:i, s:s, s:f, s:s, s:s, s:b, s:f,"
                                 "   s:I, s:I}]",
                                 "id", 8, "generation", 1, "slot", 0, "phase", "search",
                                 "parent_id", 2, "status", "correct", "speedup", 8.0,
                                 "fidelity", "full", "idea", threads ? threads : "",
                                 "finished", 1, "candidate_ns", 16.5e6, "features",
                                 (json_int_t) S_BIT (KF_IDEA_SIMD), "parent_features",
                                 (json_int_t) S_BIT (KF_IDEA_SIMD));
    json_t *base = json_pack ("{s:i, s:s, s:s, s:f}", "id", 2, "source",
                              "int kf_forward (void) { return 0; }", "status", "correct",
                              "speedup", 10.0);
    json_t *plan = json_pack ("{s:s, s:{s:s}, s:[]}", "mine", threads ? threads : "", "notes",
                              threads ? threads : "", "handed, not seen done: candidate 8 (the "
                              "reading of its code sees no change of it)", "aside");
    kf_prompt_in_t in = { .spec = spec, .language = "c", .target = "host", .base = base,
                          .generation = 2, .slot = 0, .population = 1, .ideas = plan,
                          .history = history };
    char *p = kf_prompt_build (&in);
    CHECK (kf_test_has (p, "(handed, not seen done: candidate 8 (the reading of its code sees no "
                           "change of it))"));
    CHECK (kf_test_has (p, "No earlier candidate of this run has tried it yet. Handed this "
                           "idea, not seen done (the reading of its code, which knows each "
                           "feature's usual forms but not every way to write them, sees no "
                           "change of it, so it is not counted as a try of it): candidate 8 "
                           "(generation 1)."));
    CHECK (!kf_test_has (p, "Tried before in this run"));
    free (p);
    //  Off: a try of the idea handed, as before.
    json_object_set_new (plan, "by_change", json_false ());
    p = kf_prompt_build (&in);
    CHECK (kf_test_has (p, "Tried before in this run (newest first): candidate 8 (generation "
                           "1): correct"));
    CHECK (!kf_test_has (p, "Handed this idea, not seen done"));
    free (p);
    json_decref (plan);
    json_decref (base);
    json_decref (history);
    json_decref (spec);
}

//  2. How threads split the work makes no other kernel (round 15's
//  rule): threads taken from the streaming kernel while a sibling takes
//  streaming from the kernel whose threads take chunks from a counter
//  make one kernel twice.
static void
s_test_converge (void)
{
    json_t *spec = s_spec ();
    size_t n = 0, threads = 99, stream = 99;
    const char *const *ideas = kf_prompt_ideas_for (spec, KF_TARGET_HOST, &n);
    for (size_t i = 0; i < n; i++) {
        if (kf_prompt_idea_feature (ideas[i]) == KF_IDEA_THREADS)
            threads = i;
        if (kf_prompt_idea_feature (ideas[i]) == KF_IDEA_STREAM)
            stream = i;
    }
    CHECK (n >= 3 && n <= 16 && threads < n && stream < n);
    if (!(n >= 3 && n <= 16 && threads < n && stream < n)) {
        json_decref (spec);
        return;
    }
    kf_elite_t elites[2] = { { .candidate_id = 1, .speedup = 400 },
                             { .candidate_id = 2, .speedup = 300 } };
    unsigned features[2] = { s_child, S_BIT (KF_IDEA_STREAM) | S_BIT (KF_IDEA_SIMD) };
    kf_search_idea_sibling_t sibling = { .parent_id = 1, .idea = stream,
                                         .made = s_child | S_BIT (KF_IDEA_STREAM),
                                         .made_known = true };
    kf_search_idea_known_t known = { .chosen_built = -1, .siblings = &sibling,
                                     .n_siblings = 1 };
    size_t order[16];
    bool aside[16] = { false };
    for (size_t k = 0; k < n; k++)
        order[k] = (threads + n - 2 + k) % n;    //  slot 2 leans towards threads
    int pick = -1;
    size_t idx = kf_search_idea_fit_known (ideas, n, order, aside, 3, 2, elites, features, 2, -1,
                                           &elites[1], features[1], &known, &pick);
    printf ("converge: idea %zu (threads %zu), pick %d\n", idx, threads, pick);
    CHECK (!(idx == threads && pick < 0));
    json_decref (spec);
}

//  1. The switch is a search setting, on by default.
static void
s_test_switch (void)
{
    char *why = NULL;
    json_t *defaults = kf_search_defaults_load (NULL, &why);
    CHECK (json_is_true (json_object_get (defaults, "idea_credit")));
    json_decref (defaults);
    free (why);
    why = NULL;
    json_t *config = json_pack ("{s:b}", "idea_credit", 0), *out = json_object ();
    CHECK (kf_search_config_check (config, out, &why) == 0);
    free (why);
    json_decref (config);
    json_decref (out);
}

int
main (void)
{
    s_test_reader ();
    s_test_paragraph ();
    s_test_credit ();
    s_test_record ();
    s_test_prompt ();
    s_test_converge ();
    s_test_switch ();
    return kf_test_done ("test_round25_credit");
}
