/*  kf_sandbox.c - the sandbox as a worker sees it (kf_sandbox.h): on or
 *  off, a probe at start-up, and what to tell the operator when the host
 *  refuses it. The view itself is kf_sandbox_view.c.
 */
#include "kf_sandbox.h"
#include "kf_log.h"
#include "kf_subproc.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static struct {
    pthread_mutex_t lock;
    bool off;
    bool warned[8];
    char last[1024];         //  the last refusal, for kf_sandbox_probe
} s_cfg = { .lock = PTHREAD_MUTEX_INITIALIZER };

void
kf_sandbox_set_isolation (bool on)
{
    s_cfg.off = !on;
}

bool
kf_sandbox_isolation (void)
{
    return !s_cfg.off;
}

const char *
kf_sandbox_mode (void)
{
    if (s_cfg.off)
        return "off";
    return geteuid () == 0 ? "namespaces, uid per run" : "namespaces";
}

void
kf_sandbox_explain (int stage, int err, char *why, size_t why_size)
{
    const char *ways =
        "allow unprivileged user namespaces (Debian: sysctl kernel.unprivileged_userns_clone=1; "
        "Ubuntu 23.10 and later: sysctl kernel.apparmor_restrict_unprivileged_userns=0, or the "
        "AppArmor profile in deploy/apparmor; everywhere: sysctl user.max_user_namespaces > 0; "
        "in a container: the seccomp profile in deploy/seccomp and AppArmor unconfined; see "
        "docs/security.md), or run the worker as root (with CAP_SYS_ADMIN), or pass "
        "--no-isolation (trusted code only)";
    if (stage == KF_SANDBOX_STAGE_VIEW)
        snprintf (why, why_size, "the sandbox's private view could not be built (mount: %s): "
                  "on Ubuntu 23.10 and later AppArmor leaves a new user namespace without the "
                  "right to mount (sysctl kernel.apparmor_restrict_unprivileged_userns=0, or the "
                  "profile in deploy/apparmor); in a container a new /proc needs the host's "
                  "unmasked (docker run --security-opt systempaths=unconfined; Kubernetes "
                  "securityContext.procMount: Unmasked) and AppArmor must allow mounts "
                  "(apparmor=unconfined); or pass --no-isolation (trusted code only)",
                  strerror (err));
    else if (stage == KF_SANDBOX_STAGE_INIT)
        snprintf (why, why_size, "the sandbox's init could not start (%s)", strerror (err));
    else if (err == ENOSPC)
        snprintf (why, why_size, "the kernel has no namespaces left to give (unshare: %s): "
                  "user.max_user_namespaces or a max_*_namespaces sysctl is 0 or used up; %s",
                  strerror (err), ways);
    else if (err == EINVAL || err == ENOSYS)
        snprintf (why, why_size, "the kernel offers no user, mount, network, PID or IPC "
                  "namespaces (unshare: %s); %s", strerror (err), ways);
    else
        snprintf (why, why_size, "the kernel refused new namespaces (unshare: %s); %s",
                  strerror (err), ways);
}

void
kf_sandbox_failed (int stage, int err)
{
    char why[1024];
    kf_sandbox_explain (stage, err, why, sizeof why);
    pthread_mutex_lock (&s_cfg.lock);
    bool first = !s_cfg.warned[stage & 7];
    s_cfg.warned[stage & 7] = true;
    snprintf (s_cfg.last, sizeof s_cfg.last, "%s", why);
    pthread_mutex_unlock (&s_cfg.lock);
    if (first)
        kf_error ("no sandboxed run can start: %s", why);
}

// --------------------------------------------------------------------------
//  The probe

int
kf_sandbox_probe (char *why, size_t why_size)
{
    why[0] = 0;
    if (s_cfg.off)
        return 0;
    kf_subproc_limits_t limits;
    kf_subproc_limits_default (&limits);
    limits.time_limit_s = 30;
    char *dir = kf_subproc_workdir (&limits);
    if (!dir) {
        snprintf (why, why_size, "no temporary folder: %s", strerror (errno));
        return -1;
    }
    //  A run that starts at all had its namespaces and its view built.
    char *argv[] = { "sh", "-c", "test -w .", NULL };
    kf_subproc_result_t run;
    int rc = kf_subproc_run (argv, &limits, &run);
    int err = errno;
    if (rc != 0) {
        pthread_mutex_lock (&s_cfg.lock);
        if (s_cfg.last[0])
            snprintf (why, why_size, "%s", s_cfg.last);
        else
            snprintf (why, why_size, "a sandboxed test run could not start: %s", strerror (err));
        pthread_mutex_unlock (&s_cfg.lock);
    }
    else if (run.exit_code != 0)
        snprintf (why, why_size, "a sandboxed test run failed (exit %d, signal %d): %.200s",
                  run.exit_code, run.signal, run.output);
    if (rc == 0)
        kf_subproc_result_free (&run);
    kf_subproc_rmtree (dir);
    free (dir);
    return why[0] ? -1 : 0;
}

int
kf_sandbox_setup (bool no_isolation, bool probe)
{
    if (no_isolation) {
        kf_sandbox_set_isolation (false);
        kf_warn ("NO ISOLATION (--no-isolation): candidates and compilers run in this "
                 "worker's own view of the host%s: they can read what it can read (its CURVE "
                 "key, other jobs' folders), reach the network and every socket, and leave "
                 "files behind. For trusted code only; 'kfctl workers' shows isolation off",
                 geteuid () == 0 ? " (as a uid of their own)" : ", as its own user");
        return 0;
    }
    char why[1024];
    if (!probe)
        return 0;
    if (kf_sandbox_probe (why, sizeof why) != 0) {
        kf_error ("cannot isolate candidates and compilers, so this worker does not start: %s",
                  why);
        return -1;
    }
    kf_info ("isolation: %s", kf_sandbox_mode ());
    return 0;
}
