/*  kf_search_idea.h - the kernel each attempt's idea starts from.
 *
 *  Slot k of generation g leans towards idea (g * population + k) of the
 *  task's list (kf_prompt_class.c). Round 5 of issue 15 found the ideas
 *  handed to kernels that already did them (streaming stores to a kernel
 *  that streamed) and a threaded kernel that had lost handed on as the
 *  parent of ideas that have nothing to do with threads. The planner
 *  therefore keeps the selected parent only when it lacks the idea and
 *  no faster kernel that lacks it exists: else the parent is the fastest
 *  elite that lacks the idea (kf_search_plan.c calls this).
 */
#ifndef KF_SEARCH_IDEA_H
#define KF_SEARCH_IDEA_H

#include "kf_db.h"
#include "kf_select.h"
#include <jansson.h>
#include <stddef.h>

/* The elite of ELITES (N, with their SOURCES, in LANGUAGE) to start IDEA
 * from, given the selected CHOSEN (with CHOSEN_SOURCE): -1 keeps CHOSEN -
 * it lacks the idea, and so does no faster elite, or every elite does the
 * idea already - else the index of the fastest elite whose source lacks
 * the idea (kf_prompt_source_does). */
int kf_search_idea_pick (const char *idea, const char *language, const kf_elite_t *elites,
                         const char *const *sources, size_t n, const kf_elite_t *chosen,
                         const char *chosen_source);

/* As kf_search_idea_pick for the idea of (GENERATION, SLOT) of RUN (its
 * spec, target, language; POPULATION per generation), the sources read
 * from DB: the parent to use, CHOSEN when it stays (or on a database
 * error, or when the task has no ideas). */
const kf_elite_t *kf_search_idea_parent (kf_db_t *db, json_t *run, int population,
                                         int generation, int slot, const kf_elite_t *elites,
                                         size_t n, const kf_elite_t *chosen);

#endif
