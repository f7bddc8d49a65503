import logging

from mailcap import getcaps, listmailcapfiles

logger = logging.getLogger(__name__)


def show(caps):
    logger.info("Mailcap files:")
    for fn in listmailcapfiles(): logger.info("\t" + fn)
    logger.info("")
    if not caps: caps = getcaps()
    logger.info("Mailcap entries:")
    logger.info("")
    ckeys = sorted(caps)
    for type in ckeys:
        logger.info(type)
        entries = caps[type]
        for e in entries:
            keys = sorted(e)
            for k in keys:
                logger.info("  %-15s %s", k, e[k])
            logger.info("")
