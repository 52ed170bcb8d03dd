/* thread.c - the recording state: the process-wide switch and each thread's own (whether it
 * records, its recursion guard, its scopes and its shard). The wrappers' fast path reads
 * fbc_t.state and nothing else of it. */
#include "record.h"

__thread fbc_thread fbc_t __attribute__((tls_model("initial-exec")));
bool fbc_process_on;
unsigned fbc_stacks_made;
