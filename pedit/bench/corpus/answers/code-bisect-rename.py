"""Bisection algorithms."""


def bisect_right(a, x, low=0, high=None, *, key=None):
    """Return the index where to insert item x in list a, assuming a is sorted.

    The return value i is such that all e in a[:i] have e <= x, and all e in
    a[i:] have e > x.  So if x already appears in the list, a.insert(i, x) will
    insert just after the rightmost x already there.

    Optional args low (default 0) and high (default len(a)) bound the
    slice of a to be searched.
    """

    if low < 0:
        raise ValueError('low must be non-negative')
    if high is None:
        high = len(a)
    # Note, the comparison uses "<" to match the
    # __lt__() logic in list.sort() and in heapq.
    if key is None:
        while low < high:
            mid = (low + high) // 2
            if x < a[mid]:
                high = mid
            else:
                low = mid + 1
    else:
        while low < high:
            mid = (low + high) // 2
            if x < key(a[mid]):
                high = mid
            else:
                low = mid + 1
    return low
