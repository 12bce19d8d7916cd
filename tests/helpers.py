"""Shared helpers for the tests."""

import numpy as np


def central_difference(f, x, eps):
    """Central finite difference of a scalar function of a scalar."""
    return (f(x + eps) - f(x - eps)) / (2 * eps)


def crossing_period(t, angle):
    """Mean period from downward zero crossings (linear interpolation)."""
    t, a = np.asarray(t), np.asarray(angle)
    k = np.where((a[:-1] > 0) & (a[1:] <= 0))[0]
    tc = t[k] - a[k] * (t[k + 1] - t[k]) / (a[k + 1] - a[k])
    return float(np.mean(np.diff(tc)))


def rotation(axis, angle):
    """Rotation matrix about a unit axis (Rodrigues)."""
    axis = np.asarray(axis, float) / np.linalg.norm(axis)
    K = np.array([[0, -axis[2], axis[1]], [axis[2], 0, -axis[0]], [-axis[1], axis[0], 0]])
    return np.eye(3) + np.sin(angle) * K + (1 - np.cos(angle)) * K @ K
