/* attach.c - a census attached to a process that was started without the shim (`fbcount
 * attach PID` loads the library through the debugger and calls fbcount_attach; `fbcount
 * detach PID` calls fbcount_detach). The library's constructors ran at its dlopen with
 * recording off; the attach reads its configuration from the command's variables, counts from
 * that moment, arms the triggers and redirects the exits (redirect/). A detach writes the
 * census, puts back every entry and signal action, and leaves the shim loaded but inert: it is
 * never unloaded, since calls may still be running through it.
 *
 * The command finds an attached process's configuration (its dump directory, its census
 * signal) in a sealed memfd named FBR_ATTACH_MEMFD, held open while attached: the process's
 * environment does not have it, and the descriptor goes with the process. */
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "fbcount.h"
#include "fields.h"
#include "hooks.h"

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static enum { NEVER, ATTACHED, DETACHED } state;
static int memfd = -1;

/* The variables and the attach's time, where the command can read them. */
static int keep_state(const char *vars, const char *at)
{
    int fd = memfd_create(FBR_ATTACH_MEMFD, MFD_CLOEXEC | MFD_ALLOW_SEALING);
    if (fd < 0)
        return -1;
    char line[64];
    int n = snprintf(line, sizeof line, "FBCOUNT_ATTACHED_AT=%s\n", at);
    size_t len = strlen(vars);
    bool ok = write(fd, vars, len) == (ssize_t)len &&
              (!len || vars[len - 1] == '\n' || write(fd, "\n", 1) == 1) &&
              write(fd, line, (size_t)n) == n;
    if (!ok) {
        close(fd);
        return -1;
    }
    fcntl(fd, F_ADD_SEALS, F_SEAL_WRITE | F_SEAL_GROW | F_SEAL_SHRINK | F_SEAL_SEAL);
    memfd = fd;
    return 0;
}

static int refusal(const char *vars)
{
    if (state != NEVER)
        return state == ATTACHED ? FBCOUNT_ATTACH_ALREADY : FBCOUNT_ATTACH_DETACHED;
    if (fbc_proc.preloaded || __atomic_load_n(&fbc_proc.on, __ATOMIC_ACQUIRE))
        return FBCOUNT_ATTACH_RUNNING;
    if (!vars || strlen(vars) >= FBC_ATTACH_VARS_MAX)
        return FBCOUNT_ATTACH_BAD;
    return FBCOUNT_ATTACH_OK;
}

FBC_EXPORT int fbcount_attach(const char *vars)
{
    fbc_load();
    pthread_mutex_lock(&lock);
    int rc = refusal(vars);
    char at[21];
    fbc_fmt_time(at, (uint64_t)time(NULL));
    if (rc == FBCOUNT_ATTACH_OK && keep_state(vars, at) != 0)
        rc = FBCOUNT_ATTACH_SYSTEM;
    if (rc != FBCOUNT_ATTACH_OK) {
        pthread_mutex_unlock(&lock);
        return rc;
    }
    fbc_config_attach(vars);
    memcpy(fbc_cfg.attached_at, at, sizeof at);
    fbc_cfg.attached_ns = fbc_now_ns();
    if (!fbc_exits_declare_again() &&
        (strstr(vars, "FBCOUNT_EXIT=") || strstr(vars, "FBCOUNT_BACKEND=")))
        fbc_warn("attach: this process declared exits at its start (FBCOUNT_EXIT): they stay, "
                 "and --exit and --backend are not read");
    fbc_clock_init(fbc_cfg.clock_monotonic);
    snprintf(fbc_output_tmpl, sizeof fbc_output_tmpl, "%s", fbc_cfg.output);
    state = ATTACHED;
    fbc_attached = true;
    /* On before the redirection: a thread's first call through the shim decides, once,
     * whether that thread records. */
    __atomic_store_n(&fbc_proc.on, true, __ATOMIC_RELEASE);
    fbc_init();
    fbc_redirect_forget(); /* scanned at load for a shim not attached: scanned again */
    fbc_exits_redirect();
    /* The backends loaded now, and their counters: the census's window starts here, the
     * native share with it. */
    if (fbc_backend_loaded())
        fbc_backends_window();
    fbc_arm();
    pthread_mutex_unlock(&lock);
    return FBCOUNT_ATTACH_OK;
}

FBC_EXPORT const char *fbcount_detach(void)
{
    pthread_mutex_lock(&lock);
    if (state != ATTACHED) {
        pthread_mutex_unlock(&lock);
        return NULL;
    }
    /* Calls go back to the backends first, so the census written next is the last state. */
    fbc_redirect_undo();
    fbc_sig_release_all();
    fbc_snapshot_release();
    const char *path = fbc_final_detach();
    __atomic_store_n(&fbc_proc.on, false, __ATOMIC_RELEASE);
    state = DETACHED;
    close(memfd);
    memfd = -1;
    pthread_mutex_unlock(&lock);
    return path;
}
