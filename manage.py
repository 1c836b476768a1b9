#!/usr/bin/env python
"""Django's command-line utility for Slowave."""

import os
import sys


def main() -> None:
    if sys.argv[1:2] == ["mcp_serve"] and not {"-h", "--help"} & set(sys.argv):
        # Before Django: the cycle collector waits until the imports are done
        # (mcp_bridge.collector), and the client's handshake is answered while they run.
        from mcp_bridge import collector

        collector.pause()
        from mcp_bridge.greeter import greet_early

        greet_early()
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "slowave_site.settings")
    from django.core.management import execute_from_command_line

    from slowave_site.env import settings_or_exit

    settings_or_exit()  # a malformed SLOWAVE_* variable: one line on stderr, exit 2
    execute_from_command_line(sys.argv)


if __name__ == "__main__":
    main()
