/*  kf-compile-worker - builds candidate kernels for the coordinator.
 *
 *  Thin by design: load the configuration, describe what this host can
 *  build, and hand compile jobs to kf_compile_handle through the shared
 *  worker loop until SIGINT or SIGTERM.
 */
#include "kf_compile.h"
#include "kf_config.h"
#include "kf_log.h"
#include "kf_str.h"
#include "kf_worker.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static const kf_cfg_entry_t s_table[] = {
    KF_WORKER_CFG_KEYS ("2", "compiles run at once"),
    { "compile_time_limit_s", KF_CFG_DOUBLE, "60", 1, 3600,
      "wall-clock limit of one compiler run" },
    { "cache_dir", KF_CFG_STR, NULL, 0, -1,
      "compile cache folder; 'off' disables it (default: $XDG_CACHE_HOME or ~/.cache, then kernelfoundry/compile)" },
    { "cache_max_mb", KF_CFG_INT, "2048", 1, 1048576, "compile cache size cap" },
    { "tune_max_configs", KF_CFG_INT, "16", 1, 16,
      "most kf-tune points built for one source (a run asks for fewer with its tune setting)" },
    { "tune_parallel", KF_CFG_INT, "2", 1, 64, "kf-tune points built at once within one job" },
    KF_CFG_END
};

/* The cache folder from the cache_dir key: "off" is none, unset is the
 * user's cache folder. Creates the folders; caller frees. */
static char *
s_cache_dir (const char *value)
{
    if (value && !strcmp (value, "off"))
        return NULL;
    char *dir = NULL;
    if (value && *value)
        dir = strdup (value);
    else {
        const char *xdg = getenv ("XDG_CACHE_HOME");
        const char *home = getenv ("HOME");
        dir = kf_strdupf ("%s%s/kernelfoundry", xdg && *xdg ? xdg : home ? home : "/tmp",
                          xdg && *xdg ? "" : "/.cache");
        if (dir) {
            /* The parents first; the cache creates its own leaf. */
            char *p = dir;
            while ((p = strchr (p + 1, '/'))) {
                *p = 0;
                mkdir (dir, 0755);
                *p = '/';
            }
            mkdir (dir, 0755);
            char *leaf = kf_strdupf ("%s/compile", dir);
            free (dir);
            dir = leaf;
        }
    }
    return dir;
}

int
main (int argc, char **argv)
{
    int code;
    kf_config_t *config = kf_config_daemon ("kf-compile-worker", s_table, argc, argv, &code);
    if (!config)
        return code;

    char *cache_dir = s_cache_dir (kf_config_str (config, "cache_dir"));
    kf_compile_config_t compile = {
        .time_limit_s = kf_config_double (config, "compile_time_limit_s"),
        .output_cap = 64 * 1024,
        .cache_dir = cache_dir,
        .cache_max_bytes = (size_t) kf_config_int (config, "cache_max_mb") << 20,
        .tune_max_configs = (int) kf_config_int (config, "tune_max_configs"),
        .tune_parallel = (int) kf_config_int (config, "tune_parallel"),
    };
    kf_info ("compile cache: %s", cache_dir ? cache_dir : "off");
    json_t *caps = kf_compile_capabilities ();
    kf_info ("capabilities: backends %zu, cc %s, nvcc %s",
             json_array_size (json_object_get (caps, "backends")),
             json_string_value (json_object_get (json_object_get (caps, "toolchains"), "cc"))
                 ? "found" : "missing",
             json_string_value (json_object_get (json_object_get (caps, "toolchains"), "nvcc"))
                 ? "found" : "missing");

    int rc = kf_worker_main (config, "compile", caps, kf_compile_handle, &compile);
    json_decref (caps);
    free (cache_dir);
    kf_config_destroy (&config);
    return rc;
}
