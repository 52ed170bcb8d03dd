/* fork.c - a fork child starts a census of its own (new census id, empty counts, its own file
 * names), and no lock of the shim's is left held in it. glibc's _Fork runs no fork handlers:
 * the hooks call fbc_fork_child_bare for it, which starts the child's census without taking a
 * lock or allocating (another parent thread may have held one at the fork). */
#include "triggers.h"

static void prepare(void)
{
    fbc_final_before_fork(); /* reads the backends' counters: before any lock of the shim's */
    fbc_mutex_fork_registered(0);
    pthread_mutex_lock(&fbc_dump_lock);
    pthread_mutex_lock(&fbc_sym_lock);
    pthread_mutex_lock(&fbc_global_lock);
    fbc_shards_fork(0);
    fbc_modmap_fork(0);
    fbc_scope_fork(0);
    fbc_record_fork(0);
    fbc_backends_fork(0);
}

static void parent(void)
{
    fbc_backends_fork(1);
    fbc_record_fork(1);
    fbc_scope_fork(1);
    fbc_modmap_fork(1);
    fbc_shards_fork(1);
    pthread_mutex_unlock(&fbc_global_lock);
    pthread_mutex_unlock(&fbc_sym_lock);
    pthread_mutex_unlock(&fbc_dump_lock);
    fbc_mutex_fork_registered(1);
}

static void new_census(void)
{
    fbc_process_forked();
    __atomic_store_n(&fbc_seq, 0, __ATOMIC_RELAXED);
    fbc_final_after_fork();
    fbc_dumper_after_fork();
    fbc_snapshot_after_fork();
}

static void child(void)
{
    fbc_backends_fork(1);
    fbc_record_fork(1);
    fbc_scope_fork(1);
    fbc_modmap_fork(1);
    fbc_shards_fork(2);
    pthread_mutex_unlock(&fbc_global_lock);
    pthread_mutex_unlock(&fbc_sym_lock);
    pthread_mutex_unlock(&fbc_dump_lock);
    fbc_mutex_fork_registered(2);
    new_census();
}

void fbc_fork_child_bare(void)
{
    fbc_backends_fork(2);
    fbc_record_fork(2);
    fbc_scope_fork(2);
    fbc_modmap_fork(2);
    fbc_shards_abandon();
    pthread_mutex_init(&fbc_sym_lock, NULL);
    pthread_mutex_init(&fbc_dump_lock, NULL);
    fbc_mutex_fork_registered(2);
    new_census();
}

void fbc_fork_register(void)
{
    pthread_atfork(prepare, parent, child);
}
