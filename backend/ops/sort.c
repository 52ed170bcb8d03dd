/* sort.c — the sort op family. */
#include "opsupport.h"

const op_table op_table_sort = {NULL, 0};
