"""One stock HTTP client of the plain-http suite (plain-http.ts), in its own process: Python's standard
urllib.request (a new connection per request, as it does), open loop from a pool of 256 threads —
`<url> <topic> open <rate> <seconds>`. Prints `RESULT {ok, busy, other, errors, okMs, busyMs, lagMs, cpuSeconds,
seconds}` as the fetch client does (lagMs: how late a thread picked each send up after its scheduled start)."""
import base64
import json
import resource
import sys
import threading
import time
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor

url, topic, mode, rate, seconds = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4]), float(sys.argv[5])
if mode != "open":
    sys.exit("the urllib client runs open loop only")
body = json.dumps({"topic": topic, "messages": [{"body": base64.b64encode(b"a" * 1024).decode()}]}).encode()
counts = {"ok": 0, "busy": 0, "other": 0, "errors": 0}
ok_ms, busy_ms, lag_ms = [], [], []
lock = threading.Lock()


def send(due):
    with lock:
        lag_ms.append((time.monotonic() - due) * 1000)
    request = urllib.request.Request(url + "/send", data=body, headers={"content-type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=30) as answer:
            answer.read()
            with lock:
                counts["ok"] += 1
                ok_ms.append((time.monotonic() - due) * 1000)
    except urllib.error.HTTPError as err:
        code = json.loads(err.read() or b"{}").get("code")
        with lock:
            if code == "SYSTEM_BUSY":
                counts["busy"] += 1
                busy_ms.append((time.monotonic() - due) * 1000)
            else:
                counts["other"] += 1
    except Exception:
        with lock:
            counts["errors"] += 1


start = time.monotonic()
with ThreadPoolExecutor(max_workers=256) as pool:
    for i in range(int(rate * seconds)):
        due = start + i / rate
        wait = due - time.monotonic()
        if wait > 0:
            time.sleep(wait)
        pool.submit(send, due)
elapsed = time.monotonic() - start
usage = resource.getrusage(resource.RUSAGE_SELF)
for samples in (ok_ms, busy_ms, lag_ms):
    samples.sort()
result = {**counts, "okMs": ok_ms, "busyMs": busy_ms, "lagMs": lag_ms, "seconds": elapsed}
print("RESULT " + json.dumps({**result, "cpuSeconds": usage.ru_utime + usage.ru_stime}))
