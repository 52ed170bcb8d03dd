/* window.c — the window op family. */
#include "opsupport.h"

const op_table op_table_window = {NULL, 0};
