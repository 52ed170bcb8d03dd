/* dot.c — the contract op family. */
#include "opsupport.h"

const op_table op_table_contract = {NULL, 0};
