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
#define FBR_TOTAL "total"
#define FBR_BACKEND "backend"
#define FBR_OPS "ops"
#define FBR_HOST_OPS "host_ops"
#define FBR_STACKS "stacks"
#define FBR_MODULES "modules"
#define FBR_EXEC "exec"   /* true in the dump written just before an exec */
#define FBR_ABORT "abort" /* FBCOUNT_MODE=abort: the op and site that stopped the program */

/* Why a dump was written. */
#define FBR_REASON_EXIT "exit"
#define FBR_REASON_SIGNAL "signal"
#define FBR_REASON_CHECKPOINT "checkpoint"
#define FBR_REASON_SNAPSHOT "snapshot"
#define FBR_REASON_CRASH "crash"
#define FBR_REASON_API "api"

/* process */
#define FBR_PID "pid"
#define FBR_PPID "ppid"
#define FBR_HOST "host"
#define FBR_EXE "exe"
#define FBR_ARGV "argv"
#define FBR_ID "id" /* one census: random, new in every process image (fork and exec) */
#define FBR_RANK "rank"

/* config */
#define FBR_MODE "mode"
#define FBR_DEPTH "depth"
#define FBR_OP_PREFIX "op_prefix"
#define FBR_PY_BACKEND "py_backend"

/* total (also FBR_BYTES, FBR_MAX_BYTES, FBR_HOST_OPS, FBR_STACKS) */
#define FBR_FALLBACKS "fallbacks"
#define FBR_HOST_BYTES "host_bytes"

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

/* frames, sites and modules */
#define FBR_IP "ip"
#define FBR_SYMBOL "symbol"
#define FBR_MODULE "module"
#define FBR_OFFSET "offset"
#define FBR_FILE "file"
#define FBR_LINE "line"
#define FBR_PATH "path"
#define FBR_BASE "base"
#define FBR_BUILD_ID "build_id"
#define FBR_SIZE "size"

/* Additions of the census-id, time, rank and Python-frame changes (all optional in a dump). */
#define FBR_PARENT_ID "parent_id"     /* process: the census that forked or exec'ed this one */
#define FBR_START_TIME "start_time"   /* process: UTC ISO 8601 */
#define FBR_ELAPSED_NS "elapsed_ns"   /* process: wall time from its start to this dump */
#define FBR_NS "ns"                   /* total, ops, sites, stacks: time summed, ns */
#define FBR_MAX_NS "max_ns"           /* ops, stacks: the longest one */
#define FBR_HOST_NS "host_ns"         /* total: time of host-resident ops */
#define FBR_TIMING "timing"           /* config: "fallback" or "host_result" */
#define FBR_TIMING_FALLBACK "fallback"
#define FBR_TIMING_HOST_RESULT "host_result"
#define FBR_INLINED "inlined"         /* frames: inlined into the next frame (same ip) */
#define FBR_PYTHON "python"           /* frames and sites: a Python frame (file, line) */
#define FBR_DEMANGLED "demangled"     /* the command's JSON: a C++ name as written */

#endif
