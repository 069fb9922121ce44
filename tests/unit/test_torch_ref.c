/*  test_torch_ref.c - PyTorch reference jobs end to end: the example
 *  problems in examples/pytorch run through the real handler with the
 *  interpreter the worker would find, in the sandbox. The manifest must
 *  describe the data exactly (roles, order, dtypes, shapes, offsets), the
 *  bytes must mean what they say (softmax rows sum to one, the linear
 *  layer's output recomputed here from its exported input and parameters),
 *  the same seed must give the same bytes and another seed others, a
 *  problem that raises must fail the job with its traceback, and outputs
 *  that prove nothing must be flagged degenerate. The data stays in the
 *  worker's reference store (kf_refcache.h): no frame comes back, and a
 *  worker with an empty store makes the same bytes again. */
#include "../../exec-worker/kf_exec.h"
#include "../../exec-worker/kf_torch_ref.h"
#include "../kf_test.h"
#include "kf_file.h"
#include "kf_subproc.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char *
s_slurp (const char *path)
{
    FILE *f = fopen (path, "rb");
    if (!f)
        return NULL;
    char *text = calloc (1, 1 << 16);
    size_t n = text ? fread (text, 1, (1 << 16) - 1, f) : 0;
    (void) n;
    fclose (f);
    return text;
}

typedef struct {
    bool ok;
    char *error;
    json_t *result;
    zframe_t *data;          //  the data, read back from the store
    json_t *note;            //  kf_torch_ref_data_link's
} s_out_t;

//  An evaluate payload's reference_data for a reference job's RESULT, as
//  the coordinator builds it.
static json_t *
s_refdata (json_t *result)
{
    return json_pack ("{s:O, s:{s:O, s:O, s:O, s:O, s:O}}", "sets",
                      json_object_get (result, "sets"), "data",
                      "key", json_object_get (result, "data_key"),
                      "bytes", json_object_get (result, "data_bytes"),
                      "hash", json_object_get (result, "data_hash"),
                      "inputs_hash", json_object_get (result, "inputs_hash"),
                      "seed", json_object_get (result, "seed"));
}

//  The data REFDATA names, through REF's store (made again there when it
//  lacks it) as an evaluation gets it; *NOTE and *ERROR as the call left
//  them. A frame, or NULL.
static zframe_t *
s_fetch (kf_torch_ref_t *ref, json_t *refdata, const char *source, json_t **note,
         char **error)
{
    char dir[] = "/tmp/kf-torch-ref-fetch-XXXXXX";
    if (!mkdtemp (dir))
        return NULL;
    char path[64];
    snprintf (path, sizeof path, "%s/reference.bin", dir);
    zframe_t *frame = NULL;
    if (kf_torch_ref_data_link (ref, refdata, source, path, note, error) == 0) {
        size_t size = 0;
        char *bytes = kf_file_read (path, (size_t) 1 << 30, &size);
        frame = bytes ? zframe_new (bytes, size) : NULL;
        free (bytes);
    }
    kf_subproc_rmtree (dir);
    return frame;
}

static void
s_out_free (s_out_t *o)
{
    free (o->error);
    json_decref (o->result);
    zframe_destroy (&o->data);
    json_decref (o->note);
    memset (o, 0, sizeof *o);
}

//  Runs one reference job on REF (through kf_exec_handle when VIA_EXEC, as
//  the worker does) and keeps what came back.
static s_out_t
s_job_on (kf_torch_ref_t *ref, const char *source, int seed, int sets, bool compile,
          bool via_exec, const char *device)
{
    kf_job_t job = { .job_id = 1, .lease = 1, .kind = "reference" };
    job.payload = json_pack ("{s:s, s:i, s:i, s:s, s:b, s:{s:f, s:f, s:i}}",
                             "source", source, "seed", seed, "sets", sets,
                             "device", device, "compile", compile,
                             "timing", "min_time_s", 0.05, "warmup_s", 0.01,
                             "min_samples", 5);
    kf_job_result_t res;
    if (via_exec) {
        kf_torch_ref_set_shared (ref);
        kf_exec_handle (NULL, &job, &res);
        kf_torch_ref_set_shared (NULL);
    }
    else
        kf_torch_ref_handle (ref, &job, &res);
    json_decref (job.payload);
    s_out_t o = { .ok = res.ok, .error = res.error, .result = res.result };
    //  Nothing of tensor size comes back: the data is in the store.
    CHECK (res.frames == NULL);
    zmsg_destroy (&res.frames);
    if (o.ok && json_is_string (json_object_get (o.result, "data_key"))) {
        json_t *refdata = s_refdata (o.result);
        char *error = NULL;
        o.data = s_fetch (ref, refdata, source, &o.note, &error);
        CHECK (o.data != NULL);
        //  Its own worker has it: from the store, the hash the job gave.
        CHECK (!strcmp (json_string_value (json_object_get (o.note, "from")), "cache"));
        CHECK (json_is_true (json_object_get (o.note, "matches")));
        if (error)
            printf ("    data link failed: %s\n", error);
        free (error);
        json_decref (refdata);
    }
    if (!o.ok)
        printf ("    job failed: %.600s\n", o.error ? o.error : "?");
    return o;
}

static s_out_t
s_job (kf_torch_ref_t *ref, const char *source, int seed, int sets, bool compile,
       bool via_exec)
{
    return s_job_on (ref, source, seed, sets, compile, via_exec, "cpu");
}

static const char *
s_str (json_t *o, const char *key)
{
    const char *s = json_string_value (json_object_get (o, key));
    return s ? s : "";
}

//  The I-th tensor entry of a result, and its bytes in the frame.
static json_t *
s_tensor (s_out_t *o, size_t i)
{
    return json_array_get (json_object_get (o->result, "tensors"), i);
}

static const void *
s_bytes (s_out_t *o, json_t *t)
{
    size_t off = (size_t) json_integer_value (json_object_get (t, "offset"));
    return (const char *) zframe_data (o->data) + off;
}

static bool
s_shape_is (json_t *t, int rank, long d0, long d1)
{
    json_t *shape = json_object_get (t, "shape");
    if ((int) json_array_size (shape) != rank)
        return false;
    if (rank > 0 && json_integer_value (json_array_get (shape, 0)) != d0)
        return false;
    if (rank > 1 && json_integer_value (json_array_get (shape, 1)) != d1)
        return false;
    return true;
}

//  Every entry's offset follows the previous one, its bytes match its
//  shape and dtype, and together they fill the frame.
static void
s_check_layout (s_out_t *o)
{
    json_t *tensors = json_object_get (o->result, "tensors");
    size_t i, expect = 0;
    json_t *t;
    CHECK (o->data != NULL);
    json_array_foreach (tensors, i, t) {
        size_t numel = 1;
        size_t k;
        json_t *d;
        json_array_foreach (json_object_get (t, "shape"), k, d)
            numel *= (size_t) json_integer_value (d);
        const char *dt = s_str (t, "dtype");
        size_t esize = !strcmp (dt, "f64") || !strcmp (dt, "i64") ? 8
                     : !strcmp (dt, "f16") || !strcmp (dt, "bf16") ? 2 : 4;
        CHECK ((size_t) json_integer_value (json_object_get (t, "bytes")) == numel * esize);
        CHECK ((size_t) json_integer_value (json_object_get (t, "offset")) == expect);
        expect += numel * esize;
    }
    CHECK (o->data && zframe_size (o->data) == expect);
    CHECK ((size_t) json_integer_value (json_object_get (o->result, "data_bytes")) == expect);
}

static void
s_check_eager (s_out_t *o)
{
    json_t *eager = json_object_get (json_object_get (o->result, "timing"), "eager");
    double median = json_number_value (json_object_get (eager, "median_ns"));
    CHECK (median > 0);
    CHECK (json_number_value (json_object_get (eager, "p10_ns")) <= median);
    CHECK (json_number_value (json_object_get (eager, "p90_ns")) >= median);
    CHECK (json_integer_value (json_object_get (eager, "samples")) >= 5);
    json_t *compiled = json_object_get (json_object_get (o->result, "timing"), "compiled");
    printf ("    eager median %.1f us (p10 %.1f, p90 %.1f, %lld samples of %lld calls)",
            median / 1e3, json_number_value (json_object_get (eager, "p10_ns")) / 1e3,
            json_number_value (json_object_get (eager, "p90_ns")) / 1e3,
            (long long) json_integer_value (json_object_get (eager, "samples")),
            (long long) json_integer_value (json_object_get (eager, "calls_per_sample")));
    if (json_object_get (compiled, "error"))
        printf ("; compiled: %s\n", s_str (compiled, "error"));
    else if (compiled)
        printf ("; compiled median %.1f us\n",
                json_number_value (json_object_get (compiled, "median_ns")) / 1e3);
    else
        printf ("\n");
}

static size_t
s_degenerate (s_out_t *o, const char *part)
{
    json_t *reasons = json_object_get (o->result, "degenerate");
    size_t i, hits = 0;
    json_t *r;
    json_array_foreach (reasons, i, r)
        if (!part || strstr (json_string_value (r), part))
            hits++;
    return hits;
}

//  An exec worker whose store is empty (another host, say) is given the
//  data of A (softmax, made by another worker): it makes it again with the
//  same seed, gets the same bytes and hash, and keeps it. A run hash that
//  differs in the outputs only is used and said; one that differs in the
//  inputs fails.
static void
s_regenerate (const char *python, s_out_t *a, const char *source)
{
    printf ("  an empty store makes the data again\n");
    char dir[] = "/tmp/kf-torch-ref-empty-XXXXXX";
    CHECK (mkdtemp (dir) != NULL);
    kf_torch_ref_config_t cfg = { .python = python, .cache_dir = dir };
    kf_torch_ref_t *fresh = kf_torch_ref_new (&cfg);
    json_t *refdata = s_refdata (a->result);
    json_t *note = NULL;
    char *error = NULL;
    zframe_t *data = s_fetch (fresh, refdata, source, &note, &error);
    CHECK (data != NULL && a->data && zframe_eq (data, a->data));
    CHECK (!strcmp (s_str (note, "from"), "regenerated"));
    CHECK (json_is_true (json_object_get (note, "matches")));
    CHECK (json_is_true (json_object_get (note, "inputs_match")));
    CHECK (!strcmp (s_str (note, "hash"), s_str (a->result, "data_hash")));
    printf ("    regenerated %lld bytes in %.1f s: %s, hash %s\n",
            (long long) json_integer_value (json_object_get (note, "bytes")),
            json_number_value (json_object_get (note, "wall_s")),
            data && a->data && zframe_eq (data, a->data) ? "identical bytes" : "DIFFERENT",
            json_is_true (json_object_get (note, "matches")) ? "matches" : "DIFFERS");
    if (error)
        printf ("    %s\n", error);
    zframe_destroy (&data);
    json_decref (note);
    free (error);
    error = NULL;

    //  Kept: the next evaluation finds it.
    data = s_fetch (fresh, refdata, source, &note, &error);
    CHECK (data != NULL && !strcmp (s_str (note, "from"), "cache"));
    zframe_destroy (&data);
    json_decref (note);

    //  The run's outputs differ bit-wise (another device): used, and said.
    json_t *d = json_object_get (refdata, "data");
    json_object_set_new (d, "hash", json_string ("00000000000000000000000000000000"));
    data = s_fetch (fresh, refdata, source, &note, &error);
    CHECK (data != NULL && json_is_false (json_object_get (note, "matches")));
    CHECK (strstr (s_str (note, "warning"), "outputs differ bit-wise") != NULL);
    printf ("    %s\n", s_str (note, "warning"));
    zframe_destroy (&data);
    json_decref (note);

    //  ... its inputs differ: not the run's problem any more, a failure.
    json_object_set_new (d, "inputs_hash", json_string ("00000000000000000000000000000000"));
    data = s_fetch (fresh, refdata, source, &note, &error);
    CHECK (data == NULL && note == NULL && error && strstr (error, "differs in its inputs"));
    printf ("    %s\n", error ? error : "?");
    free (error);
    json_decref (refdata);
    kf_torch_ref_destroy (&fresh);
    kf_subproc_rmtree (dir);
}

static void
s_softmax (kf_torch_ref_t *ref, kf_torch_ref_t *uncached)
{
    char *source = s_slurp ("examples/pytorch/softmax.py");
    CHECK (source != NULL);
    if (!source)
        return;
    printf ("  softmax\n");
    s_out_t a = s_job (ref, source, 7, 5, true, true);
    CHECK (a.ok);
    if (a.ok) {
        json_t *tensors = json_object_get (a.result, "tensors");
        CHECK (json_array_size (tensors) == 10);   //  5 x (input, output)
        for (size_t i = 0; i < json_array_size (tensors); i++) {
            json_t *t = s_tensor (&a, i);
            CHECK (!strcmp (s_str (t, "role"), i % 2 ? "output" : "input"));
            CHECK (json_integer_value (json_object_get (t, "set")) == (json_int_t) (i / 2));
            CHECK (!strcmp (s_str (t, "dtype"), "f32"));
            CHECK (s_shape_is (t, 2, 64, 1000));
            CHECK (!strcmp (s_str (t, "name"), i % 2 ? "out0" : "in0"));
        }
        s_check_layout (&a);
        //  The bytes are softmax rows: each sums to one.
        const float *y = s_bytes (&a, s_tensor (&a, 3));
        double worst = 0;
        for (int r = 0; r < 64; r++) {
            double sum = 0;
            for (int c = 0; c < 1000; c++)
                sum += y[r * 1000 + c];
            worst = fmax (worst, fabs (sum - 1));
        }
        CHECK (worst < 1e-4);
        CHECK (s_degenerate (&a, NULL) == 0);
        CHECK (json_is_false (json_object_get (a.result, "cached")));
        CHECK (strlen (s_str (a.result, "task_hash")) == 64);
        CHECK (!strcmp (s_str (a.result, "device"), "cpu"));
        CHECK (json_integer_value (json_object_get (json_array_get (
                   json_object_get (a.result, "scalars"), 0), "value")) == -1);
        s_check_eager (&a);
    }

    s_regenerate (kf_torch_ref_python (ref), &a, source);

    //  The same job again: a cache hit, with the same bytes.
    s_out_t hit = s_job (ref, source, 7, 5, true, false);
    CHECK (hit.ok && json_is_true (json_object_get (hit.result, "cached")));
    CHECK (a.data && hit.data && zframe_eq (a.data, hit.data));

    //  Without the cache, a second run of the child: determinism.
    s_out_t b = s_job (uncached, source, 7, 5, true, false);
    CHECK (b.ok && json_is_false (json_object_get (b.result, "cached")));
    CHECK (a.data && b.data && zframe_eq (a.data, b.data));
    printf ("    same seed, separate runs: %s bytes\n",
            a.data && b.data && zframe_eq (a.data, b.data) ? "identical" : "DIFFERENT");

    //  Another seed: other inputs and other outputs, set by set.
    s_out_t c = s_job (uncached, source, 8, 5, true, false);
    CHECK (c.ok);
    if (a.ok && c.ok) {
        for (size_t i = 0; i < 2; i++) {
            json_t *ta = s_tensor (&a, i), *tc = s_tensor (&c, i);
            CHECK (memcmp (s_bytes (&a, ta), s_bytes (&c, tc),
                           (size_t) json_integer_value (json_object_get (ta, "bytes"))) != 0);
        }
        //  Set 1 of seed 7 is drawn with seed 8, like set 0 of seed 8.
        CHECK (memcmp (s_bytes (&a, s_tensor (&a, 2)), s_bytes (&c, s_tensor (&c, 0)),
                       64 * 1000 * 4) == 0);
    }
    s_out_free (&a);
    s_out_free (&hit);
    s_out_free (&b);
    s_out_free (&c);
    free (source);
}

static void
s_matmul (kf_torch_ref_t *ref)
{
    char *source = s_slurp ("examples/pytorch/matmul_bias_relu.py");
    CHECK (source != NULL);
    if (!source)
        return;
    printf ("  matmul_bias_relu\n");
    s_out_t o = s_job (ref, source, 1, 3, false, false);
    CHECK (o.ok);
    if (o.ok) {
        //  Parameters first, in named_parameters() order, then the sets.
        json_t *w = s_tensor (&o, 0), *b = s_tensor (&o, 1);
        CHECK (!strcmp (s_str (w, "role"), "param") && !strcmp (s_str (w, "name"), "weight"));
        CHECK (!strcmp (s_str (b, "role"), "param") && !strcmp (s_str (b, "name"), "bias"));
        CHECK (json_is_null (json_object_get (w, "set")));
        CHECK (s_shape_is (w, 2, 192, 256) && s_shape_is (b, 1, 192, 0));
        CHECK (json_array_size (json_object_get (o.result, "tensors")) == 2 + 3 * 2);
        json_t *x = s_tensor (&o, 4), *y = s_tensor (&o, 5);   //  set 1
        CHECK (!strcmp (s_str (x, "role"), "input") && !strcmp (s_str (y, "role"), "output"));
        CHECK (json_integer_value (json_object_get (x, "set")) == 1);
        CHECK (s_shape_is (x, 2, 128, 256) && s_shape_is (y, 2, 128, 192));
        s_check_layout (&o);
        //  Recompute relu(x W^T + b) from the exported bytes.
        const float *xv = s_bytes (&o, x), *wv = s_bytes (&o, w), *bv = s_bytes (&o, b),
                    *yv = s_bytes (&o, y);
        double worst = 0;
        int zeros = 0;
        for (int r = 0; r < 128; r += 7)
            for (int c = 0; c < 192; c += 5) {
                double acc = bv[c];
                for (int k = 0; k < 256; k++)
                    acc += (double) xv[r * 256 + k] * wv[c * 256 + k];
                acc = acc > 0 ? acc : 0;
                zeros += acc == 0;
                worst = fmax (worst, fabs (acc - yv[r * 192 + c]));
            }
        printf ("    recomputed from the exported bytes: max |err| %.2g, %d zeros\n",
                worst, zeros);
        CHECK (worst < 1e-4);
        CHECK (zeros > 0);
        CHECK (s_degenerate (&o, NULL) == 0);
        CHECK (json_object_get (json_object_get (o.result, "timing"), "compiled") == NULL);
        s_check_eager (&o);
    }
    s_out_free (&o);
    free (source);
}

static void
s_layernorm (kf_torch_ref_t *ref)
{
    char *source = s_slurp ("examples/pytorch/layernorm.py");
    CHECK (source != NULL);
    if (!source)
        return;
    printf ("  layernorm\n");
    s_out_t o = s_job (ref, source, 3, 5, false, false);
    CHECK (o.ok);
    if (o.ok) {
        json_t *w = s_tensor (&o, 0), *b = s_tensor (&o, 1), *eps = s_tensor (&o, 2);
        CHECK (!strcmp (s_str (w, "name"), "norm.weight") && s_shape_is (w, 1, 768, 0));
        CHECK (!strcmp (s_str (b, "name"), "norm.bias"));
        CHECK (!strcmp (s_str (eps, "role"), "buffer") && !strcmp (s_str (eps, "name"), "eps"));
        CHECK (fabsf (*(const float *) s_bytes (&o, eps) - 1e-5f) < 1e-9f);
        CHECK (json_array_size (json_object_get (o.result, "tensors")) == 3 + 5 * 2);
        s_check_layout (&o);
        CHECK (s_degenerate (&o, NULL) == 0);
        //  The weight was redrawn, not left at ones.
        const float *wv = s_bytes (&o, w);
        CHECK (wv[0] != 1.0f || wv[1] != 1.0f);
        s_check_eager (&o);
    }
    s_out_free (&o);
    free (source);
}

static const char *s_raising =
    "import torch\n"
    "import torch.nn as nn\n"
    "class Model(nn.Module):\n"
    "    def forward(self, x):\n"
    "        return self.helper(x)\n"
    "    def helper(self, x):\n"
    "        raise ValueError('shapes do not agree: %d' % x.shape[0])\n"
    "def get_inputs():\n"
    "    return [torch.randn(4, 4)]\n"
    "def get_init_inputs():\n"
    "    return []\n";

static const char *s_constant =
    "import torch\n"
    "import torch.nn as nn\n"
    "class Model(nn.Module):\n"
    "    def forward(self, x, scale):\n"
    "        return torch.full_like(x, 3.0), x * 1e-9 * scale\n"
    "def get_inputs():\n"
    "    return [torch.randn(8, 16), 2]\n"
    "def get_init_inputs():\n"
    "    return []\n";

static void
s_failures (kf_torch_ref_t *ref)
{
    printf ("  failures and degenerate outputs\n");
    s_out_t o = s_job (ref, s_raising, 1, 2, false, false);
    CHECK (!o.ok && o.error);
    if (o.error) {
        CHECK (strstr (o.error, "forward (set 0)") != NULL);
        CHECK (strstr (o.error, "ValueError: shapes do not agree: 4") != NULL);
        CHECK (strstr (o.error, "File \"problem.py\", line 7, in helper") != NULL);
        CHECK (strstr (o.error, "/tmp/") == NULL);
    }
    s_out_free (&o);

    o = s_job (ref, "import torch\nclass Model(:\n", 1, 2, false, false);
    CHECK (!o.ok && o.error && strstr (o.error, "SyntaxError") != NULL);
    CHECK (o.error && strstr (o.error, "import problem.py") != NULL);
    s_out_free (&o);

    o = s_job (ref, "x = 1\n", 1, 2, false, false);
    CHECK (!o.ok && o.error && strstr (o.error, "defines no 'Model'") != NULL);
    s_out_free (&o);

    o = s_job (ref, s_constant, 1, 3, false, false);
    CHECK (o.ok);
    if (o.ok) {
        json_t *r;
        size_t i;
        json_array_foreach (json_object_get (o.result, "degenerate"), i, r)
            printf ("    degenerate: %s\n", json_string_value (r));
        CHECK (s_degenerate (&o, "output 0 ('out0'): constant (every element is 3)") == 1);
        CHECK (s_degenerate (&o, "output 0 ('out0'): the same in every input set") == 1);
        //  out1 (x * 1e-9 * scale) is tiny, not degenerate: its absolute
        //  tolerance is scaled to it (rtol 1e-2 times its largest value).
        CHECK (s_degenerate (&o, "output 1 ('out1'): every element is within the absolute bound") == 0);
        double scaled = json_number_value (json_object_get (o.result, "atol_scaled"));
        printf ("    atol_scaled %g\n", scaled);
        CHECK (scaled > 1e-12 && scaled < 1e-9);
        CHECK (s_degenerate (&o, "output 1 ('out1'): constant") == 0);
        //  Each exported tensor says what its values are like (for the
        //  prompt): randn's input near mean 0 and std 1, the constant 3.
        size_t k;
        json_t *t;
        int described = 0;
        json_array_foreach (json_object_get (o.result, "tensors"), k, t) {
            json_t *st = json_object_get (t, "stats");
            const char *role = json_string_value (json_object_get (t, "role"));
            long long idx = json_integer_value (json_object_get (t, "index"));
            if (!st || !role)
                continue;
            described++;
            double lo = json_number_value (json_object_get (st, "min"));
            double hi = json_number_value (json_object_get (st, "max"));
            double sd = json_number_value (json_object_get (st, "std"));
            double mean = json_number_value (json_object_get (st, "mean"));
            if (!strcmp (role, "input"))
                CHECK (lo < 0 && hi > 0 && fabs (mean) < 0.5 && sd > 0.6 && sd < 1.4
                       && json_number_value (json_object_get (st, "zero_fraction")) == 0);
            if (!strcmp (role, "output") && idx == 0)
                CHECK (lo == 3 && hi == 3 && sd == 0 && mean == 3);
        }
        printf ("    %d tensors described\n", described);
        CHECK (described == 3 * 3);
        CHECK (s_degenerate (&o, "inputs: identical") == 0);
        //  The non-tensor argument is a scalar of its set.
        json_t *scalars = json_object_get (o.result, "scalars");
        CHECK (json_array_size (scalars) == 3);
        json_t *s1 = json_array_get (scalars, 1);
        CHECK (!strcmp (s_str (s1, "role"), "input"));
        CHECK (json_integer_value (json_object_get (s1, "set")) == 1);
        CHECK (json_integer_value (json_object_get (s1, "index")) == 1);
        CHECK (json_integer_value (json_object_get (s1, "value")) == 2);
        //  Tensors: per set, input 0 then outputs 0 and 1.
        CHECK (json_array_size (json_object_get (o.result, "tensors")) == 9);
        CHECK (!strcmp (s_str (s_tensor (&o, 2), "name"), "out1"));
    }
    s_out_free (&o);
}

static void
s_payloads (kf_torch_ref_t *ref, const char *python)
{
    printf ("  payloads and limits\n");
    kf_job_t job = { .job_id = 1, .kind = "reference" };
    kf_job_result_t res;
    const char *bad[] = {
        "{}", "source: missing",
        "{\"source\": \"x\", \"device\": \"tpu:0\"}", "not cpu, cuda or cuda:N",
        "{\"source\": \"x\", \"sets\": 0}", "sets: must be in 1..100",
        "{\"source\": \"x\", \"seed\": \"one\"}", "seed: must be an integer",
        "{\"source\": \"x\", \"timing\": {\"min_time_s\": -1}}", "timing.min_time_s",
        NULL };
    for (int i = 0; bad[i]; i += 2) {
        json_error_t jerr;
        job.payload = json_loads (bad[i], 0, &jerr);
        kf_torch_ref_handle (ref, &job, &res);
        CHECK (!res.ok && res.error && strstr (res.error, bad[i + 1]));
        if (!res.ok && res.error && !strstr (res.error, bad[i + 1]))
            printf ("    %s -> %s\n", bad[i], res.error);
        free (res.error);
        json_decref (res.result);
        json_decref (job.payload);
    }

    //  A worker without torch names what it tried.
    kf_torch_ref_config_t none = { .python = "/nonexistent/python3" };
    kf_torch_ref_t *missing = kf_torch_ref_new (&none);
    CHECK (kf_torch_ref_python (missing) == NULL);
    CHECK (kf_torch_ref_capability (missing) == NULL);
    job.payload = json_pack ("{s:s}", "source", s_constant);
    kf_torch_ref_handle (missing, &job, &res);
    CHECK (!res.ok && res.error
           && !strcmp (res.error, "no Python with torch found (tried: /nonexistent/python3 (not found))"));
    //  ... which is this worker's lack, not the problem's: another may run it.
    CHECK (!res.final);
    printf ("    %s\n", res.error ? res.error : "?");
    free (res.error);
    kf_torch_ref_destroy (&missing);
    kf_torch_ref_destroy (&missing);
    CHECK (missing == NULL);

    //  An interpreter without torch: its own last line says why.
    none.python = "/bin/sh";
    missing = kf_torch_ref_new (&none);
    CHECK (kf_torch_ref_python (missing) == NULL);
    printf ("    tried: %s\n", kf_torch_ref_tried (missing));
    kf_torch_ref_destroy (&missing);

    //  Over the cache cap: a failed job naming the sizes.
    kf_torch_ref_config_t small = { .python = python, .cache_max_bytes = 1024 };
    kf_torch_ref_t *tiny = kf_torch_ref_new (&small);
    kf_torch_ref_handle (tiny, &job, &res);
    CHECK (!res.ok && res.error && strstr (res.error, "reference cache cap of 1024 bytes"));
    CHECK (res.error && strstr (res.error, "needs more than 1536 bytes"));
    //  The problem's own size: the same on every try, so not retried.
    CHECK (res.final);
    printf ("    %.160s\n", res.error ? res.error : "?");
    free (res.error);
    //  Room for two sets (1536 bytes each) but not five: two, and the
    //  result says how many were asked for; not a failure.
    kf_torch_ref_config_t two = { .python = python, .cache_max_bytes = 2 * 1536 + 100 };
    kf_torch_ref_t *pair = kf_torch_ref_new (&two);
    json_object_set_new (job.payload, "compile", json_false ());
    json_object_set_new (job.payload, "allow_degenerate", json_true ());
    kf_torch_ref_handle (pair, &job, &res);
    CHECK (res.ok);
    CHECK (res.ok && json_integer_value (json_object_get (res.result, "sets")) == 2);
    CHECK (res.ok && json_integer_value (json_object_get (res.result, "sets_requested")) == 5);
    CHECK (res.ok && json_integer_value (json_object_get (res.result, "data_bytes")) == 2 * 1536);
    printf ("    cap %zu bytes: %lld of %lld sets\n", two.cache_max_bytes,
            (long long) json_integer_value (json_object_get (res.result, "sets")),
            (long long) json_integer_value (json_object_get (res.result, "sets_requested")));
    if (!res.ok)
        printf ("    %s\n", res.error ? res.error : "?");
    free (res.error);
    json_decref (res.result);
    zmsg_destroy (&res.frames);
    kf_torch_ref_destroy (&pair);
    json_object_del (job.payload, "allow_degenerate");

    //  ... unless nothing is exported: timing and checks only, no frame.
    json_object_set_new (job.payload, "export", json_false ());
    json_object_set_new (job.payload, "compile", json_false ());
    json_object_set_new (job.payload, "timing", json_pack ("{s:f, s:f}", "min_time_s", 0.01,
                                                           "warmup_s", 0.0));
    kf_torch_ref_handle (tiny, &job, &res);
    CHECK (res.ok && res.frames == NULL);
    CHECK (res.ok && json_array_size (json_object_get (res.result, "tensors")) == 0);
    CHECK (res.ok && json_array_size (json_object_get (res.result, "degenerate")) >= 2);
    free (res.error);
    json_decref (res.result);
    zmsg_destroy (&res.frames);
    kf_torch_ref_destroy (&tiny);

    //  Without a runner set up, the exec worker refuses the kind.
    kf_exec_handle (NULL, &(kf_job_t) { .job_id = 1, .kind = "reference",
                                        .payload = job.payload }, &res);
    CHECK (!res.ok && res.error && strstr (res.error, "no PyTorch reference runner"));
    free (res.error);
    json_decref (job.payload);
}

//  KF_TEST_TORCH_DEVICE=cuda:0 (tests/gpu): the examples on that device
//  with torch.compile, twice each without the cache: layout, no degenerate
//  flag, the same bytes from both runs, and the times printed.
static void
s_on_device (kf_torch_ref_t *uncached, const char *device)
{
    const char *names[] = { "softmax", "matmul_bias_relu", "layernorm", NULL };
    for (int i = 0; names[i]; i++) {
        char path[256];
        snprintf (path, sizeof path, "examples/pytorch/%s.py", names[i]);
        char *source = s_slurp (path);
        CHECK (source != NULL);
        if (!source)
            continue;
        printf ("  %s on %s\n", names[i], device);
        s_out_t a = s_job_on (uncached, source, 11, 5, true, false, device);
        s_out_t b = s_job_on (uncached, source, 11, 5, false, false, device);
        CHECK (a.ok && b.ok);
        if (a.ok && b.ok) {
            CHECK (!strcmp (s_str (a.result, "device"), device));
            s_check_layout (&a);
            CHECK (s_degenerate (&a, NULL) == 0);
            CHECK (a.data && b.data && zframe_eq (a.data, b.data));
            printf ("    %s, %s; same seed, separate runs: %s bytes; child %.1f s\n",
                    s_str (a.result, "device_name"), s_str (a.result, "torch_version"),
                    a.data && b.data && zframe_eq (a.data, b.data) ? "identical" : "DIFFERENT",
                    json_number_value (json_object_get (a.result, "wall_s")));
            s_check_eager (&a);
            json_t *compiled = json_object_get (json_object_get (a.result, "timing"), "compiled");
            CHECK (compiled != NULL);
            if (compiled && !json_object_get (compiled, "error")) {
                CHECK (json_is_true (json_object_get (compiled, "matches_eager")));
                printf ("    torch.compile: first call %.1f s, matches eager: %s\n",
                        json_number_value (json_object_get (compiled, "compile_s")),
                        json_is_true (json_object_get (compiled, "matches_eager")) ? "yes" : "no");
            }
        }
        s_out_free (&a);
        s_out_free (&b);
        free (source);
    }
}

int
main (void)
{
    char cache[] = "/tmp/kf-torch-ref-test-XXXXXX";
    CHECK (mkdtemp (cache) != NULL);
    kf_torch_ref_config_t cfg = { .cache_dir = cache };
    kf_torch_ref_t *ref = kf_torch_ref_new (&cfg);
    json_t *cap = kf_torch_ref_capability (ref);
    if (!cap) {
        printf ("test_torch_ref: skipped: no python with torch (tried: %s)\n",
                kf_torch_ref_tried (ref));
        kf_torch_ref_destroy (&ref);
        kf_subproc_rmtree (cache);
        return kf_test_done ("test_torch_ref");
    }
    char *text = json_dumps (cap, JSON_COMPACT);
    printf ("  torch capability: %s\n", text);
    free (text);
    CHECK (json_is_boolean (json_object_get (cap, "cuda")));
    kf_torch_ref_config_t plain = { .python = kf_torch_ref_python (ref) };
    kf_torch_ref_t *uncached = kf_torch_ref_new (&plain);
    CHECK (kf_torch_ref_python (uncached) != NULL);

    const char *device = getenv ("KF_TEST_TORCH_DEVICE");
    if (device && *device) {
        CHECK (strcmp (device, "cpu") == 0 || json_is_true (json_object_get (cap, "cuda")));
        s_on_device (uncached, device);
    }
    s_softmax (ref, uncached);
    s_matmul (ref);
    s_layernorm (ref);
    s_failures (ref);
    s_payloads (ref, kf_torch_ref_python (ref));

    json_decref (cap);
    kf_torch_ref_destroy (&uncached);
    kf_torch_ref_destroy (&ref);
    kf_subproc_rmtree (cache);
    return kf_test_done ("test_torch_ref");
}
