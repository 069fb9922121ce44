/*  test_retune.c - a tuning round reuses the template a kernel already
 *  has instead of asking a model to template it again (flagged by the
 *  model in the loop, issue 15; coordinator/kf_retune.c): the winning
 *  point of the last sweep is found (full-protocol figures first) and
 *  made the template's defaults, nothing else of the source changing,
 *  so the next sweep's one-parameter moves (common/kf_tune.c) explore
 *  around it.
 */
#include "../kf_test.h"
#include "../../coordinator/kf_retune.h"
#include "../../common/kf_tune.h"
#include <stdlib.h>
#include <string.h>

static const char s_template[] =
    "/* kf-tune: BLOCK=32,64,128 VEC=1,2,4 MODE=FAST,SAFE */\n"
    "#ifndef BLOCK\n"
    "#define BLOCK 64   /* rows per step */\n"
    "#endif\n"
    "#ifndef VEC\n"
    "#  define VEC 1\n"
    "#endif\n"
    "#ifndef MODE\n"
    "#define MODE FAST\n"
    "#endif\n"
    "#define BLOCKS_PER_CALL 4\n"
    "int kf_forward (void) { return BLOCK * VEC; }\n";

int
main (void)
{
    CHECK (kf_retune_is_template (s_template));
    CHECK (!kf_retune_is_template ("int kf_forward (void) { return 0; }\n"));
    CHECK (!kf_retune_is_template (NULL));

    //  The winner: the full-protocol figure counts over a faster screen.
    json_t *configs = json_pack (
        "[{s:{s:i, s:i, s:s}, s:s, s:f, s:s},"
        " {s:{s:i, s:i, s:s}, s:s, s:f, s:s, s:f},"
        " {s:{s:i, s:i, s:s}, s:s, s:f, s:s},"
        " {s:{s:i, s:i, s:s}, s:s, s:f, s:s}]",
        "params", "BLOCK", 64, "VEC", 1, "MODE", "FAST", "verdict", "correct", "speedup", 2.0,
        "fidelity", "screen",
        "params", "BLOCK", 128, "VEC", 4, "MODE", "SAFE", "verdict", "correct", "speedup", 5.0,
        "fidelity", "screen", "full_speedup", 3.1,
        "params", "BLOCK", 32, "VEC", 2, "MODE", "FAST", "verdict", "correct", "speedup", 6.0,
        "fidelity", "screen",
        "params", "BLOCK", 32, "VEC", 4, "MODE", "FAST", "verdict", "incorrect", "speedup", 9.0,
        "fidelity", "screen");
    json_t *won = kf_retune_winner (configs);
    CHECK (won == json_array_get (configs, 1));
    //  Without any full figure: the fastest correct screen.
    json_object_del (json_array_get (configs, 1), "full_speedup");
    CHECK (kf_retune_winner (configs) == json_array_get (configs, 2));
    CHECK (kf_retune_winner (NULL) == NULL);

    //  The winner made the defaults; the rest of the source as it was.
    bool changed = false;
    char *src = kf_retune_source (s_template, json_object_get (won, "params"), &changed);
    CHECK (src != NULL && changed);
    if (src) {
        printf ("%s", src);
        CHECK (strstr (src, "#define BLOCK 128   /* rows per step */\n") != NULL);
        CHECK (strstr (src, "#  define VEC 4\n") != NULL);
        CHECK (strstr (src, "#define MODE SAFE\n") != NULL);
        CHECK (strstr (src, "#define BLOCKS_PER_CALL 4\n") != NULL);
        CHECK (strstr (src, "kf-tune: BLOCK=32,64,128 VEC=1,2,4 MODE=FAST,SAFE") != NULL);
        CHECK (strlen (src) == strlen (s_template) + 1);
        //  The sweep of the new source starts at the winner.
        kf_tune_t *t = kf_tune_new (src, strlen (src), 8);
        CHECK (t != NULL);
        json_t *first = t ? kf_tune_config_json (t, 0) : NULL;
        json_t *want = json_pack ("{s:i, s:i, s:s}", "BLOCK", 128, "VEC", 4, "MODE", "SAFE");
        CHECK (first && json_equal (first, want));
        json_decref (want);
        json_decref (first);
        kf_tune_destroy (&t);
    }
    free (src);
    //  The defaults already won: nothing moves.
    json_t *same = json_pack ("{s:i, s:i, s:s}", "BLOCK", 64, "VEC", 1, "MODE", "FAST");
    src = kf_retune_source (s_template, same, &changed);
    CHECK (src && !strcmp (src, s_template) && !changed);
    free (src);
    json_decref (same);

    //  Round 22: a sweep whose winner is the template's own defaults has
    //  converged (a sweep around it is the same sweep); one whose winner
    //  moved has not, nor a table of one point, nor a plain kernel. One
    //  call gives the re-centred source, its winner and that answer.
    json_t *winner = NULL;
    bool converged = true;
    src = kf_retune_recentre (s_template, configs, &winner, &converged);
    CHECK (src && !converged && winner == json_array_get (configs, 2));
    CHECK (src && strstr (src, "#define BLOCK 32   /* rows per step */\n") != NULL);
    free (src);
    json_t *stayed = json_pack ("[{s:{s:i, s:i, s:s}, s:s, s:f, s:s, s:f},"
                                " {s:{s:i, s:i, s:s}, s:s, s:f, s:s, s:f}]",
                                "params", "BLOCK", 64, "VEC", 1, "MODE", "FAST", "verdict",
                                "correct", "speedup", 4.0, "fidelity", "screen",
                                "full_speedup", 3.9,
                                "params", "BLOCK", 128, "VEC", 1, "MODE", "FAST", "verdict",
                                "correct", "speedup", 4.2, "fidelity", "screen",
                                "full_speedup", 3.5);
    src = kf_retune_recentre (s_template, stayed, &winner, &converged);
    CHECK (src && !strcmp (src, s_template) && converged);
    CHECK (winner == json_array_get (stayed, 0));
    free (src);
    const char *plain = "int kf_forward (void) { return 0; }\n";
    src = kf_retune_recentre (plain, stayed, NULL, &converged);
    CHECK (src && !strcmp (src, plain) && !converged);
    free (src);
    json_t *one = json_pack ("[O]", json_array_get (stayed, 0));
    src = kf_retune_recentre (s_template, one, NULL, &converged);
    CHECK (src && !strcmp (src, s_template) && !converged);
    free (src);
    json_decref (one);
    //  No correct point: the source as it is, no winner.
    json_t *none = json_pack ("[{s:{s:i}, s:s}, {s:{s:i}, s:s}]", "params", "BLOCK", 32,
                              "verdict", "incorrect", "params", "BLOCK", 128, "verdict",
                              "incorrect");
    src = kf_retune_recentre (s_template, none, &winner, &converged);
    CHECK (src && !strcmp (src, s_template) && !converged && winner == NULL);
    free (src);
    json_decref (none);
    //  The second point's full figure now wins: the defaults moved.
    json_object_set_new (json_array_get (stayed, 1), "full_speedup", json_real (4.1));
    src = kf_retune_recentre (s_template, stayed, &winner, &converged);
    CHECK (src && !converged && winner == json_array_get (stayed, 1));
    CHECK (src && strstr (src, "#define BLOCK 128   /* rows per step */\n") != NULL);
    free (src);
    json_decref (stayed);
    json_decref (configs);
    return kf_test_done ("test_retune");
}
