/*  test_prompt_round15.c - what round 15 of the model in the loop (issue
 *  15, docs/search.md "Fifteenth round") found in the task's facts:
 *
 *  1. relu(a.T @ b + bias), a stored [K][M], read "compute: not known
 *     (the task gives no operation count)": the product's shapes now
 *     include a first operand used transposed;
 *  2. atan(x) * rsqrt(x * x + 1) was not known as costly math, so its
 *     philosophy said the formula "calls no exp, tanh, erf or log" and is
 *     bound by memory; the costly names are now the formula count's libm
 *     names.
 */
#include "../../coordinator/kf_prompt_class.h"
#include "../../coordinator/kf_prompt_target.h"
#include "../kf_test.h"
#include <stdlib.h>
#include <string.h>

static json_t *
s_spec (const char *op, const char *source, json_t *inputs, json_t *outputs)
{
    return json_pack ("{s:s, s:s, s:s, s:o, s:o, s:{s:s, s:s}, s:{s:f, s:f}}", "name", op,
                      "op", op, "description", "a task", "inputs", inputs, "outputs", outputs,
                      "reference", "language", "pytorch", "source", source, "tolerance",
                      "rtol", 0.01, "atol", 1e-5);
}

static void
test_product_at (void)
{
    //  A PyTorch file's task has no op of its own (kfctl submit FILE.py):
    //  the class comes from the code.
    json_t *spec = s_spec ("",
                           "class Model(nn.Module):\n    def forward(self, a, b, bias):\n"
                           "        return torch.relu(a.T @ b + bias)\n",
                           json_pack ("[{s:s, s:[i,i], s:s}, {s:s, s:[i,i], s:s},"
                                      " {s:s, s:[i], s:s}]", "name", "in0", "shape", 1024, 384,
                                      "dtype", "f32", "name", "in1", "shape", 1024, 768, "dtype",
                                      "f32", "name", "in2", "shape", 768, "dtype", "f32"),
                           json_pack ("[{s:s, s:[i,i], s:s}]", "name", "out0", "shape", 384,
                                      768, "dtype", "f32"));
    CHECK (kf_prompt_task_class (spec) == KF_CLASS_MATMUL);
    long long mnk[3] = { 0, 0, 0 };
    CHECK (kf_prompt_matmul_flops (spec, mnk) == 2.0 * 384 * 768 * 1024);
    CHECK (mnk[0] == 384 && mnk[1] == 768 && mnk[2] == 1024);
    json_decref (spec);
}

static void
test_atan_costly (void)
{
    json_t *spec = s_spec ("atan_rsqrt",
                           "class Model(nn.Module):\n    def forward(self, x, y0):\n"
                           "        return torch.atan(x) * torch.rsqrt(x * x + 1) + 0.5 * y0\n",
                           json_pack ("[{s:s, s:[i], s:s}, {s:s, s:[i], s:s}]", "name", "in0",
                                      "shape", 4096, "dtype", "f32", "name", "in1", "shape", 4096,
                                      "dtype", "f32"),
                           json_pack ("[{s:s, s:[i], s:s}]", "name", "out0", "shape", 4096,
                                      "dtype", "f32"));
    CHECK (kf_prompt_task_class (spec) == KF_CLASS_ELEMENTWISE);
    CHECK (kf_prompt_costly_math (spec));
    json_t *sections = kf_prompt_default_sections_for ("c", "host", spec);
    const char *ph = json_string_value (json_object_get (sections, "philosophy"));
    CHECK (ph && !strstr (ph, "calls no exp, tanh, erf or log"));
    json_decref (sections);
    //  A formula of cheap arithmetic is still cheap.
    json_object_set_new (json_object_get (spec, "reference"), "source",
                         json_string ("def forward(self, x, y0):\n    return x * 2 + y0\n"));
    json_object_set_new (spec, "op", json_string ("scale_add"));
    json_object_set_new (spec, "name", json_string ("scale_add"));
    CHECK (!kf_prompt_costly_math (spec));
    json_decref (spec);
}

int
main (void)
{
    test_product_at ();
    test_atan_costly ();
    return kf_test_done ("test_prompt_round15");
}
