#!/usr/bin/python3
"""collector/api/openapi.yaml against the collector that serves it.

  openapi_routes_test.py BLUR_COLLECTOR BLUR_DEVICE_SIM SPEC

1. The routes: `serve --print-routes` (authentication on, the default) lists
   every METHOD PATH the server registers; the spec's paths and methods
   must be exactly those. A route missing from the spec, or one in it that
   the server does not serve, fails, naming it.
2. Every operation, called for real on a collector with a small fleet's
   reports: without credentials, its answer's status is one the spec lists
   for it (401 for every route that needs a token); with the right token,
   every GET and the admin POSTs that need no body answer a listed status,
   and each JSON answer validates against the spec's schema for that status
   (JSON Schema 2020-12, Debian's python3-jsonschema).
3. GET /openapi.yaml answers the file's bytes (the binary holds this spec),
   as application/yaml, and a 304 for its own ETag.
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

import yaml

try:
    import jsonschema
except ImportError:
    sys.exit("FAIL: python3-jsonschema is missing (toolchains/setup.sh installs it)")

METHODS = ("get", "put", "post", "delete", "patch", "head", "options")


def fail(message):
    print("FAIL: " + message, file=sys.stderr)
    sys.exit(1)


def spec_routes(spec):
    return {(method.upper(), path) for path, item in spec["paths"].items()
            for method in item if method in METHODS}


def served_routes(collector, work):
    out = subprocess.run(
        [collector, "serve", "--db", os.path.join(work, "routes.db"), "--metric", "1:rr:1",
         "--address", "127.0.0.1", "--port", "0", "--print-routes"],
        capture_output=True, text=True, timeout=60)
    if out.returncode != 0:
        fail("serve --print-routes failed:\n" + out.stdout + out.stderr)
    routes = set()
    for line in out.stdout.splitlines():
        match = re.fullmatch(r"([A-Z]+) (/\S*)", line)
        if match:
            routes.add((match.group(1), match.group(2)))
    if not routes:
        fail("serve --print-routes listed no route:\n" + out.stdout)
    return routes


def start_collector(collector, work):
    log_path = os.path.join(work, "server.log")
    log = open(log_path, "w")
    process = subprocess.Popen(
        [collector, "serve", "--db", os.path.join(work, "blur.db"), "--metric", "1:rr:1",
         "--metric", "2:olh:1:16", "--address", "127.0.0.1", "--port", "0",
         "--enrollments-per-address", "100000", "--log-requests", "false"],
        stdout=log, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        text = open(log_path).read()
        match = re.search(r"listening on http://127\.0\.0\.1:(\d+)", text)
        if match:
            return process, int(match.group(1))
        if process.poll() is not None:
            break
        time.sleep(0.1)
    process.kill()
    fail("the collector did not start:\n" + open(log_path).read())


def request(port, method, path, token=None, body=None, content_type=None, headers=None):
    req = urllib.request.Request(f"http://127.0.0.1:{port}{path}", data=body, method=method)
    if token:
        req.add_header("Authorization", "Bearer " + token)
    if content_type:
        req.add_header("Content-Type", content_type)
    for name, value in (headers or {}).items():
        req.add_header(name, value)
    try:
        with urllib.request.urlopen(req, timeout=30) as answer:
            return answer.status, dict(answer.headers), answer.read()
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers), error.read()


def resolve(spec, node):
    while isinstance(node, dict) and "$ref" in node:
        target = spec
        for part in node["$ref"].lstrip("#/").split("/"):
            target = target[part.replace("~1", "/").replace("~0", "~")]
        node = target
    return node


def check_answer(spec, operation, label, status, headers, body):
    responses = operation["responses"]
    if str(status) not in responses:
        fail(f"{label} answered {status}, which the spec does not list ({sorted(responses)}): "
             f"{body[:300]!r}")
    response = resolve(spec, responses[str(status)])
    content = response.get("content", {})
    if "application/json" in content and body:
        schema = dict(resolve(spec, content["application/json"]["schema"]))
        # $refs inside resolve against the whole document.
        schema["components"] = spec["components"]
        try:
            jsonschema.Draft202012Validator(schema).validate(json.loads(body))
        except jsonschema.ValidationError as error:
            fail(f"{label} answered {status} with a body the spec's schema refuses: "
                 f"{error.message} at {list(error.absolute_path)}\n{body[:500]!r}")
    if status == 401 and "WWW-Authenticate" not in headers:
        fail(f"{label}: a 401 without WWW-Authenticate")


def main():
    collector, device_sim, spec_path = sys.argv[1:4]
    spec_bytes = open(spec_path, "rb").read()
    spec = yaml.safe_load(spec_bytes)
    if not str(spec.get("openapi", "")).startswith("3.1."):
        fail(f"{spec_path} is not OpenAPI 3.1 (openapi: {spec.get('openapi')})")
    work = tempfile.mkdtemp()
    process = None
    try:
        documented = spec_routes(spec)
        served = served_routes(collector, work)
        missing = sorted(served - documented)
        extra = sorted(documented - served)
        for method, path in missing:
            print(f"served but not in {os.path.basename(spec_path)}: {method} {path}",
                  file=sys.stderr)
        for method, path in extra:
            print(f"in {os.path.basename(spec_path)} but not served: {method} {path}",
                  file=sys.stderr)
        if missing or extra:
            fail("the spec and the server's routes differ (above)")
        print(f"routes: the {len(served)} the server registers are the spec's")

        process, port = start_collector(collector, work)
        auth_dir = os.path.join(work, "blur.db.auth")
        tokens = {name: open(os.path.join(auth_dir, name)).read().strip()
                  for name in ("reader-token", "admin-token", "enrollment-secret")}
        env = dict(os.environ, BLUR_ENROLLMENT_SECRET=tokens["enrollment-secret"])
        subprocess.run([device_sim, "fleet", "--collector", f"http://127.0.0.1:{port}",
                        "--devices", "40", "--metric", "1", "--epsilon", "1", "--seed", "5"],
                       env=env, check=True, stdout=subprocess.DEVNULL, timeout=120)

        path_values = {"id": "1", "name": "dashboard.js"}
        calls = 0
        for method, path in sorted(documented):
            operation = spec["paths"][path][method.lower()]
            target = re.sub(r"\{(\w+)\}", lambda m: path_values[m.group(1)], path)
            label = f"{method} {target}"
            security = operation.get("security", spec.get("security", []))
            content_type = None
            if "requestBody" in operation:
                content_type = next(iter(resolve(spec, operation["requestBody"])["content"]))
            body = b"" if method == "POST" else None
            # Without credentials.
            status, headers, answer = request(port, method, target, body=body,
                                              content_type=content_type)
            check_answer(spec, operation, label + " (no credentials)", status, headers, answer)
            needs_token = security and {} not in security
            if needs_token and status != 401:
                fail(f"{label} without credentials answered {status}, not 401")
            calls += 1
            # With the right token: reads, and the admin POSTs without a body.
            if needs_token:
                schemes = {name for requirement in security for name in requirement}
                token = None
                if "readerToken" in schemes:
                    token = tokens["reader-token"]
                elif "adminToken" in schemes:
                    token = tokens["admin-token"]
                if token is None or (method == "POST" and content_type is not None):
                    continue
                status, headers, answer = request(port, method, target, token=token, body=body)
                check_answer(spec, operation, label, status, headers, answer)
                if status != 200:
                    fail(f"{label} with its token answered {status}: {answer[:300]!r}")
                calls += 1
        # The answers the reads give for bad input are listed too.
        for target, want in (("/v1/metrics/9/estimate", 404), ("/v1/metrics/1/estimate?from=x", 400),
                             ("/v1/metrics/1/series?bucket=week", 400)):
            path = "/v1/metrics/{id}/" + target.split("/")[4].split("?")[0]
            status, headers, answer = request(port, "GET", target, token=tokens["reader-token"])
            check_answer(spec, spec["paths"][path]["get"], "GET " + target, status, headers, answer)
            if status != want:
                fail(f"GET {target}: {status}, not {want}")
            calls += 1
        print(f"answers: {calls} real calls, each status listed and each JSON body valid")
        status, headers, body = request(port, "GET", "/openapi.yaml")
        if status != 200 or body != spec_bytes:
            fail(f"GET /openapi.yaml: {status}, {len(body)} bytes, not the file's {len(spec_bytes)}")
        if not headers.get("Content-Type", "").startswith("application/yaml"):
            fail("GET /openapi.yaml: Content-Type " + headers.get("Content-Type", ""))
        status, _, _ = request(port, "GET", "/openapi.yaml", headers={"If-None-Match": headers["ETag"]})
        if status != 304:
            fail(f"GET /openapi.yaml with its ETag: {status}, not 304")
        print("GET /openapi.yaml: the file's bytes, 304 for its ETag")
        process.terminate()
        if process.wait(timeout=60) != 0:  # e.g. a leak under the sanitizers
            fail(f"the collector exited {process.returncode} after SIGTERM:\n" +
                 open(os.path.join(work, "server.log")).read()[-3000:])
        process = None

    finally:
        if process is not None:
            process.terminate()
            process.wait(timeout=30)
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
