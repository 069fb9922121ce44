/*  kf_refdata.c - maps the evaluation's reference data (kf_refdata.h).
 *
 *  Mapped, not read: a run's data is gigabytes at real sizes, and the
 *  child touches each set's tensors once to copy or compare them. The
 *  mapping is private and read-only, so nothing in the child can change
 *  the store's file through it.
 */
#include "kf_refdata.h"

#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

const char *
kf_refdata_map (const char *dir, json_t *job, size_t *size)
{
    *size = 0;
    const char *name = json_string_value (json_object_get (job, "reference_data_path"));
    if (!name || !*name || strchr (name, '/') || !strcmp (name, "..") || !strcmp (name, "."))
        name = "reference.bin";
    char path[4200];
    snprintf (path, sizeof path, "%s/%s", dir, name);
    int fd = open (path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0)
        return NULL;
    struct stat st;
    if (fstat (fd, &st) || !S_ISREG (st.st_mode)) {
        close (fd);
        return NULL;
    }
    if (st.st_size == 0) {
        close (fd);
        return "";
    }
    void *map = mmap (NULL, (size_t) st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    close (fd);
    if (map == MAP_FAILED)
        return NULL;
    *size = (size_t) st.st_size;
    return map;
}

void
kf_refdata_unmap (const char *data, size_t size)
{
    if (data && size)
        munmap ((void *) data, size);
}
