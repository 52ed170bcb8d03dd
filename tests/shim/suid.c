/* suid.c - a program linked with libfbcount that falls back, for the setuid test: installed
 * setuid-root by the test and run by another user. Its own scope's count shows the shim is
 * linked and counting (a program that used nothing of it would not even load it). */
#include <stdio.h>

#include "fakevkt.h"
#include "fbcount.h"

int main(void)
{
    fake_tensor t = {0, 1, {4}};
    fbcount_scope_begin();
    vkt_dot(&t, 16);
    fbcount_census *c = fbcount_scope_end();
    printf("suid ran, its scope counted %llu\n", (unsigned long long)fbcount_census_total(c));
    fbcount_census_free(c);
    return 0;
}
