/*  kf_prompt_threads_own.c - a threaded kernel's own time on one core
 *  set against its full timing, and how far its threads ran side by
 *  side (kf_prompt_threads.h). Moved out of kf_prompt_threads.c.
 */
#include "kf_prompt_threads.h"
#include "kf_json.h"
#include "kf_prompt_target.h"
#include <stdbool.h>
#include <stdio.h>

double
kf_prompt_threads_own_ns (json_t *k)
{
    return kf_jnum (json_object_get (k, "one_core"), "median_ns", 0);
}

double
kf_prompt_threads_side_by_side (json_t *k)
{
    return kf_jnum (json_object_get (k, "one_core"), "cpu_per_wall", 0);
}

//  A one-core time past this many times the CPU time a second the full
//  timing used, over the full timing, is more than its threads explain.
#define S_SUPERLINEAR 1.15

void
kf_prompt_threads_own_text (FILE *f, double ns, double one_ns, json_t *load, double cpu_per_wall)
{
    char one[32];
    kf_prompt_time_text (one_ns, one, sizeof one);
    fprintf (f, "on one core the same code takes %s a call (its process, every thread of it, "
             "held to one CPU; timed after its full timing): ", one);
    //  Round 32: "its threads buy 53% of the call" and, after it, "its
    //  threads hardly ran side by side there ...: the gap is not what its
    //  threads buy" read as two verdicts: where they hardly ran side by
    //  side the gap is only said.
    bool apart = cpu_per_wall > 0 && cpu_per_wall < KF_PROMPT_SIDE_BY_SIDE;
    if (ns < one_ns && apart)
        fprintf (f, "%.2f times its full timing's figure", one_ns / ns);
    //  Round 35: "its threads buy nothing here, 15% more time with them"
    //  and, after it, "the gap is not what its threads buy".
    else if (apart)
        fprintf (f, "its full timing took %.0f%% more time than that", 100 * (ns / one_ns - 1));
    else if (ns < one_ns) {
        fprintf (f, "its threads buy %.0f%% of the call (on one core it takes %.2f times as "
                 "long)", 100 * (1 - ns / one_ns), one_ns / ns);
        //  Round 36: 2.33 times on 2 CPUs, its one-core time slower than a
        //  one-thread kernel of the same tile: more than its CPU time
        //  explains.
        if (cpu_per_wall > 0 && one_ns / ns > S_SUPERLINEAR * cpu_per_wall)
            fprintf (f, ", more than the %.2f CPU-seconds a second its process used can account "
                     "for: the one-core figure holds more than its code's time (other work "
                     "then, or its threads taking turns on one CPU and evicting each other's "
                     "cached data), so its code on one thread may be faster than that",
                     cpu_per_wall);
    }
    else
        fprintf (f, "its threads buy nothing here, %.0f%% more time with them than on one core",
                 100 * (ns / one_ns - 1));
    //  Round 22: "its threads buy 40%" (11.2 ms on one CPU, taken beside
    //  other work) where the same math on one thread had taken 6.63 ms on
    //  a quiet host, quoted as like for like.
    char text[240];
    if (kf_prompt_load_busy (load) && kf_prompt_load_cores (load, false, text, sizeof text))
        fprintf (f, "; but both were timed beside other work (%s), which may take a larger "
                 "share of one CPU than of all of them, so this is not like for like", text);
    //  Round 25: "its threads buy 4%" of a kernel that starts its helper
    //  thread only when the host looks idle: whether its threads ran at
    //  all in the timing is what its CPU time per second of calls says.
    if (apart)
        fprintf (f, "; in its full timing its process used %.2f CPU-seconds a second of its "
                 "calls, so its threads hardly ran side by side there (they did not start, or "
                 "waited for CPUs other work held): it ran on about one CPU at a time in both "
                 "timings, so the gap between them is the load each met, not what its threads "
                 "buy, and what they would buy with free CPUs is not measured",
                 cpu_per_wall);
}
