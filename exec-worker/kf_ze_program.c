/*  kf_ze_program.c - a bundle side's module, kernels and launches on the
 *  Level Zero device this process opened (kf_ze_eval.h): the judge's
 *  reference (kf_backend_ze.c) and the candidate in its own process
 *  (kf_runner_ze.c) are built and launched by the same code.
 *
 *  NOT YET RUN ON HARDWARE (docs/intel.md).
 */
#include "kf_ze_eval.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

//  A failure of SIDE before it ran: the candidate's is load_failed, the
//  reference's fails the job.
static int
s_side_failed (kf_ze_eval_t *e, const kf_ze_side_t *side)
{
    (void) e;
    return side == &e->cand ? KF_ZE_LOAD_FAILED : KF_ZE_REF_FAILED;
}

//  Sets the arguments of launch L of SIDE with OUTS as the outputs.
static uint32_t
s_set_args (kf_ze_eval_t *e, kf_ze_side_t *side, int l, kf_ze_dbuf_t *outs, int *bad_arg)
{
    const kf_ze_launch_t *launch = &side->plan.launches[l];
    kf_ze_handle_t k = side->kernels[l];
    uint32_t rc = kf_ze_dev.api->KernelSetGroupSize (k, (uint32_t) launch->local[0],
                                                (uint32_t) launch->local[1],
                                                (uint32_t) launch->local[2]);
    *bad_arg = -1;
    for (int a = 0; a < launch->n_args && !rc; a++) {
        const kf_ze_arg_t *arg = &launch->args[a];
        void *ptr = NULL;
        switch (arg->kind) {
        case KF_ZE_ARG_TENSOR:
            ptr = arg->index < e->n_in ? e->in_d[arg->index].data
                                       : outs[arg->index - e->n_in].data;
            rc = kf_ze_dev.api->KernelSetArgumentValue (k, (uint32_t) a, sizeof ptr, &ptr);
            break;
        case KF_ZE_ARG_SCRATCH:
            ptr = side->scratch[arg->index];
            rc = kf_ze_dev.api->KernelSetArgumentValue (k, (uint32_t) a, sizeof ptr, &ptr);
            break;
        case KF_ZE_ARG_LOCAL:
            rc = kf_ze_dev.api->KernelSetArgumentValue (k, (uint32_t) a, arg->size, NULL);
            break;
        default:
            rc = kf_ze_dev.api->KernelSetArgumentValue (k, (uint32_t) a, arg->size, arg->value);
            break;
        }
        if (rc)
            *bad_arg = a;
    }
    return rc;
}

//  Appends one call of SIDE (every launch, a barrier after each) writing
//  OUTS. A refused argument or launch is the side's own fault.
int
kf_ze_append_call (kf_ze_eval_t *e, kf_ze_side_t *side, kf_ze_dbuf_t *outs)
{
    for (int l = 0; l < side->plan.n_launches; l++) {
        int bad_arg;
        uint32_t rc = s_set_args (e, side, l, outs, &bad_arg);
        const kf_ze_launch_t *launch = &side->plan.launches[l];
        kf_ze_group_count_t groups = { launch->groups[0], launch->groups[1], launch->groups[2] };
        if (!rc)
            rc = kf_ze_dev.api->CommandListAppendLaunchKernel (kf_ze_dev.list, side->kernels[l],
                                                               &groups, NULL, 0, NULL);
        if (!rc)
            rc = kf_ze_dev.api->CommandListAppendBarrier (kf_ze_dev.list, NULL, 0, NULL);
        if (rc) {
            kf_ze_dev.api->CommandListReset (kf_ze_dev.list);
            if (bad_arg >= 0)
                snprintf (e->detail, sizeof e->detail,
                          "%s: kf-launch of %s: argument %d refused: %s (does the kernel's "
                          "parameter have that type?)", side->what, launch->kernel, bad_arg,
                          kf_ze_err (rc));
            else
                snprintf (e->detail, sizeof e->detail, "%s: launching %s: %s", side->what,
                          launch->kernel, kf_ze_err (rc));
            return side == &e->cand ? KF_ZE_LOAD_FAILED : KF_ZE_REF_FAILED;
        }
    }
    return KF_ZE_OK;
}

//  The module and kernels of a bundle side; scratch allocated once.
int
kf_ze_side_build (kf_ze_eval_t *e, kf_ze_side_t *side, size_t size, json_t *task)
{
    char why[400];
    if (kf_ze_bundle_parse (side->bytes, size, &side->bundle, why, sizeof why)
        || kf_ze_plan (&side->bundle, task, &side->plan, why, sizeof why)) {
        snprintf (e->detail, sizeof e->detail, "%s does not load: %s", side->what, why);
        return s_side_failed (e, side);
    }
    kf_ze_module_desc_t desc = {
        .stype = KF_ZE_STYPE_MODULE_DESC, .format = KF_ZE_MODULE_FORMAT_IL_SPIRV,
        .inputSize = side->bundle.spirv_size, .pInputModule = side->bundle.spirv,
        .pBuildFlags = ""
    };
    kf_ze_handle_t log = NULL;
    kf_eval_set_phase (side == &e->cand ? 'C' : 'R');   // the driver compiles here
    uint32_t rc = kf_ze_dev.api->ModuleCreate (kf_ze_dev.context, kf_ze_dev.device, &desc,
                                               &side->module, &log);
    kf_eval_set_phase ('H');
    if (rc) {
        char text[300] = "";
        size_t len = 0;
        if (log && kf_ze_dev.api->ModuleBuildLogGetString (log, &len, NULL) == 0 && len > 0) {
            char *full = malloc (len);
            if (full && kf_ze_dev.api->ModuleBuildLogGetString (log, &len, full) == 0)
                snprintf (text, sizeof text, ": %s", full);
            free (full);
        }
        snprintf (e->detail, sizeof e->detail, "%s does not load: the driver could not build "
                  "its SPIR-V: %s%s", side->what, kf_ze_err (rc), text);
        if (log)
            kf_ze_dev.api->ModuleBuildLogDestroy (log);
        return s_side_failed (e, side);
    }
    if (log)
        kf_ze_dev.api->ModuleBuildLogDestroy (log);
    for (int l = 0; l < side->plan.n_launches; l++) {
        kf_ze_kernel_desc_t kdesc = { .stype = KF_ZE_STYPE_KERNEL_DESC,
                                      .pKernelName = side->plan.launches[l].kernel };
        rc = kf_ze_dev.api->KernelCreate (side->module, &kdesc, &side->kernels[l]);
        if (rc) {
            snprintf (e->detail, sizeof e->detail, "%s does not load: kf-launch names kernel "
                      "'%s': %s", side->what, side->plan.launches[l].kernel, kf_ze_err (rc));
            return s_side_failed (e, side);
        }
        if (side->plan.launches[l].local[0] * side->plan.launches[l].local[1]
            * side->plan.launches[l].local[2] > kf_ze_dev.compute.maxTotalGroupSize
            && kf_ze_dev.compute.maxTotalGroupSize > 0) {
            snprintf (e->detail, sizeof e->detail, "%s does not load: %s: local size above "
                      "the device's maximum work-group size %u", side->what,
                      side->plan.launches[l].kernel, kf_ze_dev.compute.maxTotalGroupSize);
            return s_side_failed (e, side);
        }
    }
    for (int s = 0; s < side->plan.n_scratch; s++)
        if ((rc = kf_ze_device_alloc (&side->scratch[s], (size_t) side->plan.scratch_bytes[s]))) {
            snprintf (e->detail, sizeof e->detail, "%s: scratch '%s' of %llu bytes: %s",
                      side->what, side->plan.scratch_name[s],
                      (unsigned long long) side->plan.scratch_bytes[s], kf_ze_err (rc));
            return s_side_failed (e, side);
        }
    return KF_ZE_OK;
}

//  Every argument once, before anything runs: a kf-launch that does not
//  fit its kernel is a load failure, not a crash.
int
kf_ze_bind (kf_ze_eval_t *e, kf_ze_side_t *side, kf_ze_dbuf_t *outs)
{
    int st = kf_ze_append_call (e, side, outs);
    kf_ze_dev.api->CommandListReset (kf_ze_dev.list);
    return st;
}

//  The kernels and module of SIDE given back (its scratch goes with the
//  context).
void
kf_ze_side_free (kf_ze_side_t *side)
{
    for (int l = 0; l < KF_ZE_MAX_LAUNCHES; l++)
        if (side->kernels[l]) {
            kf_ze_dev.api->KernelDestroy (side->kernels[l]);
            side->kernels[l] = NULL;
        }
    if (side->module)
        kf_ze_dev.api->ModuleDestroy (side->module);
    side->module = NULL;
}
