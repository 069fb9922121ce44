/*  kf_ocl_program.c - a bundle side on the OpenCL device (kf_ocl_eval.h):
 *  its program built from the bundle's SPIR-V where the device takes IL,
 *  else from its OpenCL C source (the platform's build log kept for the
 *  verdict), its kernels and scratch, the kernels' arguments set from the
 *  kf-launch plan, and one call's launches enqueued in order.
 *
 *  The judge uses it for the reference (and to build the candidate
 *  before its own process does); the runner (kf_runner_ocl.c) for the
 *  candidate, over the buffers it shares with the judge.
 */
#include "kf_eval_channel.h"
#include "kf_ocl_eval.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define S_LOG_MAX 1500                  // bytes of a build log in a verdict

static int
s_side_failed (kf_ocl_eval_t *e, const kf_ocl_side_t *side)
{
    return side == &e->cand ? KF_OCL_LOAD_FAILED : KF_OCL_REF_FAILED;
}

//  Sets the arguments of launch L of SIDE with OUTS as the outputs.
static kf_cl_int
s_set_args (kf_ocl_eval_t *e, kf_ocl_side_t *side, int l, kf_ocl_dbuf_t *outs, int *bad_arg)
{
    const kf_ze_launch_t *launch = &side->plan.launches[l];
    kf_cl_handle k = side->kernels[l];
    kf_cl_int rc = KF_CL_SUCCESS;
    *bad_arg = -1;
    for (int a = 0; a < launch->n_args && !rc; a++) {
        const kf_ze_arg_t *arg = &launch->args[a];
        kf_cl_handle mem;
        switch (arg->kind) {
        case KF_ZE_ARG_TENSOR:
            mem = arg->index < e->n_in ? e->in_d[arg->index].data
                                       : outs[arg->index - e->n_in].data;
            rc = kf_ocl_dev.api->SetKernelArg (k, (kf_cl_uint) a, sizeof mem, &mem);
            break;
        case KF_ZE_ARG_SCRATCH:
            mem = side->scratch[arg->index];
            rc = kf_ocl_dev.api->SetKernelArg (k, (kf_cl_uint) a, sizeof mem, &mem);
            break;
        case KF_ZE_ARG_LOCAL:
            rc = kf_ocl_dev.api->SetKernelArg (k, (kf_cl_uint) a, arg->size, NULL);
            break;
        default:
            rc = kf_ocl_dev.api->SetKernelArg (k, (kf_cl_uint) a, arg->size, arg->value);
            break;
        }
        if (rc)
            *bad_arg = a;
    }
    return rc;
}

int
kf_ocl_bind (kf_ocl_eval_t *e, kf_ocl_side_t *side, kf_ocl_dbuf_t *outs)
{
    for (int l = 0; l < side->plan.n_launches; l++) {
        int bad_arg;
        kf_cl_int rc = s_set_args (e, side, l, outs, &bad_arg);
        if (rc) {
            snprintf (e->detail, sizeof e->detail, "%s: kf-launch of %s: argument %d refused: "
                      "%s (does the kernel's parameter have that type?)", side->what,
                      side->plan.launches[l].kernel, bad_arg, kf_ocl_err (rc));
            return s_side_failed (e, side);
        }
    }
    return KF_OCL_OK;
}

int
kf_ocl_enqueue_call (kf_ocl_eval_t *e, kf_ocl_side_t *side, kf_ocl_dbuf_t *outs,
                     kf_cl_handle *first, kf_cl_handle *last)
{
    for (int l = 0; l < side->plan.n_launches; l++) {
        int bad_arg;
        kf_cl_int rc = s_set_args (e, side, l, outs, &bad_arg);
        const kf_ze_launch_t *launch = &side->plan.launches[l];
        size_t global[3], local[3];
        for (int d = 0; d < 3; d++) {
            global[d] = (size_t) launch->global[d];
            local[d] = (size_t) launch->local[d];
        }
        kf_cl_handle *event = !first ? NULL : l == 0 ? first
                              : l == side->plan.n_launches - 1 ? last : NULL;
        if (!rc)
            rc = kf_ocl_dev.api->EnqueueNDRangeKernel (kf_ocl_dev.queue, side->kernels[l],
                                                       (kf_cl_uint) launch->dims, NULL, global,
                                                       local, 0, NULL, event);
        if (first && side->plan.n_launches == 1 && !rc)
            *last = NULL;                // one launch: FIRST is also the last
        if (rc) {
            if (bad_arg >= 0)
                snprintf (e->detail, sizeof e->detail,
                          "%s: kf-launch of %s: argument %d refused: %s (does the kernel's "
                          "parameter have that type?)", side->what, launch->kernel, bad_arg,
                          kf_ocl_err (rc));
            else
                snprintf (e->detail, sizeof e->detail, "%s: launching %s: %s", side->what,
                          launch->kernel, kf_ocl_err (rc));
            return side == &e->cand ? KF_OCL_LOAD_FAILED : KF_OCL_REF_FAILED;
        }
    }
    return KF_OCL_OK;
}

//  The build options: the bundle's -D flags, and OpenCL C 2.0 (as the
//  compile worker checked the source) where the device has it.
static void
s_options (const kf_ze_bundle_t *b, char *buf, size_t size)
{
    int n = snprintf (buf, size, "%s", strncmp (kf_ocl_dev.version, "OpenCL 1.", 9) == 0
                                       ? "" : "-cl-std=CL2.0");
    for (int d = 0; d < b->n_defines && n >= 0 && (size_t) n < size; d++)
        n += snprintf (buf + n, size - (size_t) n, " -D%s=%s", b->define_name[d],
                       b->define_value[d]);
}

//  The program from the bundle's SPIR-V (built with the same -D flags as
//  its source), where the device takes IL (CL_DEVICE_IL_VERSION names
//  SPIR-V) and the loader has clCreateProgramWithIL. KF_OPENCL_IL=source
//  never tries it; =spirv tries it whatever the device says (a device
//  without IL then refuses it, and the source is built). True when
//  built; else SIDE->how says why the source is used.
static bool
s_build_il (kf_ocl_eval_t *e, kf_ocl_side_t *side)
{
    kf_ocl_api_t *api = kf_ocl_dev.api;
    const char *mode = getenv ("KF_OPENCL_IL");
    bool force = mode && !strcmp (mode, "spirv");
    if (mode && !strcmp (mode, "source")) {
        snprintf (side->how, sizeof side->how, "source (KF_OPENCL_IL=source)");
        return false;
    }
    if (!side->bundle.spirv_size || !api->CreateProgramWithIL || (!kf_ocl_dev.il && !force)) {
        snprintf (side->how, sizeof side->how, "source (%s)", !side->bundle.spirv_size
                  ? "the bundle has no SPIR-V" : !api->CreateProgramWithIL
                  ? "the ICD loader has no clCreateProgramWithIL"
                  : "the device takes no SPIR-V: its CL_DEVICE_IL_VERSION names none");
        return false;
    }
    kf_cl_int rc = KF_CL_SUCCESS;
    kf_cl_handle p = api->CreateProgramWithIL (kf_ocl_dev.context, side->bundle.spirv,
                                               side->bundle.spirv_size, &rc);
    if (p && !rc) {
        kf_eval_set_phase (side == &e->cand ? 'C' : 'R');
        rc = api->BuildProgram (p, 1, &kf_ocl_dev.device, "", NULL, NULL);
        kf_eval_set_phase ('H');
        if (!rc) {
            side->program = p;
            snprintf (side->how, sizeof side->how, "spirv");
            return true;
        }
        snprintf (side->how, sizeof side->how, "source (the platform did not build the "
                  "SPIR-V: %s)", kf_ocl_err (rc));
    }
    else
        snprintf (side->how, sizeof side->how, "source (clCreateProgramWithIL refused the "
                  "SPIR-V: %s)", kf_ocl_err (rc ? rc : KF_CL_INVALID_OPERATION));
    if (p)
        api->ReleaseProgram (p);
    return false;
}

//  The program of a bundle side, built from its SPIR-V where the device
//  takes it, else from its source; the build log in E->detail when it
//  fails.
static int
s_build (kf_ocl_eval_t *e, kf_ocl_side_t *side)
{
    kf_ocl_api_t *api = kf_ocl_dev.api;
    kf_cl_int rc;
    if (s_build_il (e, side))
        return KF_OCL_OK;
    const char *src = side->bundle.source;
    size_t len = side->bundle.source_size;
    side->program = api->CreateProgramWithSource (kf_ocl_dev.context, 1, &src, &len, &rc);
    if (!side->program || rc) {
        snprintf (e->detail, sizeof e->detail, "%s does not load: %s", side->what,
                  kf_ocl_err (rc));
        return s_side_failed (e, side);
    }
    char options[KF_ZE_MAX_DEFINES * (2 * KF_ZE_NAME_MAX + 4) + 32];
    s_options (&side->bundle, options, sizeof options);
    kf_eval_set_phase (side == &e->cand ? 'C' : 'R');    // the platform compiles here
    rc = api->BuildProgram (side->program, 1, &kf_ocl_dev.device, options, NULL, NULL);
    kf_eval_set_phase ('H');
    if (rc == KF_CL_SUCCESS)
        return KF_OCL_OK;
    char log[S_LOG_MAX + 1] = "";
    size_t log_len = 0;
    if (api->GetProgramBuildInfo (side->program, kf_ocl_dev.device, KF_CL_PROGRAM_BUILD_LOG, 0,
                                  NULL, &log_len) == KF_CL_SUCCESS && log_len > 0) {
        char *full = malloc (log_len + 1);
        if (full && api->GetProgramBuildInfo (side->program, kf_ocl_dev.device,
                                              KF_CL_PROGRAM_BUILD_LOG, log_len, full, NULL) == 0) {
            full[log_len] = 0;
            snprintf (log, sizeof log, "%s", full);
        }
        free (full);
    }
    snprintf (e->detail, sizeof e->detail, "%s does not load: %s could not build its OpenCL C "
              "source: %s%s", side->what, kf_ocl_dev.platform_name, kf_ocl_err (rc),
              log[0] ? ": " : "");
    //  As much of the log as fits: it is what the model reads.
    size_t used = strlen (e->detail), take = strlen (log);
    if (take > sizeof e->detail - 1 - used)
        take = sizeof e->detail - 1 - used;
    memcpy (e->detail + used, log, take);
    e->detail[used + take] = 0;
    return s_side_failed (e, side);
}

int
kf_ocl_side_build (kf_ocl_eval_t *e, kf_ocl_side_t *side, size_t size, json_t *task)
{
    char why[400];
    if (kf_ze_bundle_parse (side->bytes, size, &side->bundle, why, sizeof why)
        || kf_ze_plan (&side->bundle, task, &side->plan, why, sizeof why)) {
        snprintf (e->detail, sizeof e->detail, "%s does not load: %s", side->what, why);
        return s_side_failed (e, side);
    }
    int st = s_build (e, side);
    if (st)
        return st;
    kf_cl_int rc;
    for (int l = 0; l < side->plan.n_launches; l++) {
        const kf_ze_launch_t *launch = &side->plan.launches[l];
        side->kernels[l] = kf_ocl_dev.api->CreateKernel (side->program, launch->kernel, &rc);
        if (!side->kernels[l] || rc) {
            snprintf (e->detail, sizeof e->detail, "%s does not load: kf-launch names kernel "
                      "'%s': %s", side->what, launch->kernel, kf_ocl_err (rc));
            return s_side_failed (e, side);
        }
        if (launch->local[0] * launch->local[1] * launch->local[2] > kf_ocl_dev.max_group_size
            && kf_ocl_dev.max_group_size > 0) {
            snprintf (e->detail, sizeof e->detail, "%s does not load: %s: local size above "
                      "the device's maximum work-group size %zu", side->what, launch->kernel,
                      kf_ocl_dev.max_group_size);
            return s_side_failed (e, side);
        }
    }
    for (int s = 0; s < side->plan.n_scratch; s++)
        if ((rc = kf_ocl_alloc (&side->scratch[s], (size_t) side->plan.scratch_bytes[s]))) {
            snprintf (e->detail, sizeof e->detail, "%s: scratch '%s' of %llu bytes: %s",
                      side->what, side->plan.scratch_name[s],
                      (unsigned long long) side->plan.scratch_bytes[s], kf_ocl_err (rc));
            return s_side_failed (e, side);
        }
    return KF_OCL_OK;
}
