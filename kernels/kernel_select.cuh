// One kernel of a file per module. NVRTC's time goes on the kernel bodies, so a host that needs
// one kernel compiles the file with -DGC_ONE_KERNEL -DGC_KERNEL_<name> and only that kernel is
// built (H200, NVRTC 13.0: one softmax kernel 0.12-0.18 s, the 24 of softmax.cu for f32 1.9-2.6 s).
// Without GC_ONE_KERNEL every kernel is built. A kernel definition is wrapped in
// GC_IF_KERNEL(name)(...), or in `#if GC_WANT_KERNEL(name)` where it is written out plainly.
#pragma once

// GC_IS_SET(X): 1 where X is a macro defined as 1, else 0 (a probe that only `1` turns into an
// extra argument).
#define GC_PROBE_1 ~, 1
#define GC_SECOND(a, b, ...) b
#define GC_IS_SET_(probe) GC_SECOND(probe, 0, ~)
#define GC_IS_SET_CAT(x) GC_IS_SET_(GC_PROBE_##x)
#define GC_IS_SET(X) GC_IS_SET_CAT(X)

#ifdef GC_ONE_KERNEL
#define GC_WANT_KERNEL(NAME) GC_IS_SET(GC_KERNEL_##NAME)
#else
#define GC_WANT_KERNEL(NAME) 1
#endif

#define GC_KEEP_1(...) __VA_ARGS__
#define GC_KEEP_0(...)
#define GC_KEEP_CAT(flag) GC_KEEP_##flag
#define GC_KEEP(flag) GC_KEEP_CAT(flag)
#define GC_IF_KERNEL(NAME) GC_KEEP(GC_WANT_KERNEL(NAME))
