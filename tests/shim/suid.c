/* suid.c - a program linked with libfbcount that falls back, for the setuid test: installed
 * setuid-root by the test and run by another user. */
#include <stdio.h>

#include "fakevkt.h"

int main(void)
{
    fake_tensor t = {0, 1, {4}};
    vkt_dot(&t, 16);
    printf("suid ran\n");
    return 0;
}
