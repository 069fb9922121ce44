/*  kf_prompt.c - the generation prompt, assembled from its sections
 *  (kf_prompt.h).
 *
 *  The order follows what a model needs first: what to compute (task and
 *  reference), the rules it must keep (the contract), where it will run
 *  (hardware), what a correct answer looks like (an example), where the
 *  search stands (best and last kernels with their figures, inspirations:
 *  kf_prompt_standing.c; the run's other candidates and this attempt:
 *  kf_prompt_history.c, kf_prompt_attempt.c; hints: kf_prompt_hints.c),
 *  how to think about it (the evolvable sections), and finally the
 *  requirements and the answer format, last so they are freshest.
 *  The wording is ours; the structure is the one the KernelFoundry paper
 *  describes for its main prompt (appendix E.1) and templated kernels
 *  (E.2). Every number shown comes from the database: a prompt never
 *  claims a figure the evaluation did not measure.
 */
#include "kf_prompt.h"
#include "kf_prompt_changed.h"
#include "kf_meta_note.h"
#include "kf_prompt_diff.h"
#include "kf_prompt_facts.h"
#include "kf_prompt_history.h"
#include "kf_prompt_hints.h"
#include "kf_prompt_standing.h"
#include "kf_prompt_target.h"
#include "kf_prompt_tune.h"
#include "kf_task.h"
#include "kf_json.h"
#include "kf_log.h"
#include "kf_descriptor.h"
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
//  The evolvable sections as a run starts: kf_prompt_class.c chooses
//  them by the task's class and the target's kind.

json_t *
kf_prompt_default_sections (const char *language)
{
    return kf_prompt_default_sections_for (language, NULL, NULL);
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

const char *
kf_prompt_time_text (double ns, char *buf, size_t size)
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
s_sections (FILE *f, json_t *sections)
{
    for (int i = 0; i < KF_PROMPT_SECTIONS; i++) {
        const char *name = kf_prompt_section_names[i];
        const char *text = kf_jstr (sections, name);
        size_t n = strlen (text);
        fprintf (f, "\n## %s\n<<<kf:%s>>>\n%s%s<<<kf:end %s>>>\n", s_section_titles[i], name,
                 text, n && text[n - 1] != '\n' ? "\n" : "", name);
    }
    fputs (kf_jstr (sections, KF_META_TESTED_KEY), f);   //  kf_meta_guess_tested's
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
    kf_target_kind_t kind = kf_prompt_target_kind (in->target, language);
    fprintf (f,
             "You are an expert in %s kernels for %s. Your job: a kernel for the target '%s' "
             "that computes what the reference below computes, within the stated tolerance, "
             "and runs faster. Write one complete source file %s; it is compiled on its own, "
             "loaded, checked against the reference on fresh random inputs and timed against "
             "it.\n",
             language, kind == KF_TARGET_HOST ? "CPUs" : "GPUs", in->target ? in->target : "",
             opencl ? "of __kernel functions with the kf-launch lines that say how to run "
                      "them, as the contract below describes"
                    : "that exports kf_forward with C linkage as the contract below declares");

    //  The task, its data, what counts as correct, and its reference.
    fprintf (f, "\n## Task: %s\n%s\nClass of work: %s.\n", kf_jstr (spec, "name"),
             kf_jstr (spec, "description"), kf_prompt_class_name (kf_prompt_task_class (spec)));
    if (*kf_jstr (spec, "instructions"))
        fprintf (f, "\nInstructions from the user: %s\n", kf_jstr (spec, "instructions"));
    kf_prompt_data_section (f, spec, in->input_stats);
    kf_prompt_tolerance_section (f, spec, in->output_range);
    json_t *ref = json_object_get (spec, "reference");
    fprintf (f, "\n## Reference implementation (%s)\n", kf_jstr (ref, "language"));
    kf_prompt_code_block (f, kf_jstr (ref, "language"), kf_jstr (ref, "source"));

    //  The contract.
    if (opencl)
        fputs (s_opencl_contract, f);
    else {
        fputs ("\n## The kernel contract (kf_kernel.h, included as \"kf_kernel.h\")\n", f);
        kf_prompt_code_block (f, "c", kf_contract_text);
    }

    kf_prompt_target_section (f, in->target, language, in->hardware, in->compiler);
    if (kind == KF_TARGET_HOST && !opencl) {
        kf_prompt_host_layout (f, spec);
        kf_prompt_host_strides (f, spec);
        kf_prompt_host_call_facts (f);
    }
    //  A PyTorch reference is timed once, by the reference job, not
    //  beside each kernel (docs/pytorch-references.md, "Speedups").
    if (!strcmp (kf_jstr (json_object_get (spec, "reference"), "language"), "pytorch"))
        fputs ("Speedups: the reference is PyTorch eager, timed once by the run's reference "
               "job; each kernel's speedup divides that one time by the kernel's own median, "
               "so a busier or quieter machine moves a kernel's figure without the reference "
               "moving with it. Compare kernels by runtime and by their share of the peaks "
               "as well as by speedup.\n", f);
    json_t *timed = in->base ? in->base : in->best;
    json_t *device = json_array_get (json_object_get (in->hardware, "devices"), 0);
    kf_prompt_reference_rate_line (f, spec, device, kf_jnum (timed, "reference_ns", 0));

    //  An example, where a kernel is to be written: a tuning round
    //  templates the kernel it shows.
    bool cuda = !strcmp (language, "cuda");
    if (!in->templated) {
        fprintf (f, "\n## Example\nA correct %s kernel for a different task. %s\n", language,
                 s_example_task);
        kf_prompt_code_block (f, language,
                      in->example ? in->example : cuda ? s_example_cuda : s_example_c);
    }

    //  Where the search stands, what became of the run's other
    //  candidates, and where this attempt should go.
    kf_prompt_standing (f, in, language);
    kf_prompt_other_results (f, in);
    //  The gradient's hints, less those on too few moves or against the
    //  plan's set-aside list (kf_prompt_hints.h).
    kf_prompt_hints_section (f, in, kind);
    kf_prompt_direction (f, in);

    //  How to think about it: the sections meta-prompting evolves, with
    //  their version (round 4: no prompt said which it used). A tuning
    //  round keeps its kernel's structure: the kernel-writing advice is
    //  left out there (round 12: four sections of background in every
    //  tuning prompt), and its attempts do not count for a version.
    if (in->templated)
        kf_prompt_tune_section (f, in);
    else {
        json_t *dflt = in->sections ? NULL
                                    : kf_prompt_default_sections_for (language, in->target,
                                                                      spec);
        kf_meta_version_line (f, in);   //  with the meta rounds' state (kf_meta_note.h)
        s_sections (f, in->sections ? in->sections : dflt);
        json_decref (dflt);
    }

    //  A verdict that quotes a screen figure needs the word explained
    //  once (docs/search.md, "Fidelity").
    fflush (f);
    if (text && strstr (text, "(screen "))
        fputs ("\n(A \"screen\" is the short first timing every candidate gets, about a "
               "tenth of the full protocol; a candidate close to the best is then timed in "
               "full, and only the full figure counts. The two can differ by much more than "
               "timing noise, in either direction: trust the full figure.)\n", f);

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
    //  Ask about the last kernel only when there is one.
    const char *first_ask =
        in->templated && in->base
            ? "what limits the kernel you turn into a template and which of its choices "
              "become parameters, and why"
        : in->last ? "what limited the last kernel tried and what you change and why"
        : in->base ? "what limits the kernel to improve and what you change and why"
                   : "which approach you take and why";
    //  Round 29: what a try changed was told by counts of lines only.
    const char *change_what =
        in->templated && in->base ? "which of the kernel's choices become parameters"
        : in->base                ? "what this try changes of the kernel to improve"
                                  : "the approach this kernel takes";
    fprintf (f,
             "\n## Requirements\n"
             "- Match the reference's results for every input and shape case above, within "
             "the tolerance above.\n"
             "- The file must compile on its own with the contract header and run on the "
             "target; do not cache or reuse results from earlier calls.\n"
             "- %s\n%s"
             "\n## Answer\n"
             "First, under \"Analysis:\", say briefly %s. Then give the complete source in one "
             "```%s code block whose first line is a comment, `// change: ` and %s in words "
             "(at most %d characters): later prompts quote it beside this try's figures.\n",
             opencl ? "Give every kernel a kf-launch line whose arguments follow its parameters."
                    : "Keep kf_forward's signature exactly as the contract declares it.",
             libraries, first_ask, language, change_what, KF_PROMPT_SAID_MAX);
    if (fclose (f) != 0) {
        free (text);
        return NULL;
    }
    return text;
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
