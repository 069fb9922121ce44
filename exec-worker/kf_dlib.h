/*  kf_dlib.h - a device runtime's library, found when it is asked for.
 *
 *  The exec worker links none of CUDA, Level Zero or OpenCL: each API
 *  table (kf_cuda_api.c, kf_ze_api.c, kf_ocl_api.c) opens its library
 *  through here, so the worker starts on a machine without any of them.
 */
#ifndef KF_DLIB_H
#define KF_DLIB_H

#include <stddef.h>

/* The library the environment variable ENV names (only it, when set), or
 * else the first of NAMES (NULL-terminated) that loads, opened with
 * dlopen FLAGS; PATH gets the name it was loaded by. NULL with WHY:
 * "cannot load ENV=FILE: ..." or MISSING. */
void *kf_dlib_open (const char *env, const char *const *names, int flags, const char *missing,
                    char *path, size_t path_size, char *why, size_t why_size);

#endif
