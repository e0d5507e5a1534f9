#!/usr/bin/python3
"""POST /v1/enroll from any loopback source address, for enrollment_attacks_test.sh.

A device here is a nonce and a secret (the SHA-256 of a seed text); its
device key is the SDK's, HMAC-SHA256(secret, "blur.enroll.v1" || nonce LE64)
(sdk/include/blur/enrollment.h). Linux lets a client bind any 127.x.y.z
source address, so one machine plays many sources.

  enrollment_client.py enroll PORT SOURCE NONCE_HEX SEED  -> "STATUS TOKEN-or-message"
  enrollment_client.py drain PORT SOURCES SECONDS FIRST_NONCE [SOURCE:NONCE_HEX:SEED ...]
      every source (comma-separated) enrolls fresh nonces (FIRST_NONCE and
      up), the sources at once (a thread each, keep-alive, one request after
      the other). Once they have met 300 refusals (or after SECONDS), while
      they go on, each SOURCE:NONCE_HEX:SEED enrolls once (an honest
      device); then the sources stop:
      -> JSON {"seconds": s, "sources": {source: {"200": n, "429": m, ...}},
               "honest": [{"source", "nonce", "status", "answer", "during"}]}

The secret is $BLUR_ENROLLMENT_SECRET. With $BLUR_ENROLLMENT_LEGACY_BODY=1
the body is the one before device keys ({"device_nonce"} alone), to measure
a collector from before them.
"""
import hashlib
import hmac
import http.client
import json
import os
import sys
import threading
import time


def body(nonce, seed):
    if os.environ.get("BLUR_ENROLLMENT_LEGACY_BODY") == "1":
        return json.dumps({"device_nonce": f"{nonce:016x}"})
    secret = hashlib.sha256(seed.encode()).digest()
    key = hmac.new(secret, b"blur.enroll.v1" + nonce.to_bytes(8, "little"), hashlib.sha256)
    return json.dumps({"device_nonce": f"{nonce:016x}", "device_key": key.hexdigest()})


class Enroller:
    def __init__(self, port, source):
        self.port, self.source, self.connection = port, source, None

    def enroll(self, nonce, seed):
        headers = {"Content-Type": "application/json",
                   "Authorization": "Bearer " + os.environ["BLUR_ENROLLMENT_SECRET"]}
        for attempt in range(2):  # once more on a connection the server closed
            if self.connection is None:
                self.connection = http.client.HTTPConnection(
                    "127.0.0.1", self.port, timeout=30, source_address=(self.source, 0))
            try:
                self.connection.request("POST", "/v1/enroll", body=body(nonce, seed),
                                        headers=headers)
                answer = self.connection.getresponse()
                text = answer.read().decode()
                if answer.getheader("Connection", "").lower() == "close":
                    self.connection.close()
                    self.connection = None
                return answer.status, text
            except (ConnectionError, http.client.HTTPException):
                self.connection.close()
                self.connection = None
                if attempt == 1:
                    raise
        return 0, ""


def main():
    command, port = sys.argv[1], int(sys.argv[2])
    if command == "enroll":
        source, nonce, seed = sys.argv[3], int(sys.argv[4], 16), sys.argv[5]
        status, text = Enroller(port, source).enroll(nonce, seed)
        answer = json.loads(text) if text.startswith("{") else {}
        print(status, answer.get("token") or answer.get("error") or text)
    elif command == "drain":
        sources = sys.argv[3].split(",")
        seconds, first = float(sys.argv[4]), int(sys.argv[5], 16)
        counts = {source: {} for source in sources}
        end = time.monotonic() + seconds
        refused = threading.Semaphore(0)  # released per refusal
        stop = threading.Event()

        def run(index, source):
            enroller = Enroller(port, source)
            nonce = first + (index << 32)
            while not stop.is_set():
                status, _ = enroller.enroll(nonce, f"fake {nonce}")
                counts[source][str(status)] = counts[source].get(str(status), 0) + 1
                if status == 429:
                    refused.release()
                nonce += 1

        threads = [threading.Thread(target=run, args=(i, s)) for i, s in enumerate(sources)]
        start = time.monotonic()
        for t in threads:
            t.start()
        honest = []
        met = all(refused.acquire(timeout=max(0.0, end - time.monotonic())) for _ in range(300))
        for spec in sys.argv[6:]:
            source, nonce, seed = spec.split(":")
            status, text = Enroller(port, source).enroll(int(nonce, 16), seed)
            honest.append({"source": source, "nonce": nonce, "status": status, "answer": text,
                           "during": met})
        stop.set()
        for t in threads:
            t.join()
        print(json.dumps({"seconds": round(time.monotonic() - start, 2), "sources": counts,
                          "honest": honest}))
    else:
        sys.exit(f"unknown command {command}")


if __name__ == "__main__":
    main()
