/* vkt-ops-matrix — prints libvkt's op support matrix (op × dtype → native,
 * fallback with the gate's reason, or undefined) as a markdown table.
 *
 * It reads the gates through vkt_op_support and opens no Vulkan device, so the
 * README's matrix is regenerated from the code on any machine and cannot drift
 * from the gates (tools/matrix/check_readme.py compares the two). */
#include <stdio.h>
#include <string.h>

#include "vkt.h"

#define MAX_REASONS 64

/* Footnote marks as superscript digits, so "fallback¹²" reads as note 12. */
static void superscript(size_t n, char *buf, size_t cap)
{
    static const char *const digits[10] = {"⁰", "¹", "²", "³", "⁴", "⁵", "⁶", "⁷", "⁸", "⁹"};
    char dec[24];
    snprintf(dec, sizeof dec, "%zu", n);
    buf[0] = '\0';
    for (const char *p = dec; *p; p++)
        strncat(buf, digits[*p - '0'], cap - strlen(buf) - 1);
}

/* Distinct reasons in order of first appearance; the note number is index + 1. */
static size_t note_of(const char *reason, const char **notes, size_t *nnotes)
{
    for (size_t i = 0; i < *nnotes; i++)
        if (strcmp(notes[i], reason) == 0)
            return i + 1;
    if (*nnotes == MAX_REASONS)
        return 0;
    notes[(*nnotes)++] = reason;
    return *nnotes;
}

int main(int argc, char **argv)
{
    if (argc > 1) {
        FILE *f = strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ? stdout : stderr;
        fprintf(f, "usage: vkt-ops-matrix\n"
                   "Prints libvkt's op support matrix (op x dtype) as a markdown table.\n");
        return f == stdout ? 0 : 2;
    }
    const char *notes[MAX_REASONS];
    size_t nnotes = 0;
    printf("| op |");
    for (int d = 0; d < VKT_NUM_DTYPES; d++)
        printf(" %s |", vkt_dtype_name((vkt_dtype)d));
    printf("\n|---|");
    for (int d = 0; d < VKT_NUM_DTYPES; d++)
        printf("---|");
    printf("\n");
    size_t n = vkt_op_count();
    for (size_t i = 0; i < n; i++) {
        printf("| %s |", vkt_op_name(i));
        for (int d = 0; d < VKT_NUM_DTYPES; d++) {
            const char *reason = NULL;
            vkt_support s = vkt_op_support(i, (vkt_dtype)d, &reason);
            if (s == VKT_NATIVE) {
                printf(" native |");
            } else if (s == VKT_FALLBACK) {
                char mark[64];
                size_t k = note_of(reason ? reason : "no reason given by the gate", notes, &nnotes);
                if (k == 0) {
                    fprintf(stderr, "vkt-ops-matrix: more than %d distinct fallback reasons\n",
                            MAX_REASONS);
                    return 1;
                }
                superscript(k, mark, sizeof mark);
                printf(" fallback%s |", mark);
            } else {
                printf(" — |");
            }
        }
        printf("\n");
    }
    if (nnotes)
        printf("\n");
    for (size_t k = 0; k < nnotes; k++)
        printf("%zu. %s\n", k + 1, notes[k]);
    return 0;
}
