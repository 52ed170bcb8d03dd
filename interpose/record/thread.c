/* thread.c - each thread's recording state (whether it records, its recursion guard, its
 * scopes and its shard; the process-wide switch is fbc_proc.on). The wrappers' fast path reads
 * fbc_t.state and nothing else of it. */
#include "record.h"

__thread fbc_thread fbc_t __attribute__((tls_model("initial-exec")));
unsigned fbc_stacks_made;
