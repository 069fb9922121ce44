/*  kf_perf_gate.c - perf stat's counters on around the candidate's timed
 *  calls (kf_perf_gate.h).
 */
#include "kf_perf_gate.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <string.h>
#include <unistd.h>

void
kf_perf_gate_open (kf_perf_gate_t *g, json_t *control)
{
    memset (g, 0, sizeof *g);
    g->ctl = g->ack = -1;
    const char *ctl = json_string_value (json_object_get (control, "ctl"));
    const char *ack = json_string_value (json_object_get (control, "ack"));
    if (!ctl || !ack)
        return;
    //  perf holds both open read-write, so neither open waits; the
    //  answer is read with poll, never blocking past its limit.
    g->ctl = open (ctl, O_WRONLY | O_NONBLOCK | O_CLOEXEC);
    g->ack = open (ack, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    unlink (ctl);
    unlink (ack);
    if (g->ctl < 0 || g->ack < 0)
        kf_perf_gate_close (g);
}

void
kf_perf_gate_set (kf_perf_gate_t *g, bool on)
{
    if (g->ctl < 0 || g->on == on)
        return;
    const char *cmd = on ? "enable\n" : "disable\n";
    bool answered = write (g->ctl, cmd, strlen (cmd)) == (ssize_t) strlen (cmd);
    if (answered) {
        char buf[64];
        struct pollfd p = { .fd = g->ack, .events = POLLIN };
        int n;
        while ((n = poll (&p, 1, 5000)) < 0 && errno == EINTR)
            ;
        answered = n == 1 && read (g->ack, buf, sizeof buf) > 0;
    }
    if (!answered) {
        g->on = false;   //  perf is gone or deaf: stop asking it
        kf_perf_gate_close (g);
        return;
    }
    g->on = on;
    g->batches += on;
}

void
kf_perf_gate_close (kf_perf_gate_t *g)
{
    if (g->on)
        kf_perf_gate_set (g, false);
    if (g->ctl >= 0)
        close (g->ctl);
    if (g->ack >= 0)
        close (g->ack);
    g->ctl = g->ack = -1;
}
