// Division by a runtime divisor without an integer divide: CPU devices
// (lavapipe) have no vector udiv and fall back to one scalar division per
// lane, which made index mapping three times slower than a plain copy. The
// host precomputes (magic, shift) per divisor d (mv_divider in movement.c);
// then n / d == (umulhi(n, magic) + n) >> shift for every n < 2^31, which the
// 2^31-element gate guarantees.
uint fastdiv(uint n, uint magic, uint shift)
{
    uint hi, lo;
    umulExtended(n, magic, hi, lo);
    return (hi + n) >> shift;
}

// The shift of dim d, packed five bits per dim.
uint divshift(uint packed, int d)
{
    return (packed >> (5 * d)) & 31u;
}
