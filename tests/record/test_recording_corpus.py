"""The Python reader (python/impulse_viz/recording.py) on the corpus of tests/record/corpus: every
file gets the verdict of manifest.json (valid with its frames and dropped bytes, or a
RecordingError naming the file and the rule of docs/recording.md, "Validation"); the C++ reader
(tests/record/test_recording_corpus.cpp) and the page's (test_recording_corpus.mjs) must agree.

usage: test_recording_corpus.py SOURCE_DIR
"""
import json
import os
import re
import sys
import warnings

try:
    import numpy  # noqa: F401
except ImportError as e:  # ctest: skipped
    print(f"SKIP: {e} (install python3-numpy: scripts/install-deps.sh)")
    sys.exit(77)

source = sys.argv[1]
sys.path.insert(0, os.path.join(source, "python"))
from impulse_viz.recording import Recording, RecordingError, RecordingWarning  # noqa: E402

corpus = os.path.join(source, "tests", "record", "corpus")
with open(os.path.join(corpus, "manifest.json")) as f:
    manifest = json.load(f)
files = sorted(n for n in os.listdir(corpus) if n.endswith(".imprec"))
assert files == sorted(manifest), "the corpus and its manifest list different files"
failures = []
for name in files:
    path = os.path.join(corpus, name)
    want = manifest[name]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            rec = Recording(path)
            got = {"verdict": "valid", "frames": len(rec), "dropped_bytes": getattr(rec, "dropped_bytes", None)}
        except RecordingError as e:
            message = str(e)
            m = re.search(r"\(rule (\d+)\)$", message)
            got = {"verdict": "invalid", "rule": int(m.group(1)) if m else None}
            if path not in message or "\n" in message:
                failures.append(f"{name}: the error does not name the file on one line: {message}")
        except Exception as e:  # noqa: BLE001 - any other exception is a failure of the reader
            got = {"verdict": f"{type(e).__name__}: {e}"}
    warned = [w for w in caught if issubclass(w.category, RecordingWarning)]
    if got != want:
        failures.append(f"{name}: got {got}, the manifest says {want}")
    elif want["verdict"] == "valid" and bool(want["dropped_bytes"]) != bool(warned):
        failures.append(f"{name}: {len(warned)} warnings for {want['dropped_bytes']} dropped bytes")
    elif warned and f"{want['dropped_bytes']} bytes" not in str(warned[0].message):
        failures.append(f"{name}: the warning does not say how many bytes are dropped: {warned[0].message}")
for f in failures:
    print(f)
print(f"{len(files) - len(failures)} of {len(files)} files got their verdict")
sys.exit(1 if failures else 0)
