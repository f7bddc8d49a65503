class StatisticsError(ValueError):
    pass


def _exclusive_cut_points(data, n):
    """The n - 1 cut points of sorted *data* by the 'exclusive' method."""
    ld = len(data)
    m = ld + 1
    result = []
    for i in range(1, n):
        j = i * m // n                               # rescale i to m/n
        j = 1 if j < 1 else ld-1 if j > ld-1 else j  # clamp to 1 .. ld-1
        delta = i*m - j*n                            # exact integer math
        interpolated = (data[j - 1] * (n - delta) + data[j] * delta) / n
        result.append(interpolated)
    return result


def quantiles(data, *, n=4, method='exclusive'):
    """Divide *data* into *n* continuous intervals with equal probability.

    Returns a list of (n - 1) cut points separating the intervals.
    """
    if n < 1:
        raise StatisticsError('n must be at least 1')
    data = sorted(data)
    ld = len(data)
    if ld < 2:
        raise StatisticsError('must have at least two data points')
    if method == 'inclusive':
        m = ld - 1
        result = []
        for i in range(1, n):
            j, delta = divmod(i * m, n)
            interpolated = (data[j] * (n - delta) + data[j + 1] * delta) / n
            result.append(interpolated)
        return result
    if method == 'exclusive':
        return _exclusive_cut_points(data, n)
    raise ValueError(f'Unknown method: {method!r}')
