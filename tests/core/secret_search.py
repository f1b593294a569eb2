"""Code that looks through its own process's memory for any of the given texts (by hash)."""

import hashlib


def search_code(texts):
    """Plain Python (for the unguarded test hook) that prints how many of ``texts`` it finds and
    whether any task record object is alive in its process."""
    hashes = sorted({hashlib.sha256(text.encode("utf-8")).hexdigest() for text in texts})
    return f"""
import gc, hashlib
wanted = set({hashes!r})
found = 0
records = 0
for obj in gc.get_objects():
    if type(obj).__name__ == "Task":
        records += 1
    for attempt in range(5):  # a copy: a weakref callback run by the collector may change a dict while it is read
        try:
            items = list(obj.items()) if isinstance(obj, dict) else list(obj) if isinstance(obj, (list, tuple, set, frozenset)) else ()
            break
        except RuntimeError:
            items = ()
        except Exception:  # a lazy module's placeholder (transformers') raises on any look at its class
            items = ()
            break
    for item in items:
        for text in (item if isinstance(item, tuple) else (item,)):
            if isinstance(text, str) and hashlib.sha256(text.encode("utf-8", "replace")).hexdigest() in wanted:
                found += 1
print("found", found, "records", records)
"""
