/*  kf_rename.h - the user's file names given back in text a worker wrote
 *  (a compiler's log, a traceback), which names the file as the worker
 *  saved it: "kernel.c", "problem.py" (kf_rename.c).
 */
#ifndef KF_RENAME_H
#define KF_RENAME_H

#include <jansson.h>

/* TEXT with each use of the file name OURS (the worker's: "kernel.c",
 * "problem.py") as a whole name, not part of a longer one, written as
 * THEIRS (the user's own name for the file). When THEIRS holds a '/' (a
 * path the user gave), a folder written in front of OURS ("./kernel.c",
 * "/tmp/kf-build.x/kernel.c") goes with it. Caller frees; NULL when out
 * of memory. */
char *kf_rename_file (const char *text, const char *ours, const char *theirs);

/* The name a worker gives a source in LANGUAGE as it builds or runs it:
 * "kernel.c" (c), "kernel.cu" (cuda), "kernel.cl" (opencl), "kernel.cpp"
 * (sycl), "problem.py" (pytorch; the reference runner's). Borrowed. */
const char *kf_rename_worker_name (const char *language);

/* TEXT, a message about TASK's reference (a compiler's log, a reference
 * job's traceback), with the worker's name for the reference given back
 * as its "path" (the file as the user named it: kept by kf_task_load, set
 * by kfctl for a PyTorch problem). Without a path, a copy of TEXT.
 * Caller frees; NULL when out of memory. */
char *kf_rename_reference (json_t *task, const char *text);

#endif
