/*  kf_eval_channel.c - the evaluation child's report to its worker
 *  (kf_eval_channel.h): a memfd only the two of them hold.
 */
#include "kf_eval_channel.h"
#include "kf_clock.h"
#include "kf_file.h"
#include "kf_subproc.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define S_STAMPS 8
#define S_CPU 56
#define S_LENGTH 64
#define S_RESULT 4096
#define S_SIZE ((size_t) 4 << 20)

static volatile char *s_map;       // the channel, in the child
static int s_final_fd = -1;        // the worker's final pipe, in the child
static struct { char *lo, *hi; } s_guards[256];
static volatile sig_atomic_t s_n_guards;

// --------------------------------------------------------------------------
//  Worker side

int
kf_eval_channel_new (void)
{
    int fd = memfd_create ("kf-verdict", MFD_CLOEXEC);
    if (fd < 0)
        return -1;
    if (ftruncate (fd, (off_t) S_SIZE) != 0) {
        int e = errno;
        close (fd);
        errno = e;
        return -1;
    }
    return fd;
}

char
kf_eval_channel_phase (int fd, double stamps[KF_EVAL_T_N])
{
    char head[S_STAMPS + KF_EVAL_T_N * sizeof (double)];
    memset (head, 0, sizeof head);
    if (pread (fd, head, sizeof head, 0) != (ssize_t) sizeof head)
        memset (head, 0, sizeof head);
    memcpy (stamps, head + S_STAMPS, KF_EVAL_T_N * sizeof (double));
    return head[0] ? head[0] : 'H';
}

json_t *
kf_eval_channel_result (int fd)
{
    uint64_t len = 0;
    if (pread (fd, &len, sizeof len, S_LENGTH) != (ssize_t) sizeof len
        || len == 0 || len > S_SIZE - S_RESULT)
        return NULL;
    char *buf = malloc (len);
    if (!buf)
        return NULL;
    json_t *result = NULL;
    if (pread (fd, buf, len, S_RESULT) == (ssize_t) len)
        result = json_loadb (buf, len, 0, NULL);
    free (buf);
    if (result && !json_is_object (result)) {
        json_decref (result);
        result = NULL;
    }
    return result;
}

bool
kf_eval_channel_whole (int fd)
{
    json_t *result = kf_eval_channel_result (fd);
    json_decref (result);
    return result != NULL;
}

double
kf_eval_channel_cpu (int fd)
{
    double cpu = 0;
    if (pread (fd, &cpu, sizeof cpu, S_CPU) != (ssize_t) sizeof cpu || !(cpu >= 0 && cpu < 1e9))
        return 0;
    return cpu;
}

// --------------------------------------------------------------------------
//  Child side

void
kf_eval_final_fd (int fd)
{
    struct stat st;
    if (fd > 2 && fstat (fd, &st) == 0 && S_ISFIFO (st.st_mode)
        && fcntl (fd, F_SETFD, FD_CLOEXEC) == 0)
        s_final_fd = fd;
}

//  The byte that says the result stored is final. Async signal safe.
static void
s_say_final (void)
{
    if (s_final_fd >= 0) {
        ssize_t rc = write (s_final_fd, "F", 1);
        (void) rc;
    }
}

//  The CPU seconds of the process in /proc/PID/stat, with its waited-for
//  children's (fields 14 to 17, after the command's closing parenthesis).
static double
s_proc_cpu (const char *pid)
{
    char path[64], buf[1024];
    snprintf (path, sizeof path, "/proc/%s/stat", pid);
    if (kf_file_read_proc (path, buf, sizeof buf) < 0)
        return 0;
    //  Fields 14 to 17: utime, stime, cutime, cstime.
    const char *p = kf_file_stat_field (buf, 14);
    unsigned long long t[4];
    if (!p || sscanf (p, "%llu %llu %llu %llu", &t[0], &t[1], &t[2], &t[3]) != 4)
        return 0;
    long hz = sysconf (_SC_CLK_TCK);
    return (double) (t[0] + t[1] + t[2] + t[3]) / (hz > 0 ? hz : 100);
}

//  CPU seconds of this process, of the children it waited for, and of
//  those it did not (the candidate's process, killed with us once the
//  result is out): what the worker counts for a child it does not wait
//  for (kf_subproc.h, ended_final).
static double
s_cpu_so_far (void)
{
    double cpu = 0;
    struct rusage ru;
    int who[] = { RUSAGE_SELF, RUSAGE_CHILDREN };
    for (int i = 0; i < 2; i++)
        if (getrusage (who[i], &ru) == 0)
            cpu += kf_subproc_rusage_s (&ru);
    DIR *tasks = opendir ("/proc/self/task");
    struct dirent *t;
    while (tasks && (t = readdir (tasks)) != NULL) {
        if (t->d_name[0] < '0' || t->d_name[0] > '9')
            continue;
        char path[300], list[1024];
        snprintf (path, sizeof path, "/proc/self/task/%s/children", t->d_name);
        if (kf_file_read_proc (path, list, sizeof list) < 0)
            continue;
        for (char *save = NULL, *pid = strtok_r (list, " \n", &save); pid;
             pid = strtok_r (NULL, " \n", &save))
            cpu += s_proc_cpu (pid);
    }
    if (tasks)
        closedir (tasks);
    return cpu;
}

double
kf_eval_now (void)
{
    return kf_clock_now ();
}

void
kf_eval_stamp (int which)
{
    if (s_map && which >= 0 && which < KF_EVAL_T_N) {
        double now = kf_eval_now ();
        memcpy ((char *) s_map + S_STAMPS + (size_t) which * sizeof (double), &now, sizeof now);
    }
}

void
kf_eval_set_phase (char phase)
{
    if (s_map)
        *s_map = phase;
}

void
kf_eval_add_guard (void *lo, size_t len)
{
    if (s_n_guards < (int) (sizeof s_guards / sizeof s_guards[0])) {
        s_guards[s_n_guards].lo = lo;
        s_guards[s_n_guards].hi = (char *) lo + len;
        s_n_guards++;
    }
}

//  Stores LEN bytes of TEXT as the result: the bytes first, the length
//  last, so the worker never reads a half-written result as whole.
//  Plain stores only: the fault handler uses it.
static void
s_put_result (const char *text, size_t len)
{
    if (!s_map || len > S_SIZE - S_RESULT)
        return;
    volatile char *to = s_map + S_RESULT;
    for (size_t i = 0; i < len; i++)
        to[i] = text[i];
    uint64_t n = len;
    __atomic_store ((uint64_t *) (s_map + S_LENGTH), &n, __ATOMIC_RELEASE);
}

void
kf_eval_write_result (const char *dir, json_t *result)
{
    (void) dir;
    char *text = json_dumps (result, JSON_COMPACT);
    size_t len = text ? strlen (text) : 0;
    if (!text || len > S_SIZE - S_RESULT) {
        free (text);
        static const char too_big[] = "{\"verdict\": \"harness_failed\", \"detail\":"
                                      " \"the result does not fit the channel\"}";
        s_put_result (too_big, sizeof too_big - 1);
    }
    else {
        s_put_result (text, len);
        free (text);
    }
    kf_eval_stamp (KF_EVAL_T_REPORTED);
    if (s_map) {
        double cpu = s_cpu_so_far ();
        memcpy ((char *) s_map + S_CPU, &cpu, sizeof cpu);
    }
    s_say_final ();
}

void
kf_eval_write_verdict (const char *dir, const char *verdict, const char *detail)
{
    json_t *r = json_pack ("{s:s, s:s}", "verdict", verdict, "detail", detail);
    kf_eval_write_result (dir, r);
    json_decref (r);
}

static size_t
s_append (char *buf, size_t at, size_t size, const char *s)
{
    while (*s && at + 1 < size)
        buf[at++] = *s++;
    buf[at] = 0;
    return at;
}

const char *
kf_eval_fault_what (int sig, int in_guard)
{
    switch (sig) {
    case SIGSEGV:
        return in_guard ? "out-of-bounds access (SIGSEGV)" : "invalid memory access (SIGSEGV)";
    case SIGBUS:
        return "bus error (SIGBUS)";
    case SIGFPE:
        return "arithmetic exception (SIGFPE)";
    case SIGILL:
        return "illegal instruction (SIGILL)";
    case SIGABRT:
        return "aborted (SIGABRT)";
    default:
        return "crashed";
    }
}

void
kf_eval_on_faults (void (*handler) (int, siginfo_t *, void *))
{
    static char altstack[64 * 1024];
    stack_t ss = { .ss_sp = altstack, .ss_size = sizeof altstack, .ss_flags = 0 };
    sigaltstack (&ss, NULL);
    struct sigaction sa;
    memset (&sa, 0, sizeof sa);
    sa.sa_sigaction = handler;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESETHAND;
    sigemptyset (&sa.sa_mask);
    int sigs[] = { SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT };
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++)
        sigaction (sigs[i], &sa, NULL);
}

static void
s_on_fault (int sig, siginfo_t *info, void *uctx)
{
    (void) uctx;
    char *addr = info ? (char *) info->si_addr : NULL;
    int in_guard = 0;
    for (int i = 0; i < s_n_guards; i++)
        in_guard |= addr >= s_guards[i].lo && addr < s_guards[i].hi;
    const char *what = kf_eval_fault_what (sig, in_guard);
    char phase = s_map ? *s_map : 'H';
    char buf[256];
    size_t n = 0;
    if (phase == 'R')
        n = s_append (buf, n, sizeof buf, "{\"verdict\": \"reference_failed\", \"detail\": \"reference: ");
    else if (phase == 'C')
        n = s_append (buf, n, sizeof buf, "{\"verdict\": \"crashed\", \"detail\": \"");
    else
        n = s_append (buf, n, sizeof buf, "{\"verdict\": \"crashed\", \"detail\": \"harness: ");
    n = s_append (buf, n, sizeof buf, what);
    n = s_append (buf, n, sizeof buf, "\"}");
    s_put_result (buf, n);
    s_say_final ();
    _exit (3);
}

int
kf_eval_child_begin (const char *dir)
{
    (void) dir;
    //  Nothing this process starts may inherit the channel, and no other
    //  process of our uid may reach it (or our memory) through /proc.
    struct stat st;
    if (fstat (KF_EVAL_CHANNEL_FD, &st) != 0 || (size_t) st.st_size != S_SIZE
        || fcntl (KF_EVAL_CHANNEL_FD, F_SETFD, FD_CLOEXEC) != 0)
        return -1;
    prctl (PR_SET_DUMPABLE, 0, 0, 0, 0);
    void *map = mmap (NULL, S_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, KF_EVAL_CHANNEL_FD, 0);
    if (map == MAP_FAILED)
        return -1;
    s_map = map;
    *s_map = 'H';
    kf_eval_stamp (KF_EVAL_T_BEGIN);

    kf_eval_on_faults (s_on_fault);
    return 0;
}
