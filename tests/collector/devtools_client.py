"""A headless Chromium driven over the DevTools protocol (Debian's chromium
and python3-websocket): start it, open its page target, send commands and
keep the events. Fails loudly when Chromium cannot start."""
import json
import os
import shutil
import subprocess
import tempfile
import time
import urllib.request

import websocket


class BrowserError(Exception):
    pass


class Browser:
    def __init__(self, binary, log_path, width=1280, height=900):
        self.profile = tempfile.mkdtemp(prefix="blur-chromium-")
        self.log_path = log_path
        self.log = open(log_path, "wb")
        command = [binary, "--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run",
                   "--hide-scrollbars", "--remote-debugging-port=0",
                   f"--user-data-dir={self.profile}", f"--window-size={width},{height}",
                   "about:blank"]
        try:
            self.process = subprocess.Popen(command, stdout=self.log, stderr=subprocess.STDOUT)
        except OSError as error:
            raise BrowserError(f"chromium cannot start: {' '.join(command)}: {error}")
        self.socket = websocket.create_connection(self._page_socket_url(), timeout=30,
                                                  suppress_origin=True)
        self.next_id = 0
        self.events = []
        self.event_hooks = {}  # method -> function(params), run as events arrive
        self.send("Emulation.setDeviceMetricsOverride",
                  {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False})

    def _log_tail(self):
        self.log.flush()
        with open(self.log_path, "rb") as f:
            return f.read()[-3000:].decode(errors="replace")

    def _page_socket_url(self):
        port_file = os.path.join(self.profile, "DevToolsActivePort")
        deadline = time.monotonic() + 30
        while not os.path.exists(port_file):
            if self.process.poll() is not None:
                raise BrowserError(f"chromium exited with {self.process.returncode} before "
                                   f"listening for DevTools:\n{self._log_tail()}")
            if time.monotonic() > deadline:
                raise BrowserError(f"chromium did not open DevTools in 30 s:\n{self._log_tail()}")
            time.sleep(0.1)
        time.sleep(0.1)  # the file is written before its second line; the first is enough
        port = int(open(port_file).read().split()[0])
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=10) as answer:
            targets = json.load(answer)
        pages = [t for t in targets if t.get("type") == "page"]
        if not pages:
            raise BrowserError(f"chromium has no page target: {targets}")
        return pages[0]["webSocketDebuggerUrl"]

    def _receive(self):
        message = json.loads(self.socket.recv())
        if "method" in message:
            self.events.append(message)
            hook = self.event_hooks.get(message["method"])
            if hook:
                hook(message["params"])
        return message

    def post(self, method, params=None):
        """Sends a command without waiting for its answer."""
        self.next_id += 1
        self.socket.send(json.dumps({"id": self.next_id, "method": method,
                                     "params": params or {}}))
        return self.next_id

    def send(self, method, params=None):
        """Sends a command and returns its result."""
        wanted = self.post(method, params)
        while True:
            message = self._receive()
            if message.get("id") == wanted:
                if "error" in message:
                    raise BrowserError(f"{method}: {message['error']}")
                return message.get("result", {})

    def evaluate(self, expression):
        result = self.send("Runtime.evaluate", {"expression": expression, "returnByValue": True})
        if "exceptionDetails" in result:
            raise BrowserError(f"{expression}: {result['exceptionDetails']}")
        return result["result"].get("value")

    def wait_for(self, expression, timeout=20):
        """Polls a page expression until it is truthy; returns its value."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            value = self.evaluate(expression)
            if value:
                return value
            time.sleep(0.1)
        raise BrowserError(f"timed out waiting for {expression}")

    def events_named(self, method):
        return [e["params"] for e in self.events if e["method"] == method]

    def close(self):
        try:
            self.socket.close()
        finally:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
            self.log.close()
            shutil.rmtree(self.profile, ignore_errors=True)
