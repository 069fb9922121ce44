/*  kf-exec-worker - judges and times candidate kernels for the coordinator.
 *
 *  The same binary is the evaluation child: "--eval-child DIR" is handled
 *  before anything else (no configuration, no sockets), because the
 *  handler re-executes this program in the sandbox for every evaluation.
 *  Where a Python with torch is found it also runs PyTorch reference jobs
 *  (kf_torch_ref.h) and says so under "torch" in its capabilities.
 */
#include "kf_config.h"
#include "kf_exec.h"
#include "kf_log.h"
#include "kf_str.h"
#include "kf_torch_ref.h"
#include "kf_worker.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static const kf_cfg_entry_t s_table[] = {
    KF_WORKER_CFG_KEYS ("1", "evaluations at once (1: timings do not disturb each other)"),
    { "backend", KF_CFG_STR, "host", 0, -1, "where kernels run: host, cuda or level-zero" },
    { "device", KF_CFG_INT, "0", 0, 63, "GPU this worker serves (cuda; one worker process per GPU)" },
    { "eval_time_limit_s", KF_CFG_DOUBLE, "120", 1, 3600,
      "wall-clock limit of one evaluation" },
    { "python", KF_CFG_STR, NULL, 0, -1,
      "Python with torch for reference jobs (default: the first of $KF_PYTHON, "
      "/opt/torch/.venv/bin/python3, /usr/bin/python3, python3 on PATH that imports torch)" },
    { "reference_cache_dir", KF_CFG_STR, NULL, 0, -1,
      "reference result cache; 'off' disables it (default: $XDG_CACHE_HOME or ~/.cache, "
      "then kernelfoundry/reference)" },
    { "reference_cache_max_mb", KF_CFG_INT, "4096", 1, 1048576, "reference cache size cap" },
    { "reference_time_limit_s", KF_CFG_DOUBLE, "600", 1, 7200,
      "wall-clock limit of one reference job (torch.compile included)" },
    KF_CFG_END
};

/* The reference cache folder: "off" is none, unset is the user's cache
 * folder. Creates the parents; the cache makes its own leaf. Caller frees. */
static char *
s_cache_dir (const char *value)
{
    if (value && !strcmp (value, "off"))
        return NULL;
    if (value && *value)
        return strdup (value);
    const char *xdg = getenv ("XDG_CACHE_HOME");
    const char *home = getenv ("HOME");
    char *dir = kf_strdupf ("%s%s/kernelfoundry", xdg && *xdg ? xdg : home ? home : "/tmp",
                            xdg && *xdg ? "" : "/.cache");
    if (!dir)
        return NULL;
    for (char *p = dir; (p = strchr (p + 1, '/'));) {
        *p = 0;
        mkdir (dir, 0755);
        *p = '/';
    }
    mkdir (dir, 0755);
    char *leaf = kf_strdupf ("%s/reference", dir);
    free (dir);
    return leaf;
}

int
main (int argc, char **argv)
{
    if (argc >= 3 && strcmp (argv[1], "--eval-child") == 0)
        return kf_exec_child_main (argv[2]);

    int code;
    kf_config_t *config = kf_config_daemon ("kf-exec-worker", s_table, argc, argv, &code);
    if (!config)
        return code;

    const char *backend = kf_config_str (config, "backend");
    int device = (int) kf_config_int (config, "device");
    char *error = NULL;
    json_t *caps = kf_exec_probe (backend, device, &error);
    if (!caps) {
        fprintf (stderr, "kf-exec-worker: %s\n", error);
        free (error);
        kf_config_destroy (&config);
        return 2;
    }
    //  PyTorch references: optional, so a host without torch still
    //  evaluates kernels; the coordinator routes reference jobs by the
    //  "torch" capability.
    char *cache_dir = s_cache_dir (kf_config_str (config, "reference_cache_dir"));
    char *default_device = strcmp (backend, "cuda") == 0 ? kf_strdupf ("cuda:%d", device)
                                                         : strdup ("cpu");
    kf_torch_ref_config_t ref_config = {
        .python = kf_config_str (config, "python"),
        .cache_dir = cache_dir,
        .cache_max_bytes = (size_t) kf_config_int (config, "reference_cache_max_mb") << 20,
        .default_device = default_device,
        .time_limit_s = kf_config_double (config, "reference_time_limit_s"),
    };
    kf_torch_ref_t *torch_ref = kf_torch_ref_new (&ref_config);
    json_t *torch_caps = kf_torch_ref_capability (torch_ref);
    if (torch_caps)
        json_object_set_new (caps, "torch", torch_caps);
    kf_torch_ref_set_shared (torch_ref);

    kf_exec_config_t exec = {
        .worker_path = NULL,
        .backend = backend,
        .device = device,
        .time_limit_s = kf_config_double (config, "eval_time_limit_s"),
    };
    int rc = kf_worker_main (config, "execute", caps, kf_exec_handle, &exec);
    kf_torch_ref_set_shared (NULL);
    kf_torch_ref_destroy (&torch_ref);
    free (default_device);
    free (cache_dir);
    json_decref (caps);
    kf_config_destroy (&config);
    return rc;
}
