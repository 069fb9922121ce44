/*  kfctl_usage.c - how kfctl speaks about its own command line: usage
 *  errors (also as JSON under --json), "did you mean" for a mistyped
 *  command or option, the top-level help's one line per command, and
 *  --version. Declared in kfctl_cmd.h.
 */
#include "kf_proto.h"
#include "kf_suggest.h"
#include "kfctl_cmd.h"
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* kfctl's own release; the wire protocol's version is printed beside it. */
#define S_KFCTL_VERSION "0.9.0"

bool kf_ctl_json_errors = false;

void
kf_ctl_error_json (const char *code, const char *reason)
{
    if (!kf_ctl_json_errors)
        return;
    json_t *out = json_pack ("{s:s, s:s}", "code", code, "reason", reason ? reason : "");
    if (out)
        kf_ctl_print_json (out);
    json_decref (out);
}

//  "kfctl: ", PREFIX and TEXT on stderr (a newline added when TEXT has
//  none), and under --json {"code": CODE, "reason": TEXT} on stdout.
static void
s_fail (const char *code, const char *prefix, const char *fmt, va_list ap)
{
    char text[4096];
    vsnprintf (text, sizeof text, fmt, ap);
    size_t n = strlen (text);
    bool newline = n > 0 && text[n - 1] == '\n';
    fprintf (stderr, "kfctl: %s%s%s", prefix, text, newline ? "" : "\n");
    if (newline)
        text[n - 1] = 0;
    kf_ctl_error_json (code, text);
}

void
kf_ctl_usage (const char *fmt, ...)
{
    va_list ap;
    va_start (ap, fmt);
    s_fail ("usage", "", fmt, ap);
    va_end (ap);
}

void
kf_ctl_fail (const char *command, const char *code, const char *fmt, ...)
{
    char prefix[64];
    snprintf (prefix, sizeof prefix, "%s: ", command);
    va_list ap;
    va_start (ap, fmt);
    s_fail (code, prefix, fmt, ap);
    va_end (ap);
}

/* Flags without a value that every or some command takes; the valued
 * options come from main's table. */
static const char *s_flags[] = { "--help", "--json", "--wait", "--allow-degenerate", "--set",
                                 "--no-memory", "--torch", "--force", "--local", "--version" };

void
kf_ctl_unknown_option (const char *arg, const char *const *names, size_t n)
{
    char word[64];
    snprintf (word, sizeof word, "%s", arg);
    char *eq = strchr (word, '=');   /* --genrations=3: the name alone */
    if (eq)
        *eq = 0;
    const char *near = kf_suggest (word, names, n);
    const char *flag = kf_suggest (word, s_flags, sizeof s_flags / sizeof s_flags[0]);
    if (!near || (flag && strlen (flag) == strlen (word)))
        near = flag ? flag : near;
    if (near)
        kf_ctl_usage ("unknown option '%s'; did you mean '%s'? (kfctl --help)", arg, near);
    else
        kf_ctl_usage ("unknown option '%s' (kfctl --help)", arg);
}

void
kf_ctl_unknown_command (const char *word, const char *const *names, size_t n)
{
    const char *near = kf_suggest (word, names, n);
    if (near)
        kf_ctl_usage ("unknown command '%s'; did you mean '%s'? (kfctl --help)", word, near);
    else
        kf_ctl_usage ("unknown command '%s' (kfctl --help)", word);
}

/* Whether the summary line at P (after a newline) goes on with the
 * sentence before it: indented text starting in lower case or "(", and
 * not a row of an option table (a name, then two spaces). */
static bool
s_continues (const char *p)
{
    if (strncmp (p, "  ", 2) || !((p[2] >= 'a' && p[2] <= 'z') || p[2] == '('))
        return false;
    const char *nl = strchr (p + 2, '\n');
    const char *gap = strstr (p + 2, "  ");
    return !gap || (nl && gap > nl);
}

/* Where SUMMARY's first sentence ends: before "; " or ". " (or either at
 * a line's end), or at the end of a line the next does not go on from. */
static size_t
s_first_sentence (const char *summary)
{
    for (const char *p = summary; *p; p++) {
        if ((*p == ';' || *p == '.') && (p[1] == ' ' || p[1] == '\n' || !p[1]))
            return (size_t) (p - summary);
        if (*p == '\n' && !s_continues (p + 1))
            return (size_t) (p - summary);
    }
    return strlen (summary);
}

void
kf_ctl_help_line (FILE *out, const char *name, const char *summary)
{
    enum { S_INDENT = 12, S_WIDTH = 79 };
    size_t end = s_first_sentence (summary);
    /* The sentence with its line breaks and their indents as single spaces. */
    char text[1024];
    size_t n = 0;
    for (size_t i = 0; i < end && n + 1 < sizeof text; i++) {
        char c = summary[i] == '\n' ? ' ' : summary[i];
        if (c == ' ' && n > 0 && text[n - 1] == ' ')
            continue;
        text[n++] = c;
    }
    text[n] = 0;
    fprintf (out, "  %-9s", name);
    if (strlen (name) > 9)
        fprintf (out, "\n%*s", S_INDENT, "");
    else
        fputc (' ', out);
    /* Words wrapped under the first; a word is never split. */
    size_t col = S_INDENT;
    const char *p = text;
    while (*p) {
        const char *sp = strchr (p, ' ');
        size_t len = sp ? (size_t) (sp - p) : strlen (p);
        if (col > S_INDENT && col + 1 + len > S_WIDTH) {
            fprintf (out, "\n%*s", S_INDENT, "");
            col = S_INDENT;
        }
        else if (col > S_INDENT) {
            fputc (' ', out);
            col++;
        }
        fwrite (p, 1, len, out);
        col += len;
        p += len;
        while (*p == ' ')
            p++;
    }
    fputc ('\n', out);
}

void
kf_ctl_print_version (bool json)
{
    if (json) {
        json_t *v = json_pack ("{s:s, s:i}", "kfctl", S_KFCTL_VERSION, "protocol",
                               KF_PROTO_VERSION);
        kf_ctl_print_json (v);
        json_decref (v);
    }
    else
        printf ("kfctl %s (protocol %d)\n", S_KFCTL_VERSION, KF_PROTO_VERSION);
}
