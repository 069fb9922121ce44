/*  kf_host_threads.c - whether a host kernel starts threads, read from
 *  its shared object's dynamic symbols (kf_host_eval.h).
 *
 *  The judge must not load the candidate, and a kernel's threads on a
 *  busy host may not run side by side, so its CPU time says too little:
 *  a kernel that starts threads imports what starts them (pthread_create,
 *  thrd_create, OpenMP's GOMP_parallel* or __kmpc_fork_call, clone).
 */
#include "kf_host_eval.h"

#include <elf.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

static bool
s_starter (const char *name)
{
    static const char *const exact[] = { "pthread_create", "thrd_create", "__kmpc_fork_call",
                                         "clone", "clone3" };
    for (size_t i = 0; i < sizeof exact / sizeof exact[0]; i++)
        if (!strcmp (name, exact[i]))
            return true;
    return !strncmp (name, "GOMP_parallel", 13) || !strncmp (name, "pthread_create@", 15);
}

//  The undefined symbols of the ELF64 image P (SIZE bytes): whether one
//  starts threads.
static bool
s_imports_starter (const unsigned char *p, size_t size)
{
    if (size < sizeof (Elf64_Ehdr) || memcmp (p, ELFMAG, SELFMAG) || p[EI_CLASS] != ELFCLASS64)
        return false;
    const Elf64_Ehdr *eh = (const Elf64_Ehdr *) p;
    if (eh->e_shentsize != sizeof (Elf64_Shdr) || eh->e_shoff > size
        || (size - eh->e_shoff) / sizeof (Elf64_Shdr) < eh->e_shnum)
        return false;
    const Elf64_Shdr *sh = (const Elf64_Shdr *) (p + eh->e_shoff);
    for (int i = 0; i < eh->e_shnum; i++) {
        if (sh[i].sh_type != SHT_DYNSYM || sh[i].sh_link >= eh->e_shnum)
            continue;
        const Elf64_Shdr *str = &sh[sh[i].sh_link];
        if (sh[i].sh_offset > size || size - sh[i].sh_offset < sh[i].sh_size
            || str->sh_offset > size || size - str->sh_offset < str->sh_size)
            return false;
        const Elf64_Sym *sym = (const Elf64_Sym *) (p + sh[i].sh_offset);
        const char *names = (const char *) p + str->sh_offset;
        for (size_t k = 0; k < sh[i].sh_size / sizeof *sym; k++) {
            if (sym[k].st_shndx != SHN_UNDEF || sym[k].st_name >= str->sh_size)
                continue;
            const char *name = names + sym[k].st_name;
            if (memchr (name, 0, str->sh_size - sym[k].st_name) && s_starter (name))
                return true;
        }
    }
    return false;
}

bool
kf_host_so_starts_threads (const char *path)
{
    int fd = open (path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return false;
    struct stat st;
    bool found = false;
    if (fstat (fd, &st) == 0 && st.st_size > 0) {
        void *p = mmap (NULL, (size_t) st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
        if (p != MAP_FAILED) {
            found = s_imports_starter (p, (size_t) st.st_size);
            munmap (p, (size_t) st.st_size);
        }
    }
    close (fd);
    return found;
}
