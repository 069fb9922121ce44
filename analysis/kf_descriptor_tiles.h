/*  kf_descriptor_tiles.h - whether a kernel's shared / local arrays are
 *  tiles or scratch, for the descriptors' memory dimension.
 *
 *  Declaring `__shared__` (`__local`, a local_accessor) is not tiling by
 *  itself: most reductions keep their partial sums there. An array is a
 *  tile when something stages input into it and nothing reduces in place,
 *  or when it is handed to a copy routine (kf_descriptor_tiles.c says
 *  how each is read).
 */
#ifndef KF_DESCRIPTOR_TILES_H
#define KF_DESCRIPTOR_TILES_H

#include <stddef.h>

/* Counts the tiles in CODE (comments and strings blanked; LANGUAGE cuda,
 * opencl or sycl); *SCRATCH gets the number of shared arrays that are not
 * tiles. The first of each is named in TILE_SNIP / SCRATCH_SNIP (SIZE
 * bytes each). */
int kf_descriptor_tiles (const char *code, const char *language, int *scratch,
                         char *tile_snip, char *scratch_snip, size_t size);

#endif
