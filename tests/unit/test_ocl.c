/*  test_ocl.c - the opencl backend, on PoCL (the host CPU).
 *
 *  The constants kf_ocl_api.h writes out match CL/cl.h where the headers
 *  are installed; the compile worker offers the opencl target and builds
 *  OpenCL C for it; without the ICD loader (KF_OPENCL_LIBRARY naming a file
 *  that is not there) the probe says "no OpenCL device: ..."; a device
 *  chosen by an index past the last one, or by a name no platform or
 *  device has, is refused by name. Where a platform answers (CI installs
 *  pocl-opencl-icd), the probe reports the device with its measured copy
 *  bandwidth and FMA peak, chosen by index, by name and by
 *  PLATFORM/DEVICE (a refusal lists the devices there are), and the
 *  OpenCL fixtures, built by the compile handler, are judged end to end
 *  through the real handler, its sandboxed child and the candidate's own
 *  confined process: good_softmax correct and timed (against a device
 *  reference and against the host C reference; built from source, and
 *  again with the SPIR-V asked for, which PoCL refuses), wrong_softmax
 *  and unwritten incorrect, oob_write crashed (its canary), spin a
 *  timeout, bad_launch load_failed, a source the platform cannot build
 *  load_failed with the platform's build log, and three hostile kernels
 *  that beat a judge running them in its own process (a verdict forged
 *  through fd 3, the reference's outputs copied from the judge's heap, a
 *  system call the confinement refuses) caught.
 */
#include "../../compile-worker/kf_compile.h"
#include "../../exec-worker/kf_exec.h"
#include "../../exec-worker/kf_ocl_api.h"
#include "../../exec-worker/kf_runner.h"
#include "kf_file.h"
#include "kf_str.h"
#include "../kf_test.h"

#include <libgen.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#if defined(__has_include)
#if __has_include(<CL/cl.h>)
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#define S_HAVE_CL_HEADER 1
#endif
#endif

static void
s_constants (void)
{
#ifdef S_HAVE_CL_HEADER
    CHECK (KF_CL_BUILD_PROGRAM_FAILURE == CL_BUILD_PROGRAM_FAILURE);
    CHECK (KF_CL_PLATFORM_NAME == CL_PLATFORM_NAME && KF_CL_DEVICE_NAME == CL_DEVICE_NAME);
    CHECK (KF_CL_DEVICE_MAX_COMPUTE_UNITS == CL_DEVICE_MAX_COMPUTE_UNITS);
    CHECK (KF_CL_DEVICE_MAX_WORK_GROUP_SIZE == CL_DEVICE_MAX_WORK_GROUP_SIZE);
    CHECK (KF_CL_DEVICE_MAX_CLOCK_FREQUENCY == CL_DEVICE_MAX_CLOCK_FREQUENCY);
    CHECK (KF_CL_DEVICE_MAX_MEM_ALLOC_SIZE == CL_DEVICE_MAX_MEM_ALLOC_SIZE);
    CHECK (KF_CL_DEVICE_MEM_BASE_ADDR_ALIGN == CL_DEVICE_MEM_BASE_ADDR_ALIGN);
    CHECK (KF_CL_DEVICE_GLOBAL_MEM_CACHE_SIZE == CL_DEVICE_GLOBAL_MEM_CACHE_SIZE);
    CHECK (KF_CL_DEVICE_GLOBAL_MEM_SIZE == CL_DEVICE_GLOBAL_MEM_SIZE);
    CHECK (KF_CL_DEVICE_VERSION == CL_DEVICE_VERSION && KF_CL_DRIVER_VERSION == CL_DRIVER_VERSION);
    CHECK (KF_CL_DEVICE_IL_VERSION == CL_DEVICE_IL_VERSION);
    CHECK (KF_CL_QUEUE_PROFILING_ENABLE == CL_QUEUE_PROFILING_ENABLE);
    CHECK (KF_CL_MEM_READ_WRITE == CL_MEM_READ_WRITE);
    CHECK (KF_CL_BUFFER_CREATE_TYPE_REGION == CL_BUFFER_CREATE_TYPE_REGION);
    CHECK (KF_CL_PROGRAM_BUILD_LOG == CL_PROGRAM_BUILD_LOG);
    CHECK (KF_CL_PROFILING_COMMAND_START == CL_PROFILING_COMMAND_START);
    CHECK (KF_CL_PROFILING_COMMAND_END == CL_PROFILING_COMMAND_END);
    CHECK (sizeof (kf_cl_buffer_region_t) == sizeof (cl_buffer_region));
    printf ("  constants match CL/cl.h\n");
#else
    printf ("  no CL/cl.h: constants not compared\n");
#endif
}

//  Builds LANGUAGE source PATH with the compile handler; the artifact.
static zframe_t *
s_build (const char *path, const char *language)
{
    size_t size;
    char *source = kf_file_read (path, 1 << 20, &size);
    if (!source)
        return NULL;
    kf_job_t job = { .job_id = 1, .kind = "compile" };
    //  The compile worker's opencl artifact is the one KF-SPIRV bundle its
    //  spirv toolchain builds for Level Zero, asked for as the opencl
    //  target's.
    job.payload = json_pack ("{s:s, s:{s:s}}", "language", language, "target", "backend",
                             strcmp (language, "c") ? "opencl" : "host");
    job.frames = zmsg_new ();
    zmsg_addmem (job.frames, source, size);
    free (source);
    kf_compile_config_t cfg = { .time_limit_s = 60 };
    kf_job_result_t res;
    kf_compile_handle (&cfg, &job, &res);
    zframe_t *art = res.ok && res.frames ? zmsg_pop (res.frames) : NULL;
    json_decref (job.payload);
    zmsg_destroy (&job.frames);
    json_decref (res.result);
    zmsg_destroy (&res.frames);
    free (res.error);
    return art;
}

static zframe_t *
s_fixture (const char *name)
{
    char path[256];
    snprintf (path, sizeof path, "tests/fixtures/kernels/opencl/%s.cl", name);
    return s_build (path, "opencl");
}

//  An evaluate job of CAND against REF on a ROWS x COLS softmax, through
//  the real handler and its sandboxed child, within LIMIT_S.
static json_t *
s_eval (zframe_t *cand, zframe_t *ref, int rows, int cols, double limit_s, char **error)
{
    kf_exec_config_t cfg = { .backend = "opencl", .device = 0, .time_limit_s = limit_s };
    kf_job_t job = { .job_id = 2, .kind = "evaluate" };
    job.payload = json_pack (
        "{s:{s:[{s:s, s:[i,i], s:s, s:{s:s, s:f, s:f}}], s:[{s:s, s:[i,i], s:s}],"
        " s:{}, s:{s:f, s:f, s:f, s:f}}, s:i, s:{s:f, s:f}}",
        "task",
          "inputs", "name", "x", "shape", rows, cols, "dtype", "f32",
                    "dist", "kind", "normal", "mean", 0.0, "std", 3.0,
          "outputs", "name", "y", "shape", rows, cols, "dtype", "f32",
          "scalars",
          "tolerance", "rtol", 1e-2, "atol", 1e-5, "min_match", 0.99, "min_cosine", 0.99985,
        "seed", 42, "timing", "min_time_s", 0.2, "warmup_s", 0.1);
    job.frames = zmsg_new ();
    zmsg_append (job.frames, &(zframe_t *) { zframe_dup (cand) });
    zmsg_append (job.frames, &(zframe_t *) { zframe_dup (ref) });
    kf_job_result_t res;
    kf_exec_handle (&cfg, &job, &res);
    json_decref (job.payload);
    zmsg_destroy (&job.frames);
    zmsg_destroy (&res.frames);
    *error = res.error;
    return res.result;
}

static const char *
s_str (json_t *r, const char *key)
{
    const char *v = json_string_value (json_object_get (r, key));
    return v ? v : "";
}

//  Judges CAND against REF on a ROWS x COLS softmax; checks the verdict
//  and a piece of its detail.
static json_t *
s_judge_shape (zframe_t *cand, zframe_t *ref, int rows, int cols, const char *name,
               const char *verdict, const char *detail, double limit_s)
{
    char *error = NULL;
    json_t *r = cand && ref ? s_eval (cand, ref, rows, cols, limit_s, &error) : NULL;
    CHECK (r && !strcmp (s_str (r, "verdict"), verdict));
    CHECK (r && strstr (s_str (r, "detail"), detail));
    printf ("  %s: %s: %.300s\n", name, r ? s_str (r, "verdict") : "failed job",
            r ? s_str (r, "detail") : error ? error : "not built");
    free (error);
    return r;
}

static json_t *
s_judge (zframe_t *cand, zframe_t *ref, const char *name, const char *verdict,
         const char *detail, double limit_s)
{
    return s_judge_shape (cand, ref, 64, 1000, name, verdict, detail, limit_s);
}

//  The hostile kernels that beat a judge running them in its own process
//  (each was "correct", 9.3x and 9.7x, before the candidate had one of
//  its own): caught, and the candidate's process confined.
static void
s_hostile (zframe_t *ref)
{
    //  A verdict written into the judge's channel by system calls from
    //  the kernel, then the process ended.
    zframe_t *forge = s_fixture ("hostile_forge");
    CHECK (forge != NULL);
    json_decref (s_judge (forge, ref, "hostile_forge", "crashed", "the candidate's process "
                          "exited with code 0", 120));
    zframe_destroy (&forge);
    //  System calls from the kernel that the confined process refuses
    //  (a socket): the kernel computes the right answer only when one
    //  is allowed. Its threads are confined only because the runner opens
    //  the device after the filter (a platform starts them then).
    zframe_t *escape = s_fixture ("hostile_escape");
    CHECK (escape != NULL);
    json_decref (s_judge (escape, ref, "hostile_escape", "incorrect", "within tolerance", 120));
    zframe_destroy (&escape);
    //  "Done" sent over the runner's socket before the work: the judge
    //  reads outputs not yet written, or an answer nobody asked for.
    zframe_t *early = s_fixture ("hostile_early_answer");
    CHECK (early != NULL);
    char *why = NULL;
    json_t *er = early ? s_eval (early, ref, 64, 1000, 120, &why) : NULL;
    const char *ev = er ? s_str (er, "verdict") : "";
    CHECK (!strcmp (ev, "incorrect") || !strcmp (ev, "crashed"));
    printf ("  hostile_early_answer: %s: %.200s\n", er ? ev : "failed job",
            er ? s_str (er, "detail") : why ? why : "not built");
    free (why);
    json_decref (er);
    zframe_destroy (&early);
    //  The reference's outputs copied from the judge's memory; a small
    //  shape, so the judge's buffers sit side by side in its heap.
    zframe_t *copy = s_fixture ("hostile_ref_copy");
    CHECK (copy != NULL);
    char *error = NULL;
    json_t *r = copy ? s_eval (copy, ref, 16, 1000, 120, &error) : NULL;
    const char *v = r ? s_str (r, "verdict") : "";
    CHECK (!strcmp (v, "incorrect") || !strcmp (v, "crashed"));
    printf ("  hostile_ref_copy: %s: %.200s\n", r ? v : "failed job",
            r ? s_str (r, "detail") : error ? error : "not built");
    free (error);
    json_decref (r);
    zframe_destroy (&copy);
    //  A timed call answered from what an earlier call kept (a scratch
    //  buffer lives between calls) whenever its output holds an answer:
    //  right, and timed at the cost of a copy, while every timed call ran
    //  on one set of buffers. Now the calls cycle through input sets of
    //  their own, all poisoned before each sample: a sample with more
    //  calls than sets gives a set the previous set's answer (incorrect);
    //  one with no more (PoCL here: a call costs about the round trip)
    //  finds every output poisoned, so every call computed.
    zframe_t *last = s_fixture ("hostile_last_answer");
    CHECK (last != NULL);
    char *last_why = NULL;
    json_t *lr = last ? s_eval (last, ref, 8, 64, 120, &last_why) : NULL;
    const char *lv = lr ? s_str (lr, "verdict") : "";
    json_int_t sets = json_integer_value (json_object_get (json_object_get (lr, "protocol"),
                                                           "input_sets"));
    json_int_t calls = json_integer_value (json_object_get (json_object_get (lr, "candidate"),
                                                            "calls_per_sample"));
    CHECK ((!strcmp (lv, "incorrect") && strstr (s_str (lr, "detail"), "input set"))
           || (!strcmp (lv, "correct") && calls >= 1 && calls <= sets));
    printf ("  hostile_last_answer: %s: %.200s (%d calls a sample, %d input sets)\n",
            lr ? lv : "failed job", lr ? s_str (lr, "detail") : last_why ? last_why : "not built",
            (int) calls, (int) sets);
    free (last_why);
    json_decref (lr);
    zframe_destroy (&last);
}

//  A bundle with SOURCE that clang never saw, so that only the platform's
//  own build can refuse it: a minimal SPIR-V header stands in.
static zframe_t *
s_unbuildable (void)
{
    const char *source = "// kf-launch: k(x, y) global=64 local=64\n"
                         "__kernel void k (__global float *x, __global float *y) {\n"
                         "  y[0] = undeclared_thing;\n}\n";
    static const unsigned char spirv[20] = { 0x03, 0x02, 0x23, 0x07 };
    char head[128];
    int n = snprintf (head, sizeof head, "KF-SPIRV 1\nsource %zu\nspirv 20\n\n", strlen (source));
    zframe_t *f = zframe_new (NULL, (size_t) n + strlen (source) + sizeof spirv);
    memcpy (zframe_data (f), head, (size_t) n);
    memcpy (zframe_data (f) + n, source, strlen (source));
    memcpy (zframe_data (f) + n + strlen (source), spirv, sizeof spirv);
    return f;
}

//  SPIR-V where the device takes IL: the bundle's module is given to
//  clCreateProgramWithIL; where it does not, the source is built and the
//  result says why. KF_OPENCL_IL=spirv tries the IL anyway: a device
//  without IL refuses it and the source is built after all.
static void
s_spirv (zframe_t *good, zframe_t *ref, bool il, json_t *first)
{
    const char *how = s_str (json_object_get (first, "program"), "candidate");
    CHECK (il ? !strcmp (how, "spirv") : !strncmp (how, "source (the device takes no SPIR-V", 34));
    printf ("  program: %s\n", how);
    setenv ("KF_OPENCL_IL", "spirv", 1);
    json_t *r = s_judge (good, ref, "good_softmax, SPIR-V asked for", "correct",
                         "all checks passed", 120);
    how = s_str (json_object_get (r, "program"), "candidate");
    CHECK (il ? !strcmp (how, "spirv")
              : !strncmp (how, "source (clCreateProgramWithIL refused", 37)
                || !strncmp (how, "source (the platform did not build", 34));
    printf ("  program, SPIR-V asked for: %s\n", how);
    json_decref (r);
    unsetenv ("KF_OPENCL_IL");
}

static void
s_fixtures (bool il)
{
    zframe_t *ref = s_fixture ("ref_softmax");
    zframe_t *good = s_fixture ("good_softmax");
    CHECK (ref != NULL && good != NULL);
    json_t *r = s_judge (good, ref, "good_softmax", "correct", "all checks passed", 120);
    CHECK (json_number_value (json_object_get (r, "speedup")) > 0);
    CHECK (json_integer_value (json_object_get (json_object_get (r, "candidate"), "samples"))
           >= 10);
    //  The timed calls cycled through several of the sets.
    CHECK (json_integer_value (json_object_get (json_object_get (r, "protocol"), "input_sets"))
           >= 2);
    CHECK (strstr (s_str (json_object_get (r, "device"), "platform"), "Portable") != NULL
           || getenv ("KF_OPENCL_DEVICE"));
    //  The candidate ran in its own process, confined.
    json_t *iso = json_object_get (r, "isolation");
    CHECK (!strcmp (s_str (iso, "candidate"), "own process"));
    CHECK (!strncmp (s_str (iso, "confinement"), "seccomp", 7));
    CHECK (json_number_value (json_object_get (iso, "round_trip_us")) > 0);
    printf ("    isolation: %s, round trip %.0f us\n", s_str (iso, "confinement"),
            json_number_value (json_object_get (iso, "round_trip_us")));
    printf ("    speedup %.3g over the device reference\n",
            json_number_value (json_object_get (r, "speedup")));
    s_spirv (good, ref, il, r);
    json_decref (r);
    static const struct { const char *name, *verdict, *detail; } cases[] = {
        { "wrong_softmax", "incorrect", "elements" },
        { "unwritten", "incorrect", "" },
        { "oob_write", "crashed", "out-of-bounds write past the end of output 'y'" },
        { "bad_launch", "load_failed", "'z' is not a tensor of the task" },
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        zframe_t *cand = s_fixture (cases[c].name);
        CHECK (cand != NULL);
        json_decref (s_judge (cand, ref, cases[c].name, cases[c].verdict, cases[c].detail, 120));
        zframe_destroy (&cand);
    }
    s_hostile (ref);
    zframe_t *bad = s_unbuildable ();
    json_decref (s_judge (bad, ref, "unbuildable source", "load_failed", "undeclared_thing", 120));
    zframe_destroy (&bad);
    //  The spinning kernel: the evaluation's limit ends it (20 s: the
    //  platform builds the candidate twice before it runs), and the
    //  verdict blames the candidate's phase.
    //  On a machine so loaded that the two builds alone outlast 20 s (load
    //  11 on 2 cores: "exceeded the 20 s limit while the harness was
    //  running"), once more with room for them: what is checked is whose
    //  phase a limit blames, not how fast this machine builds.
    zframe_t *spin = s_fixture ("spin");
    CHECK (spin != NULL);
    char *error = NULL;
    json_t *first = spin && ref ? s_eval (spin, ref, 64, 1000, 20, &error) : NULL;
    //  The same when the reference's phase outlasts it (no verdict, a
    //  failed job: "reference: evaluation exceeded the 20 s limit while
    //  the reference was running", seen with a build beside the suite).
    bool slow = (first && strstr (s_str (first, "detail"), "while the harness was running"))
                || (!first && error && strstr (error, "while the reference was running"));
    if (slow)
        printf ("  spin: %s outlasted 20 s (a loaded machine); again with 120 s\n",
                first ? "the harness" : "the reference");
    else if (!first)
        printf ("  spin: failed job: %s\n", error ? error : "not judged");
    free (error);
    if (slow) {
        json_decref (s_judge (spin, ref, "spin", "timeout", "candidate", 120));
    }
    else {
        CHECK (first && !strcmp (s_str (first, "verdict"), "timeout"));
        CHECK (first && strstr (s_str (first, "detail"), "candidate"));
        printf ("  spin: %s: %.300s\n", first ? s_str (first, "verdict") : "failed job",
                first ? s_str (first, "detail") : "not judged");
    }
    json_decref (first);
    zframe_destroy (&spin);
    //  The host C reference.
    zframe_t *host_ref = s_build ("tests/fixtures/kernels/ref_softmax.c", "c");
    CHECK (host_ref != NULL);
    r = s_judge (good, host_ref, "good_softmax, host C reference", "correct",
                 "all checks passed", 120);
    CHECK (!strcmp (s_str (r, "reference_on"), "host"));
    json_decref (r);
    zframe_destroy (&host_ref);
    zframe_destroy (&good);
    zframe_destroy (&ref);
}

//  The worker binary: does not link libOpenCL; --device takes a name for
//  opencl only; a name no device has is one line and exit 2.
static void
s_worker (void)
{
    char self[PATH_MAX], worker[PATH_MAX + 32];
    ssize_t n = readlink ("/proc/self/exe", self, sizeof self - 1);
    self[n > 0 ? n : 0] = 0;
    snprintf (worker, sizeof worker, "%s/../bin/kf-exec-worker", dirname (self));
    char cmd[2 * PATH_MAX + 128];
    snprintf (cmd, sizeof cmd, "ldd %s 2>&1", worker);
    FILE *p = popen (cmd, "r");
    char line[512];
    bool links_cl = false, ran = false;
    while (p && fgets (line, sizeof line, p)) {
        ran = true;
        links_cl |= strstr (line, "libOpenCL") != NULL;
    }
    if (p)
        pclose (p);
    CHECK (ran && !links_cl);
    static const struct { const char *args, *says; } runs[] = {
        { "--backend opencl --device no-such-device-anywhere",
          "kf-exec-worker: no OpenCL device: none of" },
        { "--backend host --device pthread", "kf-exec-worker: device: 'pthread' is not a number" },
        { "--backend opencl --device 64", "kf-exec-worker: device: 64 is outside 0 to 63" },
    };
    for (size_t r = 0; r < sizeof runs / sizeof runs[0]; r++) {
        snprintf (cmd, sizeof cmd, "%s %s 2>&1; echo \"exit $?\"", worker, runs[r].args);
        p = popen (cmd, "r");
        char out[1024] = "", status[64] = "";
        if (p && fgets (out, sizeof out, p))
            if (!fgets (status, sizeof status, p))
                status[0] = 0;
        if (p)
            pclose (p);
        CHECK (strncmp (out, runs[r].says, strlen (runs[r].says)) == 0);
        CHECK (!strcmp (status, "exit 2\n"));
        printf ("  kf-exec-worker %s: %s", runs[r].args, out);
    }
}

int
main (int argc, char **argv)
{
    if (argc >= 3 && strcmp (argv[1], "--eval-runner") == 0)
        return kf_runner_main (argc, argv);
    if (argc >= 3 && strcmp (argv[1], "--eval-child") == 0)
        return kf_exec_child_main (argv[2]);
    const char *root = getenv ("KF_ROOT");
    if (root && chdir (root) != 0)
        return 1;
    s_constants ();
    //  The compile worker offers the opencl backend beside level-zero.
    json_t *compile_caps = kf_compile_capabilities ();
    bool offered = false;
    size_t k;
    json_t *b;
    json_array_foreach (json_object_get (compile_caps, "backends"), k, b)
        offered |= !strcmp (json_string_value (b), "opencl");
    CHECK (offered);
    json_decref (compile_caps);
    CHECK (strstr (kf_ocl_err (-11), "CL_BUILD_PROGRAM_FAILURE") != NULL);
    CHECK (strstr (kf_ocl_err (-12345), "-12345") != NULL);

    //  No loader: the probe says why.
    setenv ("KF_OPENCL_LIBRARY", "/nonexistent/libOpenCL.so.1", 1);
    char *error = NULL;
    json_t *caps = kf_exec_probe ("opencl", 0, &error);
    CHECK (caps == NULL && error && strstr (error, "no OpenCL device: cannot load") == error);
    printf ("  loader missing: %s\n", error ? error : "?");
    free (error);
    json_decref (caps);
    unsetenv ("KF_OPENCL_LIBRARY");

    error = NULL;
    caps = kf_exec_probe ("opencl", 0, &error);
    if (!caps) {
        printf ("  no OpenCL platform here (%s): install pocl-opencl-icd\n", error ? error : "?");
        CHECK (getenv ("KF_OCL_OPTIONAL") != NULL);
        free (error);
        return kf_test_done ("test_ocl");
    }
    json_t *dev = json_array_get (json_object_get (caps, "devices"), 0);
    bool il = json_is_true (json_object_get (dev, "spirv_il"));
    CHECK (json_integer_value (json_object_get (dev, "compute_units")) > 0);
    CHECK (json_integer_value (json_object_get (dev, "memory_bytes")) > 0);
    CHECK (json_number_value (json_object_get (dev, "copy_bandwidth_gbs")) > 0);
    CHECK (json_number_value (json_object_get (dev, "peak_gflops")) > 0);
    char *text = json_dumps (dev, JSON_COMPACT);
    printf ("  probe: %s\n", text);
    free (text);
    //  The same device by a piece of its name, any case.
    char piece[8] = "";
    snprintf (piece, sizeof piece, "%s", s_str (dev, "name"));
    for (char *c = piece; *c; c++)
        *c = (char) (*c >= 'a' && *c <= 'z' ? *c - 32 : *c);
    setenv ("KF_OPENCL_DEVICE", piece, 1);
    error = NULL;
    json_t *by_name = kf_exec_probe ("opencl", 0, &error);
    CHECK (by_name && !strcmp (s_str (json_array_get (json_object_get (by_name, "devices"), 0),
                                      "name"), s_str (dev, "name")));
    printf ("  by name '%s': %s\n", piece, by_name ? "the same device" : error);
    free (error);
    json_decref (by_name);
    setenv ("KF_OPENCL_DEVICE", "no-such-device-anywhere", 1);
    error = NULL;
    by_name = kf_exec_probe ("opencl", 0, &error);
    CHECK (!by_name && error && strstr (error, "matches 'no-such-device-anywhere'"));
    //  The refusal lists what there is.
    CHECK (error && strstr (error, s_str (dev, "name")));
    printf ("  by an unknown name: %s\n", error ? error : "?");
    free (error);
    json_decref (by_name);
    //  PLATFORM/DEVICE: each an index or a piece of the name.
    static const char *const pairs[] = { "portable/0", "0/PTHREAD", "/0", "0/" };
    for (size_t k = 0; k < sizeof pairs / sizeof pairs[0]; k++) {
        setenv ("KF_OPENCL_DEVICE", pairs[k], 1);
        error = NULL;
        by_name = kf_exec_probe ("opencl", 0, &error);
        bool same = by_name && !strcmp (s_str (json_array_get (json_object_get (by_name,
                                                                                "devices"), 0),
                                               "name"), s_str (dev, "name"));
        CHECK (same || !strstr (s_str (dev, "name"), "pthread"));
        printf ("  '%s': %s\n", pairs[k], same ? "the same device" : error ? error : "another");
        free (error);
        json_decref (by_name);
    }
    setenv ("KF_OPENCL_DEVICE", "9/0", 1);
    error = NULL;
    by_name = kf_exec_probe ("opencl", 0, &error);
    CHECK (!by_name && error && strstr (error, "matches '9/0'") && strstr (error, "0 '"));
    printf ("  '9/0': %s\n", error ? error : "?");
    free (error);
    json_decref (by_name);
    unsetenv ("KF_OPENCL_DEVICE");
    error = NULL;
    by_name = kf_exec_probe ("opencl", 63, &error);
    CHECK (!by_name && error && strstr (error, "device 63 asked for"));
    free (error);
    json_decref (by_name);
    json_decref (caps);

    s_worker ();
    s_fixtures (il);
    return kf_test_done ("test_ocl");
}
