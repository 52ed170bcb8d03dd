/* empty.c - a library with nothing in it, preloaded by bench_exec.py: what any LD_PRELOAD
 * costs an exec, the floor under the shim's own cost. */
int fbcount_bench_empty;
