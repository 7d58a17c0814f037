"""Pure-Python stand-in for dftrace._usdt: every probe is a no-op and
enabled() is always False, so annotated code runs unchanged (untraced)."""


def region_begin(cat, name, count=0):
    pass


def region_end(cat, name, count=0):
    pass


def meta(cat, name, is_end):
    pass


def ctx_int(key, v):
    pass


def ctx_str(key, v):
    pass


def ctx_clear(key=None):
    pass


def arg_int(key, v):
    pass


def arg_str(key, v):
    pass


def enabled():
    return False


def ready():
    return False
