import re

# TODO: slugify
