/*  kf_prompt.c - the generation prompt, assembled from its sections
 *  (kf_prompt.h).
 *
 *  The order follows what a model needs first: what to compute (task and
 *  reference), the rules it must keep (the contract), where it will run
 *  (hardware), what a correct answer looks like (an example), where the
 *  search stands (best and last kernels with their figures, inspirations,
 *  hints), how to think about it (the evolvable sections), and finally
 *  the requirements and the answer format, last so they are freshest.
 *  The wording is ours; the structure is the one the KernelFoundry paper
 *  describes for its main prompt (appendix E.1) and templated kernels
 *  (E.2). Every number shown comes from the database: a prompt never
 *  claims a figure the evaluation did not measure.
 */
#include "kf_prompt.h"
#include "kf_task.h"
#include "kf_json.h"
#include "kf_log.h"
#include "kf_str.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern const char kf_contract_text[];

const char *const kf_prompt_section_names[KF_PROMPT_SECTIONS] = {
    "philosophy", "strategies", "pitfalls", "analysis"
};

static const char *const s_section_titles[KF_PROMPT_SECTIONS] = {
    "Optimisation philosophy", "Optimisation strategies", "Common pitfalls",
    "Before you write code"
};

//  ---------------------------------------------------------------------
//  The evolvable sections as a run starts

static const char *s_philosophy =
    "- A wrong kernel is worth less than a slow one: keep exactly the reference's results "
    "(within the tolerance) before chasing speed.\n"
    "- Operations like these are usually limited by memory traffic, not arithmetic: read every "
    "input once, write every output once, and keep intermediate values on chip.\n"
    "- Change one idea at a time relative to the kernel you improve, so a gain or a loss has a "
    "known cause.\n"
    "- Judge a kernel against the hardware: the bytes it must move divided by the measured "
    "copy bandwidth is the time to aim for.\n";

static const char *s_strategies_cuda =
    "Memory:\n"
    "- Let consecutive threads touch consecutive addresses; load float4 when a row is long "
    "and 16-byte aligned, with a scalar loop for the tail.\n"
    "- Stage data that several threads reuse in shared memory; pad tiles by one element to "
    "avoid bank conflicts.\n"
    "Computation:\n"
    "- Fuse passes over a row: online softmax keeps a running maximum and a rescaled sum in "
    "one sweep; Welford keeps mean and variance together.\n"
    "- Multiply by a reciprocal computed once instead of dividing per element; fast "
    "intrinsics (__expf, rsqrtf) are fine within the tolerance.\n"
    "Parallelism:\n"
    "- Reduce inside a warp with __shfl_xor_sync, then across warps through shared memory; "
    "one block per long row, one warp per short row.\n"
    "- Size blocks so enough of them are resident to keep every multiprocessor busy.\n";

static const char *s_strategies_c =
    "Memory:\n"
    "- Walk each row contiguously and finish with it while it is still in cache; avoid a "
    "second pass over data that no longer fits.\n"
    "- Mark pointers restrict and keep loops simple so the compiler (-O3 -march=native) "
    "vectorises them.\n"
    "Computation:\n"
    "- Fuse passes over a row: online softmax keeps a running maximum and a rescaled sum in "
    "one sweep; Welford keeps mean and variance together.\n"
    "- Use several independent accumulators so additions overlap and vectorise; multiply by "
    "a reciprocal computed once instead of dividing per element.\n"
    "- A branch-free polynomial exponential vectorises where the C library's expf does not.\n"
    "Parallelism:\n"
    "- kf_forward runs on one thread: the parallelism to find is SIMD lanes and "
    "instruction-level overlap.\n";

static const char *s_pitfalls =
    "- Outputs are filled with garbage before every call: write every element, on every "
    "call.\n"
    "- Do not keep results between calls; each call is checked on fresh inputs.\n"
    "- Inputs are read-only, even as scratch space; use ctx->scratch_alloc for temporary "
    "memory.\n"
    "- Row lengths need not be a multiple of the vector width or the block size: handle the "
    "tail.\n"
    "- Subtract the row maximum before exponentiating, or large inputs overflow.\n";

static const char *s_pitfalls_cuda =
    "- Launch on ctx->stream and do not synchronise the device or allocate memory inside "
    "kf_forward; managed memory is refused at compile time.\n";

static const char *s_analysis =
    "Answer these briefly before the code:\n"
    "1. How many bytes must the kernel read and write at least, and what runtime does that "
    "give at the device's copy bandwidth?\n"
    "2. What held the last kernel back: a compile error, a wrong result (which figures), or "
    "its speed compared with the kernel it came from?\n"
    "3. Which single change is most likely to help next, and what could it break?\n";

json_t *
kf_prompt_default_sections (const char *language)
{
    bool cuda = language && !strcmp (language, "cuda");
    char *pitfalls = kf_strdupf ("%s%s", s_pitfalls, cuda ? s_pitfalls_cuda : "");
    json_t *sections = json_pack ("{s:s, s:s, s:s, s:s}", "philosophy", s_philosophy,
                                  "strategies", cuda ? s_strategies_cuda : s_strategies_c,
                                  "pitfalls", pitfalls ? pitfalls : s_pitfalls, "analysis",
                                  s_analysis);
    free (pitfalls);
    return sections;
}

//  ---------------------------------------------------------------------
//  The example: a correct kernel for another, simple task

static const char *s_example_task =
    "Task: y = max(x, 0) elementwise over a tensor of any shape (one f32 input x, one f32 "
    "output y).";

static const char *s_example_c =
    "#include \"kf_kernel.h\"\n"
    "\n"
    "int\n"
    "kf_forward (const kf_tensor_t *in, int n_in, kf_tensor_t *out, int n_out,\n"
    "            const kf_ctx_t *ctx)\n"
    "{\n"
    "    (void) ctx;\n"
    "    if (n_in != 1 || n_out != 1 || in[0].dtype != KF_F32)\n"
    "        return 1;\n"
    "    const float *restrict x = in[0].data;\n"
    "    float *restrict y = out[0].data;\n"
    "    int64_t n = kf_numel (&in[0]);\n"
    "    for (int64_t i = 0; i < n; i++)\n"
    "        y[i] = x[i] > 0.0f ? x[i] : 0.0f;\n"
    "    return 0;\n"
    "}\n";

static const char *s_example_cuda =
    "#include \"kf_kernel.h\"\n"
    "#include <cuda_runtime.h>\n"
    "\n"
    "__global__ void\n"
    "relu_kernel (const float *__restrict__ x, float *__restrict__ y, int64_t n)\n"
    "{\n"
    "    for (int64_t i = blockIdx.x * (int64_t) blockDim.x + threadIdx.x; i < n;\n"
    "         i += (int64_t) gridDim.x * blockDim.x)\n"
    "        y[i] = fmaxf (x[i], 0.0f);\n"
    "}\n"
    "\n"
    "extern \"C\" int\n"
    "kf_forward (const kf_tensor_t *in, int n_in, kf_tensor_t *out, int n_out,\n"
    "            const kf_ctx_t *ctx)\n"
    "{\n"
    "    if (n_in != 1 || n_out != 1 || in[0].dtype != KF_F32)\n"
    "        return 1;\n"
    "    int64_t n = kf_numel (&in[0]);\n"
    "    int threads = 256;\n"
    "    int64_t blocks = (n + threads - 1) / threads;\n"
    "    if (blocks > 65535)\n"
    "        blocks = 65535;\n"
    "    if (blocks < 1)\n"
    "        return 0;\n"
    "    relu_kernel<<<(unsigned) blocks, threads, 0, (cudaStream_t) ctx->stream>>> (\n"
    "        (const float *) in[0].data, (float *) out[0].data, n);\n"
    "    return cudaGetLastError () == cudaSuccess ? 0 : 1;\n"
    "}\n";

//  ---------------------------------------------------------------------
//  Formatting helpers

static bool
s_has_number (json_t *obj, const char *key)
{
    return json_is_number (json_object_get (obj, key));
}

static double
s_num (json_t *obj, const char *key)
{
    return json_number_value (json_object_get (obj, key));
}

//  "12.3 us", "4.56 ms": a runtime a reader takes in at a glance.
static const char *
s_time_text (double ns, char *buf, size_t size)
{
    if (ns >= 1e9)
        snprintf (buf, size, "%.3g s", ns / 1e9);
    else if (ns >= 1e6)
        snprintf (buf, size, "%.3g ms", ns / 1e6);
    else if (ns >= 1e3)
        snprintf (buf, size, "%.3g us", ns / 1e3);
    else
        snprintf (buf, size, "%.3g ns", ns);
    return buf;
}

static const char *
s_bytes_text (double bytes, char *buf, size_t size)
{
    if (bytes >= 1024.0 * 1024 * 1024)
        snprintf (buf, size, "%.1f GiB", bytes / (1024.0 * 1024 * 1024));
    else if (bytes >= 1024.0 * 1024)
        snprintf (buf, size, "%.1f MiB", bytes / (1024.0 * 1024));
    else if (bytes >= 1024)
        snprintf (buf, size, "%.1f KiB", bytes / 1024);
    else
        snprintf (buf, size, "%.0f B", bytes);
    return buf;
}

//  The kernel's runtime as it was measured: "runtime 12.3 us (reference
//  45.6 us, 3.71x)", or what kept it from being timed.
static void
s_runtime_line (FILE *f, json_t *k)
{
    char a[32], b[32];
    const char *status = kf_jstr (k, "status");
    if (s_has_number (k, "candidate_ns")) {
        fprintf (f, "Runtime: %s", s_time_text (s_num (k, "candidate_ns"), a, sizeof a));
        if (s_has_number (k, "reference_ns"))
            fprintf (f, " (reference %s", s_time_text (s_num (k, "reference_ns"), b, sizeof b));
        if (s_has_number (k, "speedup"))
            fprintf (f, "%s%.3fx the reference's speed", s_has_number (k, "reference_ns")
                                                                ? "; " : " (",
                     s_num (k, "speedup"));
        if (s_has_number (k, "reference_ns") || s_has_number (k, "speedup"))
            fputs (")", f);
        fputs ("\n", f);
    }
    else if (s_has_number (k, "speedup"))
        fprintf (f, "Speedup: %.3fx the reference\n", s_num (k, "speedup"));
    else if (*status)
        fprintf (f, "Runtime: not measured (%s)\n", status);
}

//  What the evaluation said about a kernel that was not correct, with its
//  figures, and the profile of one that was timed.
static void
s_figures (FILE *f, json_t *k)
{
    json_t *c = json_object_get (k, "correctness");
    if (*kf_jstr (k, "detail"))
        fprintf (f, "Verdict: %s: %s\n", *kf_jstr (k, "status") ? kf_jstr (k, "status") : "?",
                 kf_jstr (k, "detail"));
    else if (*kf_jstr (k, "status"))
        fprintf (f, "Verdict: %s\n", kf_jstr (k, "status"));
    if (json_is_object (c) && strcmp (kf_jstr (k, "status"), "correct") != 0) {
        fputs ("Correctness figures (worst over the input sets):", f);
        if (s_has_number (c, "match_fraction"))
            fprintf (f, " %.4f%% of elements within tolerance;",
                     100.0 * s_num (c, "match_fraction"));
        if (s_has_number (c, "max_abs_err"))
            fprintf (f, " max abs error %.3g;", s_num (c, "max_abs_err"));
        if (s_has_number (c, "max_rel_err"))
            fprintf (f, " max rel error %.3g;", s_num (c, "max_rel_err"));
        if (s_has_number (c, "cosine"))
            fprintf (f, " cosine similarity %.6f;", s_num (c, "cosine"));
        if (s_has_number (c, "nonfinite_mismatch") && s_num (c, "nonfinite_mismatch") > 0)
            fprintf (f, " %.0f NaN/Inf where the reference has none;",
                     s_num (c, "nonfinite_mismatch"));
        fputs ("\n", f);
    }
    json_t *bw = json_object_get (k, "bandwidth");
    if (json_is_object (bw) && s_has_number (bw, "candidate_gbs")) {
        char b[32];
        fprintf (f, "Profile: moves %s at %.0f GB/s",
                 s_bytes_text (s_num (bw, "bytes"), b, sizeof b), s_num (bw, "candidate_gbs"));
        if (s_num (bw, "copy_gbs") > 0)
            fprintf (f, ", %.0f%% of the measured copy bandwidth (%.0f GB/s)",
                     100.0 * s_num (bw, "candidate_fraction_of_copy"), s_num (bw, "copy_gbs"));
        if (s_has_number (bw, "reference_gbs"))
            fprintf (f, "; the reference reaches %.0f GB/s", s_num (bw, "reference_gbs"));
        fprintf (f, "%s.\n", json_is_false (json_object_get (bw, "roofline_applies"))
                                 ? " (the data fits in L2, so the DRAM ceiling does not bind)"
                                 : "");
    }
    const char *profile = kf_jstr (k, "profile");
    if (*profile)
        fprintf (f, "Profile (Nsight Compute):\n%s%s", profile,
                 profile[strlen (profile) - 1] == '\n' ? "" : "\n");
}

/* The OpenCL C contract (docs/intel.md has it in full): the exec worker
 * launches the kernels itself, so the prompt explains the launch lines
 * instead of kf_forward. */
static const char s_opencl_contract[] =
    "\n## The kernel contract (OpenCL C, run through Level Zero)\n"
    "No host code and no kf_forward: the file holds __kernel functions and, in comments, "
    "one line per launch in the order they run (a barrier separates launches):\n"
    "    /* kf-launch: KERNEL(ARG, ...) global=E[,E[,E]] local=E[,E[,E]] */\n"
    "    /* kf-scratch: NAME BYTES */   (optional device scratch, kept between calls)\n"
    "Arguments, in the kernel's parameter order: a tensor name of the task (its __global "
    "buffer; inputs may be const), a kf-scratch name, local(BYTES) for a __local buffer, a "
    "task scalar (as float; NAME:double for double), a float literal, or an integer "
    "expression (int; add :uint, :long or :ulong for the others).\n"
    "Expressions: integers with + - * / % and parentheses, numel(t), rows(t) (numel over "
    "the last dimension), cols(t) (the last dimension), dim(t, k), cdiv(a, b), "
    "round_up(a, b), min, max, and any name #defined to an integer in the source or given "
    "as -DNAME=VALUE by a tuning point.\n"
    "global counts work-items and must be a multiple of local in every dimension (round up "
    "and test the index in the kernel); a kernel with reqd_work_group_size is launched "
    "with exactly that local size. Tensors are dense and row-major.\n";

static void
s_code_block (FILE *f, const char *language, const char *source)
{
    size_t n = strlen (source);
    fprintf (f, "```%s\n%s%s```\n", language, source, n && source[n - 1] == '\n' ? "" : "\n");
}

static void
s_hardware (FILE *f, const kf_prompt_in_t *in)
{
    fprintf (f, "\n## Hardware\nThe kernel runs on the target '%s'", in->target ? in->target : "");
    json_t *devices = json_object_get (in->hardware, "devices");
    if (!json_array_size (devices)) {
        fputs (" (no exec worker has described its device yet).\n", f);
        return;
    }
    const char *arch = kf_jstr (in->hardware, "arch");
    fprintf (f, "%s%s%s:\n", *arch ? " (" : "", arch, *arch ? ")" : "");
    size_t i;
    json_t *d;
    json_array_foreach (devices, i, d) {
        char b[32];
        fprintf (f, "- %s", *kf_jstr (d, "name") ? kf_jstr (d, "name") : "unnamed device");
        if (*kf_jstr (d, "compute_capability"))
            fprintf (f, ", compute capability %s", kf_jstr (d, "compute_capability"));
        if (s_has_number (d, "multiprocessors"))
            fprintf (f, ", %.0f multiprocessors", s_num (d, "multiprocessors"));
        if (s_has_number (d, "cores"))
            fprintf (f, ", %.0f cores (kf_forward runs on one)", s_num (d, "cores"));
        if (s_has_number (d, "memory_bytes"))
            fprintf (f, ", %s memory", s_bytes_text (s_num (d, "memory_bytes"), b, sizeof b));
        if (s_has_number (d, "l2_bytes"))
            fprintf (f, ", %s L2 cache", s_bytes_text (s_num (d, "l2_bytes"), b, sizeof b));
        if (s_has_number (d, "copy_bandwidth_gbs"))
            fprintf (f, ", measured device-to-device copy bandwidth %.0f GB/s",
                     s_num (d, "copy_bandwidth_gbs"));
        fputs ("\n", f);
    }
    fputs ("Take these figures into account when you choose block sizes, tiles and how much "
           "data to keep on chip.\n", f);
}

static void
s_sections (FILE *f, json_t *sections)
{
    for (int i = 0; i < KF_PROMPT_SECTIONS; i++) {
        const char *name = kf_prompt_section_names[i];
        const char *text = kf_jstr (sections, name);
        size_t n = strlen (text);
        fprintf (f, "\n## %s\n<<<kf:%s>>>\n%s%s<<<kf:end %s>>>\n", s_section_titles[i], name,
                 text, n && text[n - 1] != '\n' ? "\n" : "", name);
    }
}

//  ---------------------------------------------------------------------
//  The builder

char *
kf_prompt_build (const kf_prompt_in_t *in)
{
    json_t *spec = in->spec;
    const char *language = in->language && *in->language ? in->language : "c";
    char *text = NULL;
    size_t size = 0;
    FILE *f = open_memstream (&text, &size);
    if (!f)
        return NULL;
    bool opencl = !strcmp (language, "opencl");
    fprintf (f,
             "You are an expert in %s kernels for GPUs and CPUs. Your job: a kernel for the "
             "target '%s' that computes exactly what the reference below computes, and runs "
             "faster. Write one complete source file %s; it is compiled on its own, loaded, "
             "checked against the reference on fresh random inputs and timed against it.\n",
             language, in->target ? in->target : "",
             opencl ? "of __kernel functions with the kf-launch lines that say how to run "
                      "them, as the contract below describes"
                    : "that exports kf_forward with C linkage as the contract below declares");

    //  The task and its reference.
    fprintf (f, "\n## Task: %s\n%s\n", kf_jstr (spec, "name"), kf_jstr (spec, "description"));
    if (*kf_jstr (spec, "instructions"))
        fprintf (f, "\nInstructions from the user: %s\n", kf_jstr (spec, "instructions"));
    json_t *scalars = json_object_get (spec, "scalars");
    json_t *tensors = json_pack ("{s:O, s:O, s:o}", "inputs", json_object_get (spec, "inputs"),
                                 "outputs", json_object_get (spec, "outputs"), "scalars",
                                 scalars ? json_incref (scalars) : json_object ());
    char *io = tensors ? json_dumps (tensors, JSON_INDENT (1) | JSON_SORT_KEYS) : NULL;
    json_decref (tensors);
    fprintf (f, "\nTensors and scalars:\n%s\n", io ? io : "");
    free (io);
    json_t *ref = json_object_get (spec, "reference");
    fprintf (f, "\n## Reference implementation (%s)\n", kf_jstr (ref, "language"));
    s_code_block (f, kf_jstr (ref, "language"), kf_jstr (ref, "source"));

    //  The contract.
    if (opencl)
        fputs (s_opencl_contract, f);
    else {
        fputs ("\n## The kernel contract (kf_kernel.h, included as \"kf_kernel.h\")\n", f);
        s_code_block (f, "c", kf_contract_text);
    }

    s_hardware (f, in);

    //  An example.
    bool cuda = !strcmp (language, "cuda");
    fprintf (f, "\n## Example\nA correct %s kernel for a different task. %s\n", language,
             s_example_task);
    s_code_block (f, language,
                  in->example ? in->example : cuda ? s_example_cuda : s_example_c);

    //  Where the search stands.
    if (in->base && *kf_jstr (in->base, "source")) {
        if (in->base_is_best)
            fputs ("\n## Best kernel so far\n", f);
        else
            fputs ("\n## Kernel to improve\nChosen from the archive of distinct approaches "
                   "for this attempt; it is not the fastest kernel found so far.\n", f);
        s_runtime_line (f, in->base);
        s_figures (f, in->base);
        s_code_block (f, language, kf_jstr (in->base, "source"));
    }
    if (in->last) {
        json_t *base_id = json_object_get (in->base, "id");
        json_t *last_id = json_object_get (in->last, "id");
        bool same = base_id && last_id && json_equal (base_id, last_id);
        fputs ("\n## Last kernel tried\n", f);
        s_runtime_line (f, in->last);
        s_figures (f, in->last);
        const char *log = kf_jstr (in->last, "log");
        if (*log) {
            fputs ("Log:\n", f);
            s_code_block (f, "text", log);
        }
        if (same)
            fputs ("(It is the kernel above.)\n", f);
        else if (*kf_jstr (in->last, "source"))
            s_code_block (f, language, kf_jstr (in->last, "source"));
    }
    size_t n_insp = json_array_size (in->inspirations);
    if (n_insp) {
        fputs ("\n## Inspirations\nCorrect kernels that took other approaches (other cells of "
               "the archive); borrow what helps.\n", f);
        for (size_t i = 0; i < n_insp && i < KF_PROMPT_MAX_INSPIRATIONS; i++) {
            json_t *k = json_array_get (in->inspirations, i);
            fprintf (f, "\n### Inspiration %zu%s%s\n", i + 1,
                     *kf_jstr (k, "coords") ? ", coordinates (memory, algorithm, sync) " : "",
                     kf_jstr (k, "coords"));
            s_runtime_line (f, k);
            s_code_block (f, language, kf_jstr (k, "source"));
        }
    }
    if (in->hints && *in->hints)
        fprintf (f, "\n## Hints from the search so far\n%s%s", in->hints,
                 in->hints[strlen (in->hints) - 1] == '\n' ? "" : "\n");

    //  How to think about it: the sections meta-prompting evolves.
    json_t *dflt = in->sections ? NULL : kf_prompt_default_sections (language);
    s_sections (f, in->sections ? in->sections : dflt);
    json_decref (dflt);

    if (in->templated)
        fputs ("\n## Tuning parameters\n"
               "Rewrite the kernel above as a template whose hardware-dependent choices "
               "(threads per block, vector width, rows per block, unrolling) are parameters. "
               "Give each one a default with\n"
               "    #ifndef NAME\n    #define NAME default\n    #endif\n"
               "and list the values worth trying on one comment line such as\n"
               "    /* kf-tune: BLOCK=128,256,512 VEC=1,4 */\n"
               "Every combination must compute the same result. Each point is built with "
               "-DNAME=value and timed; the fastest correct one counts.\n",
               f);

    //  Requirements and the answer format, last. A CUDA task may allow
    //  vendor libraries; nothing else links (kf_toolchain_nvcc.c).
    char libraries[400] = "";
    json_t *libs = json_object_get (in->spec, "libraries");
    if (cuda && json_array_size (libs)) {
        size_t n = (size_t) snprintf (libraries, sizeof libraries,
                                      "- Besides the CUDA runtime you may call");
        size_t i;
        json_t *lib;
        json_array_foreach (libs, i, lib) {
            const char *sep = i == 0 ? " " : i + 1 == json_array_size (libs) ? " and " : ", ";
            const char *label = kf_task_library_label (json_string_value (lib));
            if (n < sizeof libraries)
                n += (size_t) snprintf (libraries + n, sizeof libraries - n, "%s%s", sep,
                                        label ? label : "?");
        }
        if (n < sizeof libraries)
            snprintf (libraries + n, sizeof libraries - n,
                      "; the build links them. Create handles once and reuse them across "
                      "calls, and run their work on ctx->stream.\n");
    }
    else if (cuda)
        snprintf (libraries, sizeof libraries,
                  "- Call nothing beyond the CUDA runtime: no other library is linked.\n");
    fprintf (f,
             "\n## Requirements\n"
             "- Match the reference's results for every input the task describes, within "
             "the task's tolerance.\n"
             "- The file must compile on its own with the contract header and run on the "
             "target; do not cache or reuse results from earlier calls.\n"
             "- %s\n%s"
             "\n## Answer\n"
             "First, under \"Analysis:\", say briefly what limited the last kernel and what "
             "you change and why. Then give the complete source in one ```%s code block.\n",
             opencl ? "Give every kernel a kf-launch line whose arguments follow its parameters."
                    : "Keep kf_forward's signature exactly as the contract declares it.",
             libraries, language);
    if (fclose (f) != 0) {
        free (text);
        return NULL;
    }
    return text;
}

//  ---------------------------------------------------------------------
//  What the database knows

json_t *
kf_prompt_hardware (kf_db_t *db, const char *backend, const char *arch, int64_t run_id)
{
    char run[24];
    snprintf (run, sizeof run, "%lld", (long long) run_id);
    const char *params[3] = { backend ? backend : "host", arch ? arch : "", run };
    //  In a mixed fleet the device that judged the run's latest candidate
    //  is the one its next kernel will most likely meet.
    json_t *row = kf_db_row (db,
                             "SELECT w.id, w.capabilities FROM workers w"
                             " WHERE w.role = 'execute'"
                             " AND w.capabilities->'backends' @> jsonb_build_array($1::text)"
                             " AND ($2 = '' OR w.capabilities->>'arch' = $2)"
                             " ORDER BY w.id IS NOT DISTINCT FROM"
                             "  (SELECT e.worker FROM evaluations e"
                             "   JOIN candidates c ON c.id = e.candidate_id"
                             "   WHERE c.run_id = $3::bigint ORDER BY e.id DESC LIMIT 1) DESC,"
                             " w.last_seen DESC, w.id LIMIT 1",
                             3, params, NULL);
    if (!row)
        return NULL;
    json_t *caps = json_object_get (row, "capabilities");
    json_t *out = json_pack ("{s:O, s:s, s:O, s:O}", "worker", json_object_get (row, "id"),
                             "backend", params[0], "arch",
                             json_object_get (caps, "arch") ? json_object_get (caps, "arch")
                                                            : json_null (),
                             "devices", json_is_array (json_object_get (caps, "devices"))
                                            ? json_object_get (caps, "devices")
                                            : json_array ());
    json_decref (row);
    return out;
}

json_t *
kf_prompt_kernel (kf_db_t *db, int64_t candidate_id)
{
    char id[24];
    snprintf (id, sizeof id, "%lld", (long long) candidate_id);
    const char *params[1] = { id };
    json_t *row = kf_db_row (db,
                             "SELECT c.id, c.status, c.speedup, c.verdict_detail AS detail,"
                             " c.log, c.coords::text AS coords, c.source_hash,"
                             " e.candidate_ns, e.reference_ns,"
                             " e.figures->'correctness' AS correctness,"
                             " e.figures->'bandwidth' AS bandwidth,"
                             /* An Nsight Compute profile of the candidate
                              * (exec worker "profile" job), when one ran. */
                             " (SELECT j.result->>'summary' FROM jobs j"
                             "  WHERE j.candidate_id = c.id AND j.kind = 'profile'"
                             "  AND j.state = 'done' ORDER BY j.id DESC LIMIT 1) AS profile"
                             " FROM candidates c LEFT JOIN LATERAL (SELECT * FROM evaluations"
                             "  WHERE candidate_id = c.id ORDER BY id DESC LIMIT 1) e ON true"
                             " WHERE c.id = $1",
                             1, params, NULL);
    if (!row)
        return NULL;
    const char *hash = kf_jstr (row, "source_hash");
    void *data = NULL;
    size_t n = 0;
    if (*hash && kf_db_fetch_blob (db, "SELECT data FROM blobs WHERE hash = $1", hash, &data,
                                   &n) == 0) {
        json_t *src = json_stringn (data, n);
        if (src)
            json_object_set_new (row, "source", src);
        free (data);
    }
    json_object_del (row, "source_hash");
    //  Absent rather than null, so the builder's tests read simply.
    const char *key;
    json_t *value;
    void *tmp;
    json_object_foreach_safe (row, tmp, key, value)
        if (json_is_null (value))
            json_object_del (row, key);
    return row;
}

char *
kf_prompt_section_text (const char *prompt, const char *name)
{
    if (!prompt || !name)
        return NULL;
    char open[64], close[64];
    snprintf (open, sizeof open, "<<<kf:%s>>>\n", name);
    snprintf (close, sizeof close, "<<<kf:end %s>>>", name);
    const char *a = strstr (prompt, open);
    if (!a)
        return NULL;
    a += strlen (open);
    const char *b = strstr (a, close);
    return b ? strndup (a, (size_t) (b - a)) : NULL;
}
