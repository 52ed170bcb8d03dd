/* reduce.c — the reduce op family. */
#include "opsupport.h"

const op_table op_table_reduce = {NULL, 0};
