/* movement.c — the movement op family. */
#include "opsupport.h"

const op_table op_table_movement = {NULL, 0};
