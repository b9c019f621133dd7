#!/usr/bin/python3
"""emuctl.py — talk to the SageMaker emulator's control API from shell tests.

Usage: emuctl.py PORT METHOD PATH [JSON-BODY] [--get KEY.PATH]

Prints the JSON answer, or with --get the value at a dotted path (e.g.
--get operations.CreateTrainingJob).  Exits non-zero on an HTTP error.
Standard library only; run it with /usr/bin/python3.
"""
import json
import sys
import urllib.error
import urllib.request


def main(argv):
    args = [a for a in argv if not a.startswith("--get")]
    get = None
    for i, a in enumerate(argv):
        if a == "--get":
            get = argv[i + 1]
            args.remove(get)
    port, method, path = args[0], args[1].upper(), args[2]
    body = args[3].encode() if len(args) > 3 else None
    req = urllib.request.Request(f"http://127.0.0.1:{port}{path}", data=body, method=method,
                                 headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=30) as resp:
            answer = json.loads(resp.read() or b"null")
    except urllib.error.HTTPError as e:
        print(e.read().decode(), file=sys.stderr)
        return 1
    if get:
        for key in get.split("."):
            answer = answer.get(key) if isinstance(answer, dict) else None
    print(json.dumps(answer) if not isinstance(answer, (int, float, str)) or isinstance(answer, bool) else answer)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
