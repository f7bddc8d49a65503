import logging

from sysconfig import (
    get_config_vars, get_default_scheme, get_paths, get_platform, get_python_version,
)

logger = logging.getLogger(__name__)


def _print_dict(title, data):
    for index, (key, value) in enumerate(sorted(data.items())):
        if index == 0:
            logger.info(f'{title}: ')
        logger.info(f'\t{key} = "{value}"')


def _main():
    """Display all information sysconfig detains."""
    logger.info(f'Platform: "{get_platform()}"')
    logger.info(f'Python version: "{get_python_version()}"')
    logger.info(f'Current installation scheme: "{get_default_scheme()}"')
    logger.info('')
    _print_dict('Paths', get_paths())
    logger.info('')
    _print_dict('Variables', get_config_vars())
