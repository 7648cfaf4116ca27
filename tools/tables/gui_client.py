"""`dodgem gui` driven over its HTTP API, for the scripts of this
directory: start it with a table directory, call its API, poll its state.
"""
import json
import re
import subprocess
import time
import urllib.request


class Gui:
    """A `dodgem gui` process with `tables` loaded (`TablebasePath`), on a
    port of its own; `timeout` bounds each call, in seconds."""

    def __init__(self, exe, tables, timeout=600):
        self.process = subprocess.Popen(
            [exe, "gui", "--port", "0", "--option", f"TablebasePath={tables}"],
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        port = re.search(r"127\.0\.0\.1:(\d+)", self.process.stdout.readline()).group(1)
        self.base = f"http://127.0.0.1:{port}"
        self.timeout = timeout

    def call(self, path, body=None):
        """GET `path`, or POST `body` (as JSON) to it; the reply's JSON."""
        request = urllib.request.Request(
            self.base + path, data=None if body is None else json.dumps(body).encode(),
            headers={"Content-Type": "application/json"},
            method="GET" if body is None else "POST")
        with urllib.request.urlopen(request, timeout=self.timeout) as reply:
            return json.load(reply)

    def wait(self, predicate, limit, poll):
        """The first state (`/api/state`, every `poll` seconds) that
        `predicate` accepts; exits after `limit` seconds without one."""
        started = time.time()
        while True:
            state = self.call("/api/state")
            if predicate(state):
                return state
            if time.time() - started > limit:
                raise SystemExit(f"timeout: {json.dumps(state)[:2000]}")
            time.sleep(poll)

    def close(self):
        self.process.terminate()
