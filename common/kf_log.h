/*  kf_log.h - one-line log records on stderr: time, program, level, text.
 *  Never pass secrets (keys, passwords, connection strings) to these. */
#ifndef KF_LOG_H
#define KF_LOG_H

#include <stdbool.h>

typedef enum { KF_LOG_DEBUG, KF_LOG_INFO, KF_LOG_WARN, KF_LOG_ERROR } kf_log_level_t;

void kf_log_init (const char *program, bool verbose);
void kf_log (kf_log_level_t level, const char *fmt, ...)
    __attribute__ ((format (printf, 2, 3)));

#define kf_debug(...) kf_log (KF_LOG_DEBUG, __VA_ARGS__)
#define kf_info(...) kf_log (KF_LOG_INFO, __VA_ARGS__)
#define kf_warn(...) kf_log (KF_LOG_WARN, __VA_ARGS__)
#define kf_error(...) kf_log (KF_LOG_ERROR, __VA_ARGS__)

#endif
