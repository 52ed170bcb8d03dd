// The arithmetic binary ops on one dtype by op code (enum ref_binop), for
// binary.comp and the fused kernel: with the code a specialization constant,
// the switch folds.
#if defined(IS_INT)
int ipow(int base, int e)
{
    if (e < 0)
        return base == 1 ? 1 : base == -1 ? ((e & 1) != 0 ? -1 : 1) : 0;
    int r = 1;
    for (int k = 0; k < 32 && e != 0; k++) {
        if ((e & 1) != 0) r *= base;
        base *= base;
        e >>= 1;
    }
    return r;
}
#elif defined(IS_U8)
uint ipow(uint base, uint e)
{
    uint r = 1u;
    for (int k = 0; k < 8 && e != 0u; k++) {
        if ((e & 1u) != 0u) r = (r * base) & 0xffu;
        base = (base * base) & 0xffu;
        e >>= 1;
    }
    return r;
}
#endif

#if !defined(PRED)
TC bin_apply(uint op, TC x, TC y)
{
    switch (op) {
    case BIN_add: return x + y;
    case BIN_subtract: return x - y;
    case BIN_multiply: return x * y;
#if defined(IS_FLOAT)
#if defined(IS_F64)
    case BIN_divide: return x / y;
#else
    case BIN_divide: return fdiv_(x, y);
#endif
    case BIN_min: return fmin_(x, y);
    case BIN_max: return fmax_(x, y);
#if !defined(IS_F64)
    case BIN_pow: return cm_pow(x, y);
    case BIN_remainder: return cm_fmod(x, y);
    case BIN_atan2: return cm_atan2(x, y);
#else
    case BIN_atan2: return cd_atan2(x, y);
    case BIN_remainder: return cd_fmod(x, y);
#endif
#else
    case BIN_min: return min(x, y);
    case BIN_max: return max(x, y);
    case BIN_pow: return ipow(x, y);
#if defined(IS_INT)
    // Division by zero gives 0 and INT_MIN / -1 wraps, as the reference does.
    case BIN_quotient: return y == 0 ? 0 : (y == -1 ? -x : x / y);
    case BIN_remainder: return y == 0 || y == -1 ? 0 : x - (x / y) * y;
    case BIN_left_shift: return y < 0 || y >= 32 ? 0 : x << y;
    case BIN_right_shift: return y < 0 || y >= 32 ? (x < 0 ? -1 : 0) : x >> y;
#else
    case BIN_quotient: return y == 0u ? 0u : x / y;
    case BIN_remainder: return y == 0u ? 0u : x % y;
    case BIN_left_shift: return y >= 8u ? 0u : (x << y) & 0xffu;
    case BIN_right_shift: return y >= 8u ? 0u : x >> y;
#endif
    case BIN_bitwise_and: return x & y;
    case BIN_bitwise_or: return x | y;
    case BIN_bitwise_xor: return x ^ y;
#endif
    default: return x;
    }
}
#endif
