/* fields.h - the names of the dump format's fields (interpose/dump-format.md), compiled into
 * the shim that writes dumps and the command that reads them, so the two cannot drift.
 *
 * Every name is a string literal: the shim's writer pastes them into its output
 * (FBR_KEY(FBR_COUNT) is "\"count\":"), the reader looks them up with jansson. */
#ifndef FBR_FIELDS_H
#define FBR_FIELDS_H

#define FBR_SCHEMA_V1 "fbcount/1"
#define FBR_KEY(name) "\"" name "\":"

/* The top level. */
#define FBR_SCHEMA "schema"
#define FBR_REASON "reason"
#define FBR_SEQ "seq"
#define FBR_TIME "time"
#define FBR_PROCESS "process"
#define FBR_CONFIG "config"
#define FBR_SIGNAL "signal"           /* crash and signal dumps: the signal's number */
#define FBR_SIGNAL_NAME "signal_name" /* and its name, "SIGTERM" */
#define FBR_SYMBOLIZED "symbolized"
/* the debug-information policy the frames were named by (rules/symbolizer.h): "build-id" or
 * "standard"; missing where no frame was named */
#define FBR_DEBUGINFO "debuginfo"
#define FBR_TOTAL "total"
#define FBR_BACKEND "backend"
#define FBR_OPS "ops"
#define FBR_HOST_OPS "host_ops"
#define FBR_TRANSFERS "transfers" /* bytes that crossed between devices, by op */
#define FBR_BACKENDS "backends"   /* the backends seen in the process, one object each */
#define FBR_STACKS "stacks"
#define FBR_MODULES "modules"
#define FBR_FRAME_TABLE "frame_table" /* distinct frames; stacks name them by index */
#define FBR_EXEC "exec"               /* true in the dump written just before an exec */
#define FBR_ABORT "abort" /* FBCOUNT_MODE=abort: the op and site that stopped the program */
#define FBR_ATTACHED_AT "attached_at"         /* an attached census: when it began counting (UTC) */
#define FBR_ATTACHED_NS "attached_elapsed_ns" /* process.elapsed_ns at that moment */
/* A final dump: ns from the start of its writing to its raw census on disk. */
#define FBR_RAW_CENSUS_NS "raw_census_ns"

/* Why a dump was written. */
#define FBR_REASON_EXIT "exit"
#define FBR_REASON_SIGNAL "signal"
#define FBR_REASON_CHECKPOINT "checkpoint"
#define FBR_REASON_SNAPSHOT "snapshot"
#define FBR_REASON_CRASH "crash"
#define FBR_REASON_API "api"
#define FBR_REASON_DETACH "detach" /* fbcount detach: the attached census's last state */

/* The memfd an attached process's shim holds while attached: its attach's FBCOUNT_ variables,
 * one a line, where the command finds its dump directory and census signal. */
#define FBR_ATTACH_MEMFD "fbcount-attach"

/* process */
#define FBR_PID "pid"
#define FBR_PPID "ppid"
#define FBR_HOST "host"
#define FBR_EXE "exe"
#define FBR_ARGV "argv"
#define FBR_ID "id" /* one census: random, new in every process image (fork and exec) */
#define FBR_PARENT_ID "parent_id"
#define FBR_RANK "rank"
#define FBR_START_TIME "start_time"
#define FBR_ELAPSED_NS "elapsed_ns"

/* config */
#define FBR_MODE "mode"
#define FBR_DEPTH "depth"
#define FBR_OP_PREFIX "op_prefix"
#define FBR_PY_BACKEND "py_backend"
#define FBR_TIMING "timing" /* "fallback" (from libvkt's start) or "host_result" (inside it) */
#define FBR_TIMING_FALLBACK "fallback"
#define FBR_TIMING_HOST_RESULT "host_result"
#define FBR_CLOCK "clock" /* what timed the events the backend did not time: "tsc", "monotonic" */
#define FBR_CONFIG_BACKENDS "backends" /* the names of the backend rows in force */

/* total (also FBR_BYTES, FBR_MAX_BYTES, FBR_HOST_OPS, FBR_STACKS) */
#define FBR_FALLBACKS "fallbacks"
#define FBR_HOST_BYTES "host_bytes"
#define FBR_NS "ns"
#define FBR_MAX_NS "max_ns"
#define FBR_HOST_NS "host_ns"
#define FBR_TRANSFER_BYTES "transfer_bytes" /* total: also FBR_TRANSFERS, the count */
#define FBR_TRANSFER_NS "transfer_ns"
#define FBR_SPLITS "splits"           /* host splits of a scheduler's graph (ggml), by nodes */
#define FBR_SPLIT_BYTES "split_bytes" /* total: also FBR_SPLITS, the count */
#define FBR_SPLIT_NS "split_ns"

/* backend: libvkt's own counters */
#define FBR_NATIVE "native"
#define FBR_FALLBACK "fallback"
#define FBR_HOSTCOUNT "host"

/* ops, host_ops, stacks */
#define FBR_OP "op"
#define FBR_COUNT "count"
#define FBR_BYTES "bytes"
#define FBR_MAX_BYTES "max_bytes"
#define FBR_SHAPES "shapes"
#define FBR_SITES "sites"
#define FBR_DTYPE "dtype"
#define FBR_SHAPE "shape"
#define FBR_SITE "site"
#define FBR_KIND "kind"
#define FBR_FRAMES "frames"
#define FBR_KIND_FALLBACK "fallback"
#define FBR_KIND_HOST "host_op"
#define FBR_KIND_TRANSFER "transfer"
#define FBR_KIND_SPLIT "split"
/* sites and stacks: the site is where the work of a thread with no frame of the user's came
 * from: the caller of the backward it runs, or the code that started the thread */
#define FBR_ORIGIN "origin"
/* sites and stacks of origin "backward": the autograd node the backward ran when it fell back
 * ("EluBackward0"), and where the forward op that made the node ran, as a site reads
 * ("layer (model.py:20)"; kept where anomaly mode is on) */
#define FBR_NODE "node"
#define FBR_FORWARD "forward"
/* sites and stacks: the functions a native site is inlined in, innermost first, as every view
 * prints them after the site: "main (app.cpp:20)", joined by " inlined in " */
#define FBR_INLINED_IN "inlined_in"
/* the top level (after total): the first fallback's op and site, as a site is written */
#define FBR_FIRST "first"
#define FBR_ORIGIN_BACKWARD "backward"
#define FBR_ORIGIN_THREAD "thread"
/* ops and host_ops rows: "split" where the backend times splits, not their nodes (ggml): the
 * row's ns is 0 and its time is its splits' (in splits[]) */
#define FBR_TIMED "timed"
#define FBR_TIMED_SPLIT "split"
#define FBR_BYTES_KNOWN "bytes_known" /* false: the backend cannot read sizes (bytes are 0) */

/* stacks, rows and backends[]: which backend (rules/backend.h) recorded them; a missing
 * value in a stack or row means "vkt", the only backend of older dumps */
#define FBR_BACKEND_NAME "backend"
#define FBR_BACKEND_DEFAULT "vkt"
#define FBR_NAME "name"
#define FBR_SOURCE "source" /* backends[]: "builtin", "file" or "declared" */
#define FBR_SOURCE_BUILTIN "builtin"
#define FBR_SOURCE_FILE "file"
#define FBR_SOURCE_DECLARED "declared"
#define FBR_COUNTERS "counters"     /* backends[]: the backend's own op counters, or null */
#define FBR_READER "reader"         /* backends[]: what the reader says of it ("adapter ...") */
#define FBR_DESCRIPTOR "descriptor" /* backends[]: a row not built in, as its descriptor text */

/* frames, sites and modules */
#define FBR_IP "ip"
#define FBR_SYMBOL "symbol"
#define FBR_MODULE "module"
#define FBR_OFFSET "offset"
#define FBR_FILE "file"
#define FBR_LINE "line"
#define FBR_INLINED "inlined" /* a frame inlined into the next one (same ip) */
#define FBR_PYTHON "python"   /* a Python frame or site: file, function (symbol), line */
#define FBR_PATH "path"
#define FBR_BASE "base"
#define FBR_BUILD_ID "build_id"
#define FBR_SIZE "size"

/* The command's own JSON. */
#define FBR_DEMANGLED "demangled" /* the command's JSON: a C++ name as written */

#endif
