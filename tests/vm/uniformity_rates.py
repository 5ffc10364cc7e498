#!/usr/bin/env python3
"""False-failure rate and power of the VM tier's uniformity check.

  tests/vm/uniformity_rates.py [--picks N]

The check (uniform_over in tests/vm/cases/seeds.sh) takes the fork picks
counted on K tied CPUs and passes when at least N of them landed there, the
chi-square statistic is below D times its p = 0.001 critical value (D = 1,
or the dispersion allowed for overdispersed counts, --dispersion) and the
busiest tied CPU has at most twice the picks of the idlest. With D > 1 the
false-failure rate printed is that of uniform draws; for counts whose
chi-square is D times a uniform one's it is that of D = 1. This prints, for K = 3
(seed000_spread) and K = 4 (flat_seed000_default_config), the probability
that it fails when every pick is uniform (the false-failure rate) and that
it passes when the picks are biased (1 - power), for the biases that matter:
the mildest `first` concentration seen ([0 289 0 130 0 15 0 5] before the
fix, shares 0.66 0.30 0.03 0.01), one tied CPU taking twice the share of
each other one, and 1.5 times. Exact sums over every outcome for K = 3;
for K = 4 the uniform case is exact too (the sum runs over the outcomes
within 5 standard deviations of the mean and counts all the others as
failures), the biased ones are 4,000 draws (fixed seed, so the figures
repeat; none passing means power >= 99.92% with 95% confidence).
"""
import argparse
import bisect
import math
import random

CRITICAL = {2: 13.816, 3: 16.266}  # chi-square, p = 0.001, by degrees of freedom
MAX_OVER_MIN = 2
DISPERSION = 1.0  # the bound is DISPERSION x the critical value (--dispersion)


def passes(counts, min_picks):
    n, k = sum(counts), len(counts)
    if n < min_picks or min(counts) == 0:
        return False
    e = n / k
    chi2 = sum((c - e) ** 2 / e for c in counts)
    return (chi2 < DISPERSION * CRITICAL[k - 1]
            and max(counts) <= MAX_OVER_MIN * min(counts))


def log_multinomial(counts, log_p):
    n = sum(counts)
    return (math.lgamma(n + 1) - sum(math.lgamma(c + 1) for c in counts)
            + sum(c * lp for c, lp in zip(counts, log_p)))


def exact_failure(n, shares, min_picks, width=None):
    """P(check fails) summed over outcomes; with width, only over outcomes
    whose first K-1 counts lie within width of their mean (the remainder
    is returned as the bound on what was left out)."""
    k = len(shares)
    log_p = [math.log(s) for s in shares]
    total = 0.0
    covered = 0.0

    def ranges(i, left):
        if width is None:
            return range(left + 1)
        mean = n * shares[i]
        return range(max(0, int(mean - width)), min(left, int(mean + width)) + 1)

    def walk(prefix, left):
        nonlocal total, covered
        if len(prefix) == k - 1:
            counts = prefix + [left]
            p = math.exp(log_multinomial(counts, log_p))
            covered += p
            if not passes(counts, min_picks):
                total += p
            return
        for c in ranges(len(prefix), left):
            walk(prefix + [c], left - c)

    walk([], n)
    return total + (1.0 - covered)


def drawn_failure(n, shares, min_picks, trials, seed=1):
    rng = random.Random(seed)
    cumulative = []
    acc = 0.0
    for s in shares:
        acc += s
        cumulative.append(acc)
    failed = 0
    for _ in range(trials):
        counts = [0] * len(shares)
        for _ in range(n):
            counts[min(bisect.bisect(cumulative, rng.random() * acc), len(shares) - 1)] += 1
        failed += not passes(counts, min_picks)
    return failed / trials


def biases(k):
    mild_first = [0.66, 0.30, 0.03, 0.01][:k]
    twice = [2] + [1] * (k - 1)
    half_again = [1.5] + [1] * (k - 1)
    return {
        "mildest first seen": mild_first,
        "one CPU 2x": twice,
        "one CPU 1.5x": half_again,
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--picks", type=int, default=810,
                        help="picks on the tied CPUs (the check's minimum)")
    parser.add_argument("--dispersion", type=float, default=1.0,
                        help="the bound as a multiple of the critical value")
    args = parser.parse_args()
    global DISPERSION
    DISPERSION = args.dispersion
    n = args.picks
    for k in (3, 4):
        width = None if k == 3 else 5 * math.sqrt(n / k)
        ffr = exact_failure(n, [1 / k] * k, n, width)
        print(f"K={k} n={n}: false-failure rate {ffr * 100:.3f}%")
        for name, weights in biases(k).items():
            shares = [w / sum(weights) for w in weights]
            if k == 3:
                fail = exact_failure(n, shares, n)
            else:
                fail = drawn_failure(n, shares, n, 4000)
            how = "exact" if k == 3 else "of 4000 draws"
            print(f"K={k} n={n}: power against {name}: {fail * 100:.3f}% ({how})")


if __name__ == "__main__":
    main()
