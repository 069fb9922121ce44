/*  test_gateway_parts.c - the gateway's pieces without the network.
 *
 *  Proves: extraction picks the block in the requested language with the
 *  entry point among several, takes bare code after prose, takes an
 *  unclosed fence to the end, and reports empty and no-code replies;
 *  the rate limiter spaces requests at 60000/rpm ms and holds tokens per
 *  minute, settling estimates; prices come from the table (exact and
 *  wildcard, cached tokens at their own price) and bad lines are refused
 *  with file and line; keys are redacted, whole and by their ends.
 */
#include "../../llm-gateway/kf_extract.h"
#include "../../llm-gateway/kf_gateway.h"
#include "../../llm-gateway/kf_pricing.h"
#include "../../llm-gateway/kf_ratelimit.h"
#include "../kf_test.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static void
s_test_extract (void)
{
    char *code, *detail;
    CHECK (kf_extract_code ("  \n\t ", "c", &code, &detail) == KF_EXTRACT_EMPTY);
    CHECK (code == NULL && detail && strstr (detail, "empty"));
    free (detail);
    CHECK (kf_extract_code (NULL, "c", &code, &detail) == KF_EXTRACT_EMPTY);
    free (detail);
    CHECK (kf_extract_code ("Use shared memory.", "c", &code, &detail) == KF_EXTRACT_NO_CODE);
    CHECK (detail && strstr (detail, "no code"));
    free (detail);
    CHECK (kf_extract_code ("```python\nprint(1)\n```\n", "cuda", &code, &detail)
           == KF_EXTRACT_NO_CODE);
    CHECK (detail && strstr (detail, "none in cuda"));
    free (detail);

    const char *several = "Idea:\n```python\nimport torch\n```\nSketch:\n```cuda\n// tiny\n```\n"
                          "Kernel:\n```cuda\n#include \"kf_kernel.h\"\nint kf_forward(void);\n```\n"
                          "Build:\n```bash\nnvcc\n```\n";
    CHECK (kf_extract_code (several, "cuda", &code, &detail) == KF_EXTRACT_OK);
    CHECK (code && strstr (code, "kf_forward") && !strstr (code, "tiny") && !strstr (code, "```"));
    free (code);
    //  An untagged block with the entry point beats a tagged excerpt.
    const char *untagged = "```c\nstatic int x;\n```\n```\nint kf_forward(void) { return 0; }\n```";
    CHECK (kf_extract_code (untagged, "c", &code, &detail) == KF_EXTRACT_OK);
    CHECK (code && strstr (code, "kf_forward"));
    free (code);
    const char *bare = "Sure! Here you go.\n#include \"kf_kernel.h\"\nint kf_forward(void) {}\n";
    CHECK (kf_extract_code (bare, "c", &code, &detail) == KF_EXTRACT_OK);
    CHECK (code && !strncmp (code, "#include", 8));
    free (code);
    const char *unclosed = "```c\n#include \"kf_kernel.h\"\nint kf_forward(void) {";
    CHECK (kf_extract_code (unclosed, "c", &code, &detail) == KF_EXTRACT_OK);
    CHECK (code && strstr (code, "kf_forward"));
    free (code);
    const char *tilde = "~~~opencl\n__kernel void k(__global float *x) {}\n~~~\n";
    CHECK (kf_extract_code (tilde, "opencl", &code, &detail) == KF_EXTRACT_OK);
    CHECK (code && strstr (code, "__kernel") && !strstr (code, "~~~"));
    free (code);
    CHECK (!strcmp (kf_extract_rc_name (KF_EXTRACT_NO_CODE), "no_code"));
}

static void
s_test_ratelimit (void)
{
    kf_ratelimit_t *rl = kf_ratelimit_new ();
    CHECK (kf_ratelimit_set (rl, "openai:a", 120, 0) == 0);
    CHECK (kf_ratelimit_acquire (rl, "openai:a", 10, 1000) == 0);
    int64_t wait = kf_ratelimit_acquire (rl, "openai:a", 10, 1000);
    CHECK (wait >= 499 && wait <= 501);
    CHECK (kf_ratelimit_acquire (rl, "openai:a", 10, 1500) == 0);
    //  Tokens: 6000 per minute, a request of 3000 holds the next 30 s.
    CHECK (kf_ratelimit_set (rl, "openai:t", 0, 6000) == 0);
    CHECK (kf_ratelimit_acquire (rl, "openai:t", 3000, 0) == 0);
    wait = kf_ratelimit_acquire (rl, "openai:t", 10, 0);
    CHECK (wait >= 29999 && wait <= 30001);
    //  It used 1000 tokens, not 3000: 20 s of schedule given back.
    kf_ratelimit_settle (rl, "openai:t", 3000, 1000);
    wait = kf_ratelimit_acquire (rl, "openai:t", 10, 0);
    CHECK (wait >= 9999 && wait <= 10001);
    //  Unlimited unless a default says otherwise.
    for (int i = 0; i < 100; i++)
        CHECK (kf_ratelimit_acquire (rl, "openai:free", 100000, 0) == 0);
    CHECK (kf_ratelimit_set (rl, "*", 60, 0) == 0);
    CHECK (kf_ratelimit_acquire (rl, "anthropic:new", 1, 0) == 0);
    CHECK (kf_ratelimit_acquire (rl, "anthropic:new", 1, 10) > 900);
    CHECK (kf_ratelimit_set (rl, "x", -1, 0) == -1);
    kf_ratelimit_destroy (&rl);
    CHECK (rl == NULL);
}

static void
s_test_pricing (void)
{
    char path[] = "/tmp/kf-prices.XXXXXX";
    int fd = mkstemp (path);
    FILE *f = fdopen (fd, "w");
    fputs ("# comment\nopenai:gpt-4.1 2.00 8.00 0.50\n\nanthropic:* 3 15 # no cached price\n", f);
    fclose (f);
    char *err = NULL;
    kf_pricing_t *p = kf_pricing_load (path, &err);
    CHECK (p != NULL);
    double c = kf_pricing_cost (p, "openai:gpt-4.1", 1000, 500, 200);
    CHECK (fabs (c - (800 * 2.0 + 200 * 0.5 + 500 * 8.0) / 1e6) < 1e-12);
    c = kf_pricing_cost (p, "anthropic:claude-x", 1000, 100, 400);
    CHECK (fabs (c - (1000 * 3.0 + 100 * 15.0) / 1e6) < 1e-12);
    CHECK (kf_pricing_cost (p, "openai:unknown", 1, 1, 0) < 0);
    CHECK (kf_pricing_cost (NULL, "openai:gpt-4.1", 1, 1, 0) < 0);
    kf_pricing_destroy (&p);
    f = fopen (path, "w");
    fputs ("openai:a 1 2\nopenai:b one 2\n", f);
    fclose (f);
    CHECK (kf_pricing_load (path, &err) == NULL);
    CHECK (err && strstr (err, ":2:"));
    free (err);
    unlink (path);
}

static void
s_test_redact (void)
{
    setenv ("OPENAI_API_KEY", "sk-proj-ABCDEFGHIJKLMNOP0123456789", 1);
    unsetenv ("ANTHROPIC_API_KEY");
    kf_gateway_config_t cfg = { 0 };
    char *err = NULL;
    kf_gateway_t *gw = kf_gateway_new (&cfg, &err);
    CHECK (gw != NULL);
    char *r = kf_gateway_redact (gw, "bad key sk-proj-ABCDEFGHIJKLMNOP0123456789 given");
    CHECK (r && !strstr (r, "ABCDEFGH") && strstr (r, "[REDACTED]"));
    free (r);
    r = kf_gateway_redact (gw, "Incorrect API key provided: sk-proj-****23456789.");
    CHECK (r && !strstr (r, "23456789") && strstr (r, "[REDACTED]"));
    free (r);
    r = kf_gateway_redact (gw, "nothing secret");
    CHECK (r && !strcmp (r, "nothing secret"));
    free (r);
    json_t *caps = kf_gateway_caps (gw);
    CHECK (json_array_size (json_object_get (caps, "generators")) == 4);
    json_decref (caps);
    kf_gateway_destroy (&gw);
    CHECK (gw == NULL);
    //  A models file with a bad line is refused with file and line.
    char path[] = "/tmp/kf-models.XXXXXX";
    int fd = mkstemp (path);
    FILE *f = fdopen (fd, "w");
    fputs ("command_ok = echo hi\nlimits_openai:x = rpm=10 burst=3\n", f);
    fclose (f);
    cfg.models_file = path;
    CHECK (kf_gateway_new (&cfg, &err) == NULL);
    CHECK (err && strstr (err, ":2:") && strstr (err, "burst"));
    free (err);
    unlink (path);
    unsetenv ("OPENAI_API_KEY");
}

int
main (void)
{
    s_test_extract ();
    s_test_ratelimit ();
    s_test_pricing ();
    s_test_redact ();
    return kf_test_done ("test_gateway_parts");
}
