"""Wilson's 95 % score interval, from the textbook formula (math only): the reference the tests
hold hucprof's intervals (daemon/core/cost/share_interval.h, docs/metrics.md) against."""

Z95 = 1.959963984540054


def wilson(k, n, d=1.5):
    """Wilson's 95 % interval (fractions) of k/d in n/d: k of n at design effect d."""
    k, n = k / d, n / d
    p = k / n
    z2 = Z95 * Z95
    centre = (p + z2 / (2 * n)) / (1 + z2 / n)
    half = Z95 * ((p * (1 - p) / n + z2 / (4 * n * n)) ** 0.5) / (1 + z2 / n)
    return (0.0 if k == 0 else max(0.0, centre - half), 1.0 if k == n else min(1.0, centre + half))
