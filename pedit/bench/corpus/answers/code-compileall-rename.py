import os


def _walk_dir(directory, maxlevels, quiet=0):
    if quiet < 2 and isinstance(directory, os.PathLike):
        directory = os.fspath(directory)
    if not quiet:
        print('Listing {!r}...'.format(directory))
    try:
        names = os.listdir(directory)
    except OSError:
        if quiet < 2:
            print("Can't list {!r}".format(directory))
        names = []
    names.sort()
    for name in names:
        if name == '__pycache__':
            continue
        fullname = os.path.join(directory, name)
        if not os.path.isdir(fullname):
            yield fullname
        elif (maxlevels > 0 and name != os.curdir and name != os.pardir and
              os.path.isdir(fullname) and not os.path.islink(fullname)):
            yield from _walk_dir(fullname, maxlevels=maxlevels - 1,
                                 quiet=quiet)
