/* e^x for float without the C library: x = k ln2 + r with |r| <= ln2/2,
 * e^r by a degree-6 polynomial (relative error about 2e-7), 2^k built in
 * the exponent bits. Branch-free, so loops calling it vectorise. */
static inline float
kf_exp_poly (float x)
{
    x = x < -87.0f ? -87.0f : x;
    x = x > 88.0f ? 88.0f : x;
    /* Adding and removing 1.5 * 2^23 rounds to the nearest integer. */
    float k = (x * 1.44269504f + 12582912.0f) - 12582912.0f;
    float r = x - k * 0.693145752f;
    r = r - k * 1.42860682e-6f;
    float p = 1.0f / 720.0f;
    p = p * r + 1.0f / 120.0f;
    p = p * r + 1.0f / 24.0f;
    p = p * r + 1.0f / 6.0f;
    p = p * r + 0.5f;
    p = p * r + 1.0f;
    p = p * r + 1.0f;
    int32_t bits = ((int32_t) k + 127) << 23;
    float scale;
    memcpy (&scale, &bits, sizeof scale);
    return p * scale;
}
