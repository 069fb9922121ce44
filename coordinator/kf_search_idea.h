/*  kf_search_idea.h - the kernel each attempt's idea starts from.
 *
 *  Slot k of generation g leans towards idea (g * population + k) of the
 *  task's list (kf_prompt_class.c). Round 5 of issue 15 found the ideas
 *  handed to kernels that already did them (streaming stores to a kernel
 *  that streamed) and a threaded kernel that had lost handed on as the
 *  parent of ideas that have nothing to do with threads. The planner
 *  keeps the selected parent when it lacks the idea; one that already
 *  does it gives way to the first elite in the archive's order that
 *  lacks it, from the same island when the island strategy drew it
 *  (kf_search_plan.c calls this). Never by measured speed: the same
 *  archive (cells and sources) must give the same parent, so a search
 *  repeats (test_search_switches); the threaded loser of round 5 is
 *  therefore kept for an idea it lacks.
 */
#ifndef KF_SEARCH_IDEA_H
#define KF_SEARCH_IDEA_H

#include "kf_db.h"
#include "kf_select.h"
#include <jansson.h>
#include <stddef.h>

/* The elite of ELITES (N, with their SOURCES, in LANGUAGE; only those on
 * ISLAND when it is 0 or more) to start IDEA from, given the selected
 * CHOSEN (with CHOSEN_SOURCE): -1 keeps CHOSEN - it lacks the idea, or
 * every elite does it already - else the index of the first elite whose
 * source lacks the idea (kf_prompt_source_does). */
int kf_search_idea_pick (const char *idea, const char *language, const kf_elite_t *elites,
                         const char *const *sources, size_t n, int island,
                         const kf_elite_t *chosen, const char *chosen_source);

/* As kf_search_idea_pick for the idea of (GENERATION, SLOT) of RUN (its
 * spec, target, language; POPULATION per generation), the sources read
 * from DB: the parent to use, CHOSEN when it stays (or on a database
 * error, or when the task has no ideas). */
const kf_elite_t *kf_search_idea_parent (kf_db_t *db, json_t *run, int population,
                                         int generation, int slot, const kf_elite_t *elites,
                                         size_t n, int island, const kf_elite_t *chosen);

#endif
