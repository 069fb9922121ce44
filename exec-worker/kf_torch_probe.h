/*  kf_torch_probe.h - the Python that imports torch, found once a boot.
 *
 *  An exec worker asks each candidate interpreter (kf_python_candidates)
 *  in the jobs' sandbox whether it imports torch and whether CUDA works:
 *  an import of torch, 1.5 s of CPU on the 2-core test VM and more under
 *  load, at every start. The answer is kept in a file (a worker's option
 *  `python_found`) and a later start takes it back without running
 *  Python where nothing it depends on changed: the same boot
 *  (/proc/sys/kernel/random/boot_id), the same NVIDIA driver and
 *  CUDA_VISIBLE_DEVICES, the same candidates, each resolving to the same
 *  file (device, inode, size and modification time, or absent), and
 *  torch's __init__.py and version.py as they were. The file counts only
 *  when it is a regular file owned by this user and writable by no one
 *  else. No answer is kept where no candidate imports torch: a start then
 *  asks again (a failed import is quick).
 */
#ifndef KF_TORCH_PROBE_H
#define KF_TORCH_PROBE_H

#include <stdbool.h>

typedef struct {
    char *python;      /* the interpreter to run; NULL when none imports torch */
    char *version;     /* torch.__version__ */
    bool cuda;         /* torch.cuda.is_available () in the sandbox */
    char *tried;       /* "A (why), B (why)": the candidates before it that failed */
    bool kept;         /* taken from KEEP without running Python */
} kf_torch_found_t;

/* Finds the first of kf_python_candidates (CONFIGURED) that imports
 * torch in the jobs' sandbox, into *OUT (caller frees with
 * kf_torch_found_free); KEEP: the file the answer is kept in (NULL: none).
 * Returns 0, or -1 when out of memory. */
int kf_torch_find (const char *configured, const char *keep, kf_torch_found_t *out);

void kf_torch_found_free (kf_torch_found_t *found);

#endif
