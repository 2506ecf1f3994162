"""numba kernels of fuzzy c-means (seed 001, section 2.4): Bezdek's memberships and the
alternating optimization. Validation is assumed (finite, C-contiguous float64; centres
feature-major)."""

from __future__ import annotations

import numpy as np

from .._runtime.jit import njit

__all__ = ["fcm_kernel", "memberships_kernel"]


@njit(cache=True)
def _power(r, e):  # pragma: no cover - numba
    """``r ** e`` for ``0 <= r <= 1``; exact for the common exponents 1 (m = 2) and 1/2 (m = 3)."""
    if e == 1.0:
        return r
    if r <= 0.0:
        return 0.0
    if e == 0.5:
        return np.sqrt(r)
    return np.exp(e * np.log(r))


@njit(cache=True)
def _membership_row(X, i, Vt, e, r, w):  # pragma: no cover - numba
    """Unnormalized memberships of record ``i`` to the centres (columns of ``Vt``).

    With ``d_j`` the squared distance to centre j and ``dmin`` the smallest: ``r[j] = dmin /
    d_j`` and ``w[j] = r[j] ** e`` (``e = 1 / (m - 1)``), so that ``u_j = w_j / sum(w)`` is
    Bezdek's ``1 / sum_l (d_j / d_l) ** (1 / (m - 1))`` (squared distances) and the nearest
    centre has ``w = 1``: no overflow, whatever ``m``. A record lying on centres
    (``dmin == 0``) gets ``w = r = 1`` on each of them and 0 elsewhere (membership shared
    equally among coincident centres). Returns ``(dmin, sum(w))``; ``sum(w) >= 1``.
    """
    p = X.shape[1]
    c = Vt.shape[1]
    for j in range(c):
        r[j] = 0.0
    for t in range(p):  # feature-major: the inner loop runs over the centres, contiguous
        xt = X[i, t]
        row = Vt[t]
        for j in range(c):
            d = xt - row[j]
            r[j] += d * d
    dmin = np.inf
    for j in range(c):
        if r[j] < dmin:
            dmin = r[j]
    tot = 0.0
    if dmin == 0.0:
        for j in range(c):
            r[j] = 1.0 if r[j] == 0.0 else 0.0
            w[j] = r[j]
            tot += w[j]
    else:
        for j in range(c):
            r[j] = dmin / r[j]
            w[j] = _power(r[j], e)
            tot += w[j]
    return dmin, tot


@njit(cache=True)
def memberships_kernel(X, Vt, m):  # pragma: no cover - numba
    n = X.shape[0]
    c = Vt.shape[1]
    e = 1.0 / (m - 1.0)
    U = np.empty((n, c))
    r = np.empty(c)
    w = np.empty(c)
    for i in range(n):
        _, tot = _membership_row(X, i, Vt, e, r, w)
        for j in range(c):
            U[i, j] = w[j] / tot
    return U


@njit(cache=True)
def _fcm_pass(X, Vt, m, e, U, numT, den, first):  # pragma: no cover - numba
    """One sweep: memberships for the centres ``Vt`` into ``U`` and the sums of the next
    centres (``numT / den``). Returns the objective ``sum u^m d^2`` of (``U``, ``Vt``) and the
    largest change of a membership (0 on the first sweep).

    ``u_j ** m = w_j * r_j / sum(w) ** m`` (as ``w ** m = r ** (m / (m - 1)) = w r``), and the
    record's share of the objective is ``dmin * sum(w) ** (1 - m)``: one power per entry.
    """
    n, p = X.shape
    c = Vt.shape[1]
    r = np.empty(c)
    w = np.empty(c)
    um = np.empty(c)
    numT[:] = 0.0
    den[:] = 0.0
    objective = 0.0
    delta = 0.0
    for i in range(n):
        dmin, tot = _membership_row(X, i, Vt, e, r, w)
        scale = tot ** (-m)
        objective += dmin * tot * scale
        for j in range(c):
            um[j] = w[j] * r[j] * scale
            u = w[j] / tot
            if not first:
                change = abs(u - U[i, j])
                if change > delta:
                    delta = change
            U[i, j] = u
            den[j] += um[j]
        for t in range(p):
            xt = X[i, t]
            row = numT[t]
            for j in range(c):
                row[j] += um[j] * xt
    return objective, delta


@njit(cache=True)
def fcm_kernel(X, V0, m, max_iter, tol):  # pragma: no cover - numba
    """Bezdek's alternating optimization from the centres ``V0``; see :func:`fuzzy_c_means`."""
    n, p = X.shape
    c = V0.shape[0]
    Vt = np.empty((p, c))
    for j in range(c):
        for t in range(p):
            Vt[t, j] = V0[j, t]
    U = np.empty((n, c))
    numT = np.empty((p, c))
    den = np.empty(c)
    e = 1.0 / (m - 1.0)
    objective, _ = _fcm_pass(X, Vt, m, e, U, numT, den, True)
    it = 0
    while it < max_iter:
        it += 1
        for j in range(c):
            if den[j] > 0.0:  # a centre no record belongs to (all u^m underflow) stays put
                for t in range(p):
                    Vt[t, j] = numT[t, j] / den[j]
        objective, delta = _fcm_pass(X, Vt, m, e, U, numT, den, False)
        if delta < tol:
            break
    V = np.empty((c, p))
    for j in range(c):
        for t in range(p):
            V[j, t] = Vt[t, j]
    return V, U, it, objective
