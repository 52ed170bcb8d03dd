/* Backends as rows of data (rules/backend.h): the built-in descriptors, the format's errors,
 * declared exits, op names under each rule, and attribution by a row. */
#include <criterion/criterion.h>
#include <string.h>

#include "backend.h"
#include "typed.h"

static fbr_backend row;
static char err[256];

static int parse(const char *text)
{
    err[0] = '\0';
    return fbr_backend_parse(text, strlen(text), FBR_FROM_FILE, &row, err, sizeof err);
}

/* The descriptors the build compiles in, by the names of their files (rules/meson.build). */
static const char *const names[] = {BUILTIN_ROWS};
#define NROWS (sizeof names / sizeof *names)

Test(backend, builtin_rows_parse)
{
    cr_assert_eq(fbr_backend_builtin_count(), NROWS);
    for (size_t i = 0; i < NROWS; i++) {
        const fbr_backend *b = fbr_backend_builtin(i);
        cr_assert_not_null(b, "built-in row %zu does not parse", i);
        cr_expect_str_eq(b->name, names[i]);
        cr_expect_eq(b->source, FBR_FROM_BUILTIN);
        /* The text compiled in is the text that parsed. */
        const char *t = fbr_backend_builtin_text(i);
        cr_assert_eq(fbr_backend_parse(t, strlen(t), FBR_FROM_BUILTIN, &row, err, sizeof err), 0,
                     "%s", err);
        cr_expect_eq(memcmp(&row, b, sizeof row), 0);
    }
    cr_expect_null(fbr_backend_builtin(NROWS));
    /* The exits listed when compiled in are the parsed rows' exits, in order. */
    size_t k = 0;
    for (size_t i = 0; i < NROWS; i++)
        for (int e = 0; e < fbr_backend_builtin(i)->nexits; e++, k++)
            cr_expect_str_eq(fbr_backend_builtin_exits[k] ? fbr_backend_builtin_exits[k] : "(none)",
                             fbr_backend_builtin(i)->exit[e].symbol);
    cr_expect_null(fbr_backend_builtin_exits[k]);
    const fbr_backend *vkt = fbr_backend_named("vkt"), *torch = fbr_backend_named("torch");
    cr_assert(vkt && torch && fbr_backend_named("ggml"));
    cr_expect_null(fbr_backend_named("cuda"));
    cr_expect_str_eq(vkt->exit[0].symbol, "host_result");
    cr_expect_eq(vkt->exit[0].reader, FBR_READ_VKT);
    cr_expect_eq(vkt->exit[1].kind, FBR_EXIT_HOST);
    cr_expect_str_eq(vkt->accessor[FBR_ACC_STATS], "vkt_stats");
    cr_expect(vkt->has_refuse && vkt->refuse == -10 && !vkt->refuse_throw);
    cr_expect_eq(torch->nexits, 3);
    cr_expect(torch->refuse_throw);
    /* ggml: the scheduler's compute, its splits, and the copies it makes. */
    const fbr_backend *ggml = fbr_backend_named("ggml");
    static const struct {
        const char *symbol;
        fbr_exit_kind kind;
        fbr_reader reader;
    } ggml_exits[] = {
        {"ggml_backend_sched_graph_compute_async", FBR_EXIT_GRAPH, FBR_READ_GGML_SCHED},
        {"ggml_backend_graph_compute_async", FBR_EXIT_GRAPH, FBR_READ_GGML_GRAPH},
        {"ggml_backend_tensor_copy", FBR_EXIT_TRANSFER, FBR_READ_GGML_COPY},
        {"ggml_backend_tensor_copy_async", FBR_EXIT_TRANSFER, FBR_READ_GGML_COPY_ASYNC},
        {"ggml_backend_tensor_set_async", FBR_EXIT_TRANSFER, FBR_READ_GGML_SET_ASYNC}};
    cr_assert_eq(ggml->nexits, 5);
    for (int i = 0; i < 5; i++) {
        cr_expect_str_eq(ggml->exit[i].symbol, ggml_exits[i].symbol);
        cr_expect_eq(ggml->exit[i].kind, ggml_exits[i].kind, "%s", ggml_exits[i].symbol);
        cr_expect_eq(ggml->exit[i].reader, ggml_exits[i].reader, "%s", ggml_exits[i].symbol);
    }
}

/* The built-in rows against the shim's typed definitions (rules/typed.h), both ways: every
 * exit of a row is one the shim defines, so its read= and refuse act (a row's exit reached
 * only by redirection would be counted with bytes unknown and never refused); and every exit
 * the shim types is some row's, or its definition would wait for a call no row describes. */
Test(backend, typed_exits_both_ways)
{
    char msg[4096];
    cr_expect_eq(fbr_typed_check(msg, sizeof msg), 0, "%s", msg);
    size_t typed = 0;
#define COUNT(id, fn, sym, role)                                                                   \
    typed += role == FBR_TYPED_EXIT;                                                               \
    cr_expect_eq(fbr_exit_typed(sym), role == FBR_TYPED_EXIT, "%s", #fn);
    FBR_TYPED(COUNT)
#undef COUNT
    cr_expect_gt(typed, 0);
}

Test(backend, membership)
{
    const fbr_backend *vkt = fbr_backend_named("vkt"), *torch = fbr_backend_named("torch");
    cr_expect(fbr_backend_library(vkt, "/usr/lib/x86_64-linux-gnu/libvkt.so.0"));
    cr_expect(!fbr_backend_library(vkt, "/usr/lib/libvktools.so"));
    cr_expect(fbr_backend_module(vkt, "/p/vkt/_vkt.cpython-311-x86_64-linux-gnu.so"));
    cr_expect(fbr_backend_python(vkt, "/usr/lib/python3/dist-packages/vkt/_ops.py"));
    cr_expect(!fbr_backend_python(vkt, "/home/u/test_x.py"));
    cr_expect(fbr_backend_library(torch, "/usr/lib/x86_64-linux-gnu/libtorch_cpu.so.1.13"));
    cr_expect(fbr_backend_module(torch, "/usr/lib/x86_64-linux-gnu/libtorch_python.so.1.13"));
    cr_expect(fbr_backend_module(torch, "/usr/lib/x86_64-linux-gnu/libc10.so.1.13"));
    cr_expect(fbr_backend_module(torch, "/x/torch/_C.cpython-312-x86_64-linux-gnu.so"));
    cr_expect(!fbr_backend_module(torch, "/home/u/libtoydev.so"));
    cr_expect(fbr_backend_python(torch, "/usr/lib/python3/dist-packages/torch/nn/functional.py"));
}

Test(backend, op_names)
{
    const fbr_backend *vkt = fbr_backend_named("vkt"), *torch = fbr_backend_named("torch");
    char op[64];
    cr_expect(fbr_backend_op_of(vkt, "vkt_dot", op, sizeof op));
    cr_expect_str_eq(op, "vkt_dot");
    cr_expect(!fbr_backend_op_of(vkt, "dot_fallback", op, sizeof op));
    cr_expect(fbr_backend_op_of(
        torch, "_ZN2at4_ops8gelu_out4callERKNS_6TensorEN3c1017basic_string_viewIcEERS2_", op,
        sizeof op));
    cr_expect_str_eq(op, "gelu_out");
    cr_expect(fbr_backend_op_of(
        torch, "_ZN2at4_ops12index_select10redispatchEN3c1014DispatchKeySetERKNS_6TensorElS6_", op,
        sizeof op));
    cr_expect_str_eq(op, "index_select");
    cr_expect(!fbr_backend_op_of(torch, "_ZN2at6native12cpu_fallbackERKN3c1014OperatorHandleE", op,
                                 sizeof op));
    cr_expect(!fbr_backend_op_of(torch, "_ZN2at4_opsE", op, sizeof op), "a scope with no op in it");
    cr_expect(!fbr_backend_op_of(torch, "_ZN2at4_ops99xE", op, sizeof op), "a length past the end");
    cr_expect(!fbr_backend_op_of(torch, "at::_ops::gelu::call", op, sizeof op), "not mangled");
}

Test(backend, format_errors)
{
    cr_expect_eq(parse("name x\nlibrary libx.so\nexit f fallback\n"), 0, "%s", err);
    cr_expect_eq(row.oprule, FBR_OPRULE_LIBRARY, "the default op rule");
    cr_expect_eq(row.exit[0].reader, FBR_READ_NONE);
    static const struct {
        const char *text, *msg;
    } bad[] = {
        {"library l\nexit f fallback\n", "no name"},
        {"name x\nexit f fallback\n", "no library"},
        {"name x\nlibrary l\n", "no exit"},
        {"name X\n", "line 1: name 'X' is not"},
        {"name x\nname y\n", "line 2: name is given twice"},
        {"name x\nfrobnicate 1\n", "line 2: unknown directive 'frobnicate'"},
        {"name x\nlibrary l\nexit f sideways\n", "line 3: exit kind 'sideways'"},
        {"name x\nlibrary l\nexit f fallback read=cuda\n",
         "line 3: 'read=cuda' is not read=READER"},
        {"name x\nlibrary l\nexit f fallback\nexit f host\n", "line 4: exit f is named twice"},
        {"name x\nop prefix\n", "line 2: op prefix needs at least one value"},
        {"name x\nop scope at::::x\n", "line 2: op scope 'at' has an empty component"},
        {"name x\naccessor rank\n", "line 2: accessor 'rank' is not NAME=SYMBOL"},
        {"name x\naccessor size=f\n", "line 2: unknown accessor 'size'"},
        {"name x\nrefuse maybe\n", "line 2: refuse 'maybe' is not an integer or throw"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        cr_expect_eq(parse(bad[i].text), -1, "accepted: %s", bad[i].text);
        cr_expect(!strncmp(err, bad[i].msg, strlen(bad[i].msg)), "'%s': got '%s'", bad[i].msg, err);
    }
    char big[FBR_DESCRIPTOR_MAX + 2];
    memset(big, '#', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    cr_expect_eq(parse(big), -1);
    char longline[2000];
    memset(longline, 'a', sizeof longline - 1);
    longline[sizeof longline - 1] = '\0';
    cr_expect_eq(parse(longline), -1);
    cr_expect(strstr(err, "longer than"), "%s", err);
}

Test(backend, declared_exits)
{
    cr_assert_eq(fbr_backend_declare("libopencv_dnn.so:_ZN2cv3dnn5Layer16forward_fallbackEv", &row,
                                     err, sizeof err),
                 0, "%s", err);
    cr_expect_str_eq(row.name, "opencv_dnn");
    cr_expect_str_eq(row.library.s[0], "libopencv_dnn.so*");
    cr_expect_str_eq(row.exit[0].symbol, "_ZN2cv3dnn5Layer16forward_fallbackEv");
    cr_expect_eq(row.source, FBR_FROM_DECLARED);
    cr_expect_eq(row.oprule, FBR_OPRULE_LIBRARY);
    cr_assert_eq(
        fbr_backend_declare("/opt/x/libMine.so.2:mine_host:op=mine_", &row, err, sizeof err), 0,
        "%s", err);
    cr_expect_str_eq(row.name, "mine");
    cr_expect_str_eq(row.library.s[0], "libMine.so.2*");
    cr_expect_eq(row.oprule, FBR_OPRULE_PREFIX);
    cr_expect_str_eq(row.op.s[0], "mine_");
    static const char *const bad[] = {"nocolon", ":sym", "lib:", "lib:a::b", "lib:sym:op=", NULL};
    for (int i = 0; bad[i]; i++)
        cr_expect_eq(fbr_backend_declare(bad[i], &row, err, sizeof err), -1, "accepted %s", bad[i]);
}

typedef struct {
    const fbr_native *f;
} frames;

static const fbr_native *at(void *ctx, size_t i)
{
    return &((frames *)ctx)->f[i];
}

Test(backend, torch_site_from_the_op_frame)
{
    /* cpu_fallback <- the device's boxed kernel <- the dispatcher <- at::_ops::gelu::call <-
     * torch's Python binding <- the interpreter: the site is the user's Python line, not the
     * device's module or libtorch_python. */
    const fbr_backend *torch = fbr_backend_named("torch");
    const fbr_native f[] = {
        {"_ZN2at6native12cpu_fallbackERKN3c1014OperatorHandleEPSt6vectorINS1_6IValueESaIS6_EE", 1,
         "/usr/lib/x86_64-linux-gnu/libtorch_cpu.so.1.13"},
        {"_Z12toy_fallbackRKN3c1014OperatorHandleEPSt6vectorINS_6IValueESaIS4_EE", 2,
         "/t/libtoydev.so"},
        {"_ZNK3c1010Dispatcher9callBoxedE", 3, "/usr/lib/x86_64-linux-gnu/libc10.so.1.13"},
        {"_ZN2at4_ops4gelu4callERKNS_6TensorEN3c1017basic_string_viewIcEE", 1,
         "/usr/lib/x86_64-linux-gnu/libtorch_cpu.so.1.13"},
        {"_ZN5torch8autogradL16THPVariable_geluEP7_objectS2_S2_", 4,
         "/usr/lib/x86_64-linux-gnu/libtorch_python.so.1.13"},
        {"_PyEval_EvalFrameDefault", 5, "/usr/bin/python3.11"},
    };
    const fbr_pyframe py[] = {{"/usr/lib/python3/dist-packages/torch/nn/functional.py", "gelu", 9},
                              {"/home/u/model.py", "forward", 14}};
    frames s = {f};
    fbr_attrib a;
    char op[64];
    fbr_attribute_backend(torch, 6, at, NULL, &s, py, 2, &a, op, sizeof op);
    cr_expect_eq(a.op, 3);
    cr_expect_str_eq(op, "gelu");
    cr_expect_eq(a.site, 5);
    cr_expect_eq(a.py_site, 1);
    /* A C++ caller: the user's frame after the op. */
    const fbr_native g[] = {f[0], f[1], f[2], f[3], {"main", 6, "/home/u/driver"}};
    frames t = {g};
    fbr_attribute_backend(torch, 5, at, NULL, &t, NULL, 0, &a, op, sizeof op);
    cr_expect_eq(a.site, 4);
    cr_expect_eq(a.py_site, -1);
}

Test(backend, reader_and_library_rules)
{
    const fbr_backend *ggml = fbr_backend_named("ggml");
    const fbr_native f[] = {{"ggml_backend_graph_compute_async", 1, "/n/libggml-base.so"},
                            {"ggml_backend_sched_graph_compute_async", 1, "/n/libggml-base.so"},
                            {"llama_decode", 2, "/n/libllama.vulkan.v0.5.0.so"},
                            {"generate", 3, "/home/u/app"}};
    frames s = {f};
    fbr_attrib a;
    char op[64];
    fbr_attribute_backend(ggml, 4, at, NULL, &s, NULL, 0, &a, op, sizeof op);
    cr_expect_eq(a.op, -1, "the reader names ggml's ops");
    cr_expect_str_eq(op, "");
    cr_expect_eq(a.site, 3, "the caller of llama_decode");
    /* A declared exit: the op is the innermost frame inside its library. */
    cr_assert_eq(fbr_backend_declare("libcv.so:cv_fallback", &row, err, sizeof err), 0);
    const fbr_native g[] = {{"cv_fallback", 1, "/l/libcv.so.4"},
                            {"cv_layer_forward", 1, "/l/libcv.so.4"},
                            {"run_net", 2, "/home/u/app"}};
    frames t = {g};
    fbr_attribute_backend(&row, 3, at, NULL, &t, NULL, 0, &a, op, sizeof op);
    cr_expect_eq(a.op, 1);
    cr_expect_str_eq(op, "cv_layer_forward");
    cr_expect_eq(a.site, 2);
}

/* The functions inlined at each frame, by its symbol: at::gelu inlined into main, and an
 * out-of-line copy of a header function in the caller's module. */
static int files_at(void *ctx, size_t i, const char **files, int max)
{
    static const struct {
        const char *symbol, *files[2];
    } chains[] = {{"main", {"/usr/include/ATen/ops/gelu.h", "/home/u/driver.cc"}},
                  {"_ZNK3c108optionalIlE5valueEv", {"/usr/include/c10/util/Optional.h", NULL}},
                  {"run", {"/home/u/driver.cc", NULL}}};
    const char *sym = at(ctx, i)->symbol;
    for (size_t c = 0; c < sizeof chains / sizeof *chains; c++) {
        if (strcmp(chains[c].symbol, sym))
            continue;
        int n = 0;
        for (; n < 2 && n < max && chains[c].files[n]; n++)
            files[n] = chains[c].files[n];
        return n;
    }
    return 0;
}

Test(backend, inlined_backend_code_is_not_the_site)
{
    const fbr_backend *torch = fbr_backend_named("torch");
    const fbr_native f[] = {{"_ZN2at4_ops4gelu4callERKNS_6TensorEN3c1017basic_string_viewIcEE", 1,
                             "/usr/lib/x86_64-linux-gnu/libtorch_cpu.so.1.13"},
                            {"main", 2, "/home/u/driver"}};
    frames s = {f};
    fbr_attrib a;
    char op[64];
    fbr_attribute_backend(torch, 2, at, files_at, &s, NULL, 0, &a, op, sizeof op);
    cr_expect_eq(a.site, 1);
    cr_expect_eq(a.site_inline, 1, "main, which at::gelu was inlined into");
    const fbr_native g[] = {f[0],
                            {"_ZNK3c108optionalIlE5valueEv", 2, "/home/u/driver"},
                            {"run", 2, "/home/u/driver"},
                            {"main", 2, "/home/u/driver"}};
    frames t = {g};
    fbr_attribute_backend(torch, 4, at, files_at, &t, NULL, 0, &a, op, sizeof op);
    cr_expect_eq(a.site, 2, "the header function's own frame is PyTorch's");
    cr_expect_eq(a.site_inline, 0);
    cr_expect(fbr_backend_source(torch, "/usr/include/ATen/ops/gelu.h"));
    cr_expect(!fbr_backend_source(torch, "/home/u/attention.cc"));
}

Test(backend, a_row_as_text_parses_back)
{
    char text[FBR_DESCRIPTOR_MAX];
    for (size_t i = 0; i < fbr_backend_builtin_count(); i++) {
        const fbr_backend *b = fbr_backend_builtin(i);
        int n = fbr_backend_format(b, text, sizeof text);
        cr_assert(n > 0 && (size_t)n < sizeof text);
        fbr_backend back;
        cr_assert_eq(fbr_backend_parse(text, (size_t)n, FBR_FROM_BUILTIN, &back, err, sizeof err),
                     0, "%s: %s\n%s", b->name, err, text);
        cr_expect_eq(memcmp(&back, b, sizeof back), 0, "%s does not parse back:\n%s", b->name,
                     text);
    }
    cr_assert_eq(fbr_backend_declare("libx.so:fx:op=x_", &row, err, sizeof err), 0);
    char small[8];
    int n = fbr_backend_format(&row, small, sizeof small);
    cr_expect(n > (int)sizeof small && strlen(small) == sizeof small - 1, "cut, like snprintf");
}

Test(backend, globs)
{
    cr_expect(fbr_glob("libvkt.so*", "libvkt.so"));
    cr_expect(fbr_glob("libvkt.so*", "libvkt.so.0.1"));
    cr_expect(!fbr_glob("libvkt.so*", "libvktx.so"));
    cr_expect(fbr_glob("_C.cpython-*.so", "_C.cpython-311-x86_64-linux-gnu.so"));
    cr_expect(fbr_glob("*/ATen/*", "/usr/include/ATen/ops/gelu.h"));
    cr_expect(!fbr_glob("*/ATen/*", "/usr/include/c10/util/Optional.h"));
    cr_expect(fbr_glob("a?c", "abc") && !fbr_glob("a?c", "ac"));
    cr_expect(fbr_glob("*", "") && fbr_glob("**x", "yyx") && !fbr_glob("x", ""));
    cr_expect(fbr_glob("libtorch*.so*", "libtorch_python.so.1.13"));
}

/* libvkt's row: the rule the shim applied before backends were rows, unchanged. */
typedef struct {
    fbr_native *frames;
    size_t asked; /* the highest index looked at, + 1 */
} stack;

static const fbr_native *at_counted(void *ctx, size_t i)
{
    stack *s = ctx;
    if (i + 1 > s->asked)
        s->asked = i + 1;
    return &s->frames[i];
}

Test(backend_vkt, op_and_native_site)
{
    fbr_backend vkt = *fbr_backend_named("vkt");
    char op[64];
    fbr_native f[] = {{"host_result", 1, "/lib/libvkt.so"},
                      {"dot_fallback", 1, "/lib/libvkt.so"},
                      {"vkt_dot", 1, "/lib/libvkt.so"},
                      {"train_step", 2, "/bin/app"},
                      {"main", 2, "/bin/app"},
                      {"__libc_start_main", 3, "/lib/libc.so.6"}};
    stack s = {f, 0};
    fbr_attrib a;
    fbr_attribute_backend(&vkt, 6, at_counted, NULL, &s, NULL, 0, &a, op, sizeof op);
    cr_expect_eq(a.op, 2);
    cr_expect_eq(a.site, 3);
    cr_expect_eq(a.py_site, -1);
    cr_expect_eq(s.asked, 4, "looked at %zu frames: names are needed only as far as the site",
                 s.asked);
}

Test(backend_vkt, no_op_site_outside_first_module)
{
    fbr_backend vkt = *fbr_backend_named("vkt");
    char op[64];
    fbr_native f[] = {
        {"host_result", 1, "/lib/libb.so"}, {NULL, 1, "/lib/libb.so"}, {"caller", 2, "/bin/app"}};
    stack s = {f, 0};
    fbr_attrib a;
    fbr_attribute_backend(&vkt, 3, at_counted, NULL, &s, NULL, 0, &a, op, sizeof op);
    cr_expect_eq(a.op, -1);
    cr_expect_eq(a.site, 2);
    fbr_native g[] = {{"vkt_dot", 1, "/lib/libvkt.so"}, {"helper", 1, "/lib/libvkt.so"}};
    stack t = {g, 0};
    fbr_attribute_backend(&vkt, 2, at_counted, NULL, &t, NULL, 0, &a, op, sizeof op);
    cr_expect_eq(a.op, 0);
    cr_expect_eq(a.site, -1);
}

Test(backend_vkt, python_site_skips_backend_package)
{
    fbr_backend vkt = *fbr_backend_named("vkt");
    char op[64];
    fbr_names py;
    fbr_names_parse("vkt", FBR_DEFAULT_PY_BACKEND, &py);
    fbr_native f[] = {{"host_result", 1, "/usr/lib/libvkt.so.0"},
                      {"vkt_dot", 1, "/usr/lib/libvkt.so.0"},
                      {"ffi_call_unix64", 2, "/usr/lib/x86_64-linux-gnu/libffi.so.8"},
                      {"_PyEval_EvalFrameDefault", 3, "/usr/bin/python3.11"}};
    fbr_pyframe p[] = {{"/usr/lib/python3/dist-packages/vkt/ops.py", "dot", 120},
                       {"/usr/lib/python3/dist-packages/vkt.py", "wrap", 3},
                       {"/home/u/test_model.py", "test_step", 14},
                       {"/home/u/test_model.py", "<module>", 30}};
    stack s = {f, 0};
    fbr_attrib a;
    fbr_attribute_backend(&vkt, 4, at_counted, NULL, &s, p, 4, &a, op, sizeof op);
    cr_expect_eq(a.op, 1);
    cr_expect_eq(a.site, 2);
    cr_expect_eq(a.py_site, 2);
    /* A C site is not replaced by Python frames. */
    f[2] = (fbr_native){"train_step", 4, "/home/u/ext.so"};
    fbr_attribute_backend(&vkt, 4, at_counted, NULL, &s, p, 4, &a, op, sizeof op);
    cr_expect_eq(a.py_site, -1);
    cr_expect(!fbr_py_in_package("/home/u/vktools/x.py", &py));
    cr_expect(!fbr_py_in_package("/home/u/myvkt/x.py", &py));
    fbr_names_free(&py);
}
