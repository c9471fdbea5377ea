"""Fits the polynomial coefficients of kernels/wasm/vmath.h and rows.c (run: python3 fit_coefficients.py).

Each polynomial is a near-minimax fit (Lawson's iteratively reweighted least squares on Chebyshev
nodes, 40-digit references from mpmath) of the part of a function that is left after its exact
leading terms, weighted so that the fit minimises the relative error of the function itself.
Prints the coefficients, lowest degree first, with the fit's error and the error of evaluating
the polynomial by Horner's rule in f32 without FMA (what the plain SIMD128 build does).
Needs numpy and mpmath; the output is pasted into vmath.h, which records where it came from.
"""
import numpy as np
import mpmath as mp

mp.mp.dps = 40


def lawson(fn, lo, hi, deg, weight, n=3000, iters=40):
    xs = np.cos(np.pi * (np.arange(n) + 0.5) / n) * (hi - lo) / 2 + (hi + lo) / 2
    ys = np.array([float(fn(mp.mpf(float(x)))) for x in xs])
    w = weight(xs, ys)
    basis = np.stack([xs**k for k in range(deg + 1)], 1)
    lw = np.ones(n) / n
    for _ in range(iters):
        sw = np.sqrt(lw) * w
        c, *_ = np.linalg.lstsq(basis * sw[:, None], ys * sw, rcond=None)
        err = np.abs((basis @ c - ys) * w)
        lw = lw * err
        lw /= lw.sum()
    return c, float(np.max(np.abs((basis @ c - ys) * w))), xs, ys, w


def horner_f32(c, x):
    acc = np.full_like(x, np.float32(c[-1]))
    for k in c[-2::-1]:
        acc = (acc * x).astype(np.float32) + np.float32(k)
    return acc


def report(name, fn, lo, hi, deg, weight):
    c, err, xs, ys, w = lawson(fn, lo, hi, deg, weight)
    x32 = xs.astype(np.float32)
    got = horner_f32(c, x32).astype(np.float64)
    ref = np.array([float(fn(mp.mpf(float(x)))) for x in x32])
    f32err = float(np.max(np.abs((got - ref) * weight(x32.astype(np.float64), ref))))
    print(f"{name}: degree {deg} on [{lo:.6g}, {hi:.6g}], fit error {err:.3g}, f32 Horner error {f32err:.3g}")
    print("  " + ", ".join(f"{np.float32(v)!r}f".replace("np.float32(", "").replace(")", "") for v in c))


# exp(r) = 1 + r + r^2 Q(r) on |r| <= ln2/2.
report("exp Q", lambda r: (mp.exp(r) - 1 - r) / r**2 if r != 0 else mp.mpf(1) / 2,
       -0.34658, 0.34658, 4, lambda x, y: x**2 / np.exp(x))

# The same of degree 3, for f32 softmax (rows.c: softmax_exp_constants).
report("exp Q (softmax)", lambda r: (mp.exp(r) - 1 - r) / r**2 if r != 0 else mp.mpf(1) / 2,
       -0.34658, 0.34658, 3, lambda x, y: x**2 / np.exp(x))

# log(1+f) = f - f^2/2 + f^3 P(f) on [sqrt(1/2) - 1, sqrt(2) - 1].
report("log P", lambda f: (mp.log(1 + f) - f + f**2 / 2) / f**3 if abs(f) > 1e-6 else mp.mpf(1) / 3 - f / 4,
       0.70710678 - 1, 1.41421357 - 1, 7, lambda x, y: np.abs(x**3 / np.log1p(x)))

# tanh(x) = x + x^3 P(x^2) for |x| < 0.625.
report("tanh P", lambda s: (mp.tanh(mp.sqrt(s)) - mp.sqrt(s)) / mp.sqrt(s) ** 3 if s > 1e-12 else -mp.mpf(1) / 3,
       0, 0.625**2, 4, lambda s, y: s**1.5 / np.tanh(np.sqrt(s) + 1e-30))

# Mills ratio M(u) = Phi(-u)/phi(u) = t P(t) with t = 1/(1 + 0.3 u), for u >= 0 (t in (0, 1]).
A = 0.3


def mills_over_t(t):
    if t < 1e-9:
        return mp.mpf(A)
    u = (1 / t - 1) / A
    return mp.erfc(u / mp.sqrt(2)) / 2 * mp.sqrt(2 * mp.pi) * mp.exp(u * u / 2) / t


report("Mills P", mills_over_t, 1e-9, 1.0, 10, lambda x, y: 1 / np.abs(y))


# Derivatives with a root x0 (geluGrad, geluTanhGrad, siluGrad): near it f'(x) = (x - x0)·Q(x),
# evaluated with x - x0 from x0 split into two f32 parts, so f' keeps its relative accuracy
# through the root. Q on [x0 - 0.5, x0 + 0.5], where the plain formula's sum cancels.
def phi(x):
    return mp.exp(-x * x / 2) / mp.sqrt(2 * mp.pi)


def Phi(x):
    return mp.erfc(-x / mp.sqrt(2)) / 2


KT = mp.sqrt(2 / mp.pi)
CT = mp.mpf("0.044715")


def gelu_grad(x):
    return Phi(x) + x * phi(x)


def gelu_tanh_grad(x):
    y = KT * (x + CT * x**3)
    t = mp.tanh(y)
    return (1 + t) / 2 + x * (1 - t * t) / 2 * KT * (1 + 3 * CT * x * x)


def silu_grad(x):
    s = 1 / (1 + mp.exp(-x))
    return s * (1 + x * (1 - s))


for name, fn, guess in (("geluGrad", gelu_grad, -0.75), ("geluTanhGrad", gelu_tanh_grad, -0.75), ("siluGrad", silu_grad, -1.28)):
    x0 = mp.findroot(fn, guess)
    hi = np.float32(float(x0))
    lo = np.float32(float(x0 - mp.mpf(float(hi))))
    print(f"{name} root {mp.nstr(x0, 20)} = {hi!r} + {lo!r}")
    q = lambda x, fn=fn, x0=x0: fn(x) / (x - x0) if abs(x - x0) > 1e-12 else mp.diff(fn, x0)
    # Fit in the centred variable v = x - x0_hi, the form the kernel evaluates.
    report(f"{name} Q(x - x0)", lambda v, q=q, hi=hi: q(v + mp.mpf(float(hi))), -0.5, 0.5, 9, lambda v, y: 1 / np.abs(y))


# Exact GELU near 0 (|x| < 1): Φ(x) = 1/2 + x·R(x²) and Φ(x) + x·φ(x) = 1/2 + x·S(x²), so the
# results carry one rounding of a small correction to 1/2 instead of the tail form's several.
report("Phi R", lambda s: (Phi(mp.sqrt(s)) - mp.mpf(1) / 2) / mp.sqrt(s) if s > 1e-12 else 1 / mp.sqrt(2 * mp.pi),
       0, 1, 6, lambda s, y: np.sqrt(s) / (0.5 + np.sqrt(s) * np.abs(y)))
report("geluGrad S", lambda s: (gelu_grad(mp.sqrt(s)) - mp.mpf(1) / 2) / mp.sqrt(s) if s > 1e-12 else 2 / mp.sqrt(2 * mp.pi),
       0, 1, 6, lambda s, y: np.sqrt(s) / np.abs(0.5 - np.sqrt(s) * np.abs(y) + 1e-3))
