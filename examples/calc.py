def total(values):
    result = 0
    for value in values:
        result = result + value
    return result


def mean(values):
    if not values:
        return 0.0
    return total(values) / len(values)


def spread(values):
    return max(values) - min(values)


if __name__ == "__main__":
    data = [3, 1, 4, 1, 5, 9, 2, 6]
    print("total", total(data))
    print("mean", mean(data))
    print("spread", spread(data))
