"""The switch for prometheus-client's multiprocess mode.

prometheus-client decides, once, when it is first imported, whether metric values live in
memory or in memory-mapped files under this directory. So the supervisor sets the variable
before anything imports :mod:`prometheus_client` (which is why the CLI and the supervisor do not
import :mod:`hbserver.metrics` at module level), and every forked worker inherits the choice.
"""

MULTIPROC_ENV = "PROMETHEUS_MULTIPROC_DIR"
