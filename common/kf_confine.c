/*  kf_confine.c - seccomp and Landlock for a process about to run
 *  untrusted code (kf_confine.h).
 */
#include "kf_confine.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#if defined(SYS_landlock_create_ruleset)
#include <linux/landlock.h>
#endif

#if defined(__x86_64__)
#define S_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define S_ARCH AUDIT_ARCH_AARCH64
#else
#error "kf_confine: add this architecture's AUDIT_ARCH"
#endif

// --------------------------------------------------------------------------
//  seccomp

#define S_MAX_INSNS 128

typedef struct {
    struct sock_filter insn[S_MAX_INSNS];
    int n;
} s_prog_t;

static void
s_emit (s_prog_t *p, struct sock_filter f)
{
    if (p->n < S_MAX_INSNS)
        p->insn[p->n++] = f;
}

#define S_LOAD(field) BPF_STMT (BPF_LD | BPF_W | BPF_ABS, offsetof (struct seccomp_data, field))
#define S_RET(action) BPF_STMT (BPF_RET | BPF_K, (action))
#define S_ERRNO(e) (SECCOMP_RET_ERRNO | ((e) & SECCOMP_RET_DATA))

//  Syscall NR gets ACTION.
static void
s_deny (s_prog_t *p, int nr, uint32_t action)
{
    s_emit (p, (struct sock_filter) BPF_JUMP (BPF_JMP | BPF_JEQ | BPF_K, (uint32_t) nr, 0, 1));
    s_emit (p, (struct sock_filter) S_RET (action));
}

//  Syscall NR is allowed when its first argument's low 32 bits, masked
//  with MASK (JSET) or equal to VALUE (JEQ), pass; otherwise EPERM.
static void
s_arg0 (s_prog_t *p, int nr, uint16_t test, uint32_t value)
{
    s_emit (p, (struct sock_filter) BPF_JUMP (BPF_JMP | BPF_JEQ | BPF_K, (uint32_t) nr, 0, 4));
    s_emit (p, (struct sock_filter) S_LOAD (args[0]));
    s_emit (p, (struct sock_filter) BPF_JUMP (BPF_JMP | test | BPF_K, value, 0, 1));
    s_emit (p, (struct sock_filter) S_RET (SECCOMP_RET_ALLOW));
    s_emit (p, (struct sock_filter) S_RET (S_ERRNO (EPERM)));
}

static int
s_seccomp (void)
{
    s_prog_t p = { .n = 0 };
    s_emit (&p, (struct sock_filter) S_LOAD (arch));
    s_emit (&p, (struct sock_filter) BPF_JUMP (BPF_JMP | BPF_JEQ | BPF_K, S_ARCH, 1, 0));
    s_emit (&p, (struct sock_filter) S_RET (SECCOMP_RET_KILL_PROCESS));
    s_emit (&p, (struct sock_filter) S_LOAD (nr));
#if defined(__x86_64__)
    //  The x32 ABI's numbers alias others: none of them at all.
    s_emit (&p, (struct sock_filter) BPF_JUMP (BPF_JMP | BPF_JGE | BPF_K, 0x40000000u, 0, 1));
    s_emit (&p, (struct sock_filter) S_RET (SECCOMP_RET_KILL_PROCESS));
#endif
    const uint32_t eperm = S_ERRNO (EPERM);
    //  No new process: threads only (glibc's pthread_create falls back
    //  from clone3, whose flags a filter cannot read, to clone).
    s_deny (&p, SYS_clone3, S_ERRNO (ENOSYS));
    s_arg0 (&p, SYS_clone, BPF_JSET, CLONE_THREAD);
#ifdef SYS_fork
    s_deny (&p, SYS_fork, eperm);
#endif
#ifdef SYS_vfork
    s_deny (&p, SYS_vfork, eperm);
#endif
    //  Signals to itself only.
    uint32_t self = (uint32_t) getpid ();
    s_arg0 (&p, SYS_kill, BPF_JEQ, self);
    s_arg0 (&p, SYS_tgkill, BPF_JEQ, self);
    static const int denied[] = {
        SYS_execve, SYS_execveat, SYS_ptrace, SYS_process_vm_readv, SYS_process_vm_writev,
        SYS_setsid, SYS_setpgid, SYS_socket, SYS_tkill, SYS_rt_sigqueueinfo,
        SYS_rt_tgsigqueueinfo, SYS_pidfd_open, SYS_pidfd_send_signal, SYS_pidfd_getfd,
        SYS_unshare, SYS_setns, SYS_mount, SYS_perf_event_open, SYS_bpf, SYS_userfaultfd,
        SYS_io_uring_setup, SYS_keyctl, SYS_add_key, SYS_request_key, SYS_kcmp,
    };
    for (size_t i = 0; i < sizeof denied / sizeof denied[0]; i++)
        s_deny (&p, denied[i], eperm);
    s_emit (&p, (struct sock_filter) S_RET (SECCOMP_RET_ALLOW));
    if (p.n >= S_MAX_INSNS) {
        errno = E2BIG;
        return -1;
    }
    struct sock_fprog prog = { .len = (unsigned short) p.n, .filter = p.insn };
    if (prctl (PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
        return -1;
    return prctl (PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0);
}

// --------------------------------------------------------------------------
//  Landlock

int
kf_confine_landlock_abi (void)
{
#if defined(SYS_landlock_create_ruleset)
    long abi = syscall (SYS_landlock_create_ruleset, NULL, 0, LANDLOCK_CREATE_RULESET_VERSION);
    return abi > 0 ? (int) abi : 0;
#else
    return 0;
#endif
}

#if defined(SYS_landlock_create_ruleset)

//  What a file (not a directory) may be given.
#define S_FILE_RIGHTS (LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_WRITE_FILE \
                       | LANDLOCK_ACCESS_FS_READ_FILE)
#define S_READ (LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_READ_DIR \
                | LANDLOCK_ACCESS_FS_EXECUTE)

//  PATH gets RIGHTS (those a file may have, when it is no directory).
//  A path that does not exist is skipped.
static int
s_rule (int ruleset, const char *path, uint64_t rights, uint64_t handled)
{
    int fd = open (path, O_PATH | O_CLOEXEC);
    if (fd < 0)
        return 0;
    struct stat st;
    if (fstat (fd, &st) == 0 && !S_ISDIR (st.st_mode))
        rights &= S_FILE_RIGHTS
#ifdef LANDLOCK_ACCESS_FS_TRUNCATE
                  | LANDLOCK_ACCESS_FS_TRUNCATE
#endif
                  ;
    struct landlock_path_beneath_attr pb = { .allowed_access = rights & handled,
                                             .parent_fd = fd };
    int rc = (int) syscall (SYS_landlock_add_rule, ruleset, LANDLOCK_RULE_PATH_BENEATH, &pb, 0);
    close (fd);
    return rc;
}

static int
s_landlock (int abi, const char *const *read_files, const char *const *write_dirs, char *why,
            size_t why_size)
{
    uint64_t fs = (LANDLOCK_ACCESS_FS_MAKE_SYM << 1) - 1;      // ABI 1
#ifdef LANDLOCK_ACCESS_FS_REFER
    if (abi >= 2)
        fs |= LANDLOCK_ACCESS_FS_REFER;
#endif
#ifdef LANDLOCK_ACCESS_FS_TRUNCATE
    if (abi >= 3)
        fs |= LANDLOCK_ACCESS_FS_TRUNCATE;
#endif
#ifdef LANDLOCK_ACCESS_FS_IOCTL_DEV
    if (abi >= 5)
        fs |= LANDLOCK_ACCESS_FS_IOCTL_DEV;
#endif
    struct landlock_ruleset_attr attr;
    memset (&attr, 0, sizeof attr);
    attr.handled_access_fs = fs;
    size_t attr_size = offsetof (struct landlock_ruleset_attr, handled_access_fs)
                       + sizeof attr.handled_access_fs;
#ifdef LANDLOCK_ACCESS_NET_CONNECT_TCP
    if (abi >= 4) {
        attr.handled_access_net = LANDLOCK_ACCESS_NET_BIND_TCP | LANDLOCK_ACCESS_NET_CONNECT_TCP;
        attr_size = offsetof (struct landlock_ruleset_attr, handled_access_net)
                    + sizeof attr.handled_access_net;
    }
#endif
#ifdef LANDLOCK_SCOPE_SIGNAL
    if (abi >= 6) {
        attr.scoped = LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET | LANDLOCK_SCOPE_SIGNAL;
        attr_size = offsetof (struct landlock_ruleset_attr, scoped) + sizeof attr.scoped;
    }
#endif
    int rs = (int) syscall (SYS_landlock_create_ruleset, &attr, attr_size, 0);
    if (rs < 0) {
        snprintf (why, why_size, "landlock_create_ruleset: %s", strerror (errno));
        return -1;
    }
    //  The system's libraries and what a runtime reads about the machine;
    //  /proc/self is the process's own entry only (ASan reads its maps).
    static const char *const system_read[] = {
        "/usr", "/lib", "/lib64", "/bin", "/etc/ld.so.cache", "/etc/ld.so.conf",
        "/etc/ld.so.conf.d", "/etc/localtime", "/proc/self", "/sys/devices/system/cpu",
        "/dev/zero", "/dev/urandom", "/dev/random", NULL
    };
    int rc = 0;
    for (int i = 0; system_read[i] && rc == 0; i++)
        rc = s_rule (rs, system_read[i], S_READ, fs);
    if (rc == 0)
        rc = s_rule (rs, "/dev/null", S_READ | LANDLOCK_ACCESS_FS_WRITE_FILE, fs);
    for (int i = 0; read_files && read_files[i] && rc == 0; i++)
        rc = s_rule (rs, read_files[i], S_READ, fs);
    for (int i = 0; write_dirs && write_dirs[i] && rc == 0; i++)
        rc = s_rule (rs, write_dirs[i], fs, fs);
    if (rc != 0) {
        snprintf (why, why_size, "landlock_add_rule: %s", strerror (errno));
        close (rs);
        return -1;
    }
    if (prctl (PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0
        || syscall (SYS_landlock_restrict_self, rs, 0) != 0) {
        snprintf (why, why_size, "landlock_restrict_self: %s", strerror (errno));
        close (rs);
        return -1;
    }
    close (rs);
    return 0;
}
#endif

int
kf_confine_self (const char *const *read_files, const char *const *write_dirs, char *report,
                 size_t report_size)
{
    char landlock[160] = "no landlock: the kernel offers none";
    int abi = kf_confine_landlock_abi ();
#if defined(SYS_landlock_create_ruleset)
    char why[120];
    if (abi > 0 && s_landlock (abi, read_files, write_dirs, why, sizeof why) == 0)
        snprintf (landlock, sizeof landlock, "landlock abi %d", abi);
    else if (abi > 0)
        snprintf (landlock, sizeof landlock, "no landlock: %s", why);
#else
    (void) read_files;
    (void) write_dirs;
    snprintf (landlock, sizeof landlock, "no landlock: built without its headers");
#endif
    if (s_seccomp () != 0) {
        snprintf (report, report_size, "seccomp filter refused: %s", strerror (errno));
        return -1;
    }
    snprintf (report, report_size, "seccomp, %s", landlock);
    return 0;
}
