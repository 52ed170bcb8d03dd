/* conv.c — the conv op family. */
#include "opsupport.h"

const op_table op_table_conv = {NULL, 0};
