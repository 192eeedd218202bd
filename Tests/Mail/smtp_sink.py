#!/usr/bin/env python3
"""A real SMTP server on loopback for the tests (aiosmtpd), keeping every message it receives.

Usage: smtp_sink.py DIRECTORY. Binds 127.0.0.1 on a free port, prints the port on the first line
of standard output, writes each received message to DIRECTORY/<n>.eml (the raw RFC 5322 bytes,
written to a temporary name and renamed, so a reader never sees half a message), and stops when
standard input closes. `scripts/bootstrap --test` installs aiosmtpd into .build/smtp-venv.
"""

import os
import socket
import sys
import threading

from aiosmtpd.controller import Controller


class Keep:
    def __init__(self, directory):
        self.directory = directory
        self.count = 0
        self.lock = threading.Lock()

    async def handle_DATA(self, server, session, envelope):
        with self.lock:
            self.count += 1
            name = os.path.join(self.directory, f"{self.count:04d}.eml")
        with open(name + ".tmp", "wb") as f:
            f.write(f"X-Envelope-From: {envelope.mail_from}\r\nX-Envelope-To: {','.join(envelope.rcpt_tos)}\r\n".encode())
            f.write(envelope.original_content or envelope.content)
        os.rename(name + ".tmp", name)
        return "250 Message accepted for delivery"


def main():
    directory = sys.argv[1]
    os.makedirs(directory, exist_ok=True)
    probe = socket.socket()
    probe.bind(("127.0.0.1", 0))
    port = probe.getsockname()[1]
    probe.close()
    controller = Controller(Keep(directory), hostname="127.0.0.1", port=port)
    controller.start()
    print(port, flush=True)
    sys.stdin.read()
    controller.stop()


if __name__ == "__main__":
    main()
