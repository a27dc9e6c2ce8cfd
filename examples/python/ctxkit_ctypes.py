"""ctxkit from Python through ctypes, with nothing but the standard library.

    python3 ctxkit_ctypes.py /usr/local/lib/libctxkit.so /tmp/agent-store

Counts a text's tokens, then keeps a conversation in a store through the
*_request calls (one JSON object per call: no long positional lists to get
wrong). Every call returns a status; on failure `error` holds a message that
ctxkit_free releases.
"""

import ctypes
import json
import sys

OK = 0


class CtxkitError(Exception):
    pass


def load(path):
    lib = ctypes.CDLL(path)
    size_p = ctypes.POINTER(ctypes.c_size_t)
    # Results are malloc'd by ctxkit and must go back to ctxkit_free, so
    # they are declared as void pointers, not c_char_p (which would copy
    # and lose the pointer).
    out_p = ctypes.POINTER(ctypes.c_void_p)
    lib.ctxkit_free.argtypes = [ctypes.c_void_p]
    lib.ctxkit_free.restype = None
    lib.ctxkit_status_name.argtypes = [ctypes.c_int]
    lib.ctxkit_status_name.restype = ctypes.c_char_p
    lib.ctxkit_tokenizer_create_for_model.argtypes = [
        ctypes.c_char_p, ctypes.c_size_t, ctypes.POINTER(ctypes.c_void_p),
        ctypes.POINTER(ctypes.c_int), out_p]
    lib.ctxkit_tokenizer_count.argtypes = [
        ctypes.c_void_p, ctypes.c_char_p, ctypes.c_size_t, ctypes.c_uint32,
        size_p, out_p]
    lib.ctxkit_tokenizer_free.argtypes = [ctypes.c_void_p]
    lib.ctxkit_store_open.argtypes = [
        ctypes.c_char_p, ctypes.c_size_t, ctypes.c_void_p,
        ctypes.POINTER(ctypes.c_void_p), out_p]
    lib.ctxkit_store_close.argtypes = [ctypes.c_void_p]
    lib.ctxkit_conversations_open.argtypes = [
        ctypes.c_void_p, ctypes.POINTER(ctypes.c_void_p), out_p]
    lib.ctxkit_conversations_close.argtypes = [ctypes.c_void_p]
    for name in ("ctxkit_conversations_create_request",
                 "ctxkit_conversations_add_message_request"):
        getattr(lib, name).argtypes = [
            ctypes.c_void_p, ctypes.c_char_p, ctypes.c_size_t, out_p, size_p,
            out_p]
    return lib


def check(lib, rc, error):
    if rc == OK:
        return
    message = ctypes.string_at(error.value).decode() if error.value else ""
    lib.ctxkit_free(error)
    raise CtxkitError("%s: %s" % (lib.ctxkit_status_name(rc).decode(),
                                  message))


def document(lib, fn, handle, request):
    """Calls a *_request function and returns its JSON document."""
    data = json.dumps(request).encode()
    out, out_len, error = ctypes.c_void_p(), ctypes.c_size_t(), \
        ctypes.c_void_p()
    rc = fn(handle, data, len(data), ctypes.byref(out), ctypes.byref(out_len),
            ctypes.byref(error))
    check(lib, rc, error)
    try:
        return json.loads(ctypes.string_at(out.value, out_len.value))
    finally:
        lib.ctxkit_free(out)


def main(argv):
    lib = load(argv[1])
    store_path = (argv[2] if len(argv) > 2
                  else "/tmp/ctxkit-python-example").encode()
    error = ctypes.c_void_p()

    tokenizer, exact = ctypes.c_void_p(), ctypes.c_int()
    model = b"gpt-4o"
    check(lib, lib.ctxkit_tokenizer_create_for_model(
        model, len(model), ctypes.byref(tokenizer), ctypes.byref(exact),
        ctypes.byref(error)), error)
    text = "ctxkit counts tokens exactly, like tiktoken.".encode()
    count = ctypes.c_size_t()
    check(lib, lib.ctxkit_tokenizer_count(
        tokenizer, text, len(text), 0, ctypes.byref(count),
        ctypes.byref(error)), error)
    lib.ctxkit_tokenizer_free(tokenizer)
    print("gpt-4o: %d tokens (%s)" % (count.value,
                                      "exact" if exact.value else "estimate"))

    store, convs = ctypes.c_void_p(), ctypes.c_void_p()
    check(lib, lib.ctxkit_store_open(store_path, len(store_path), None,
                                     ctypes.byref(store),
                                     ctypes.byref(error)), error)
    check(lib, lib.ctxkit_conversations_open(store, ctypes.byref(convs),
                                             ctypes.byref(error)), error)
    # Handles may be closed in any order: the conversations handle keeps the
    # store open, so a garbage collector may finalize them as it likes.
    lib.ctxkit_store_close(store)

    created = document(lib, lib.ctxkit_conversations_create_request, convs,
                       {"title": "from Python", "model": "gpt-4o"})
    conversation_id = created["conversation"]["id"]
    added = document(lib, lib.ctxkit_conversations_add_message_request, convs,
                     {"conversation_id": conversation_id, "role": "user",
                      "content": "Summarize the build failures."})
    print("conversation %s: %d message(s), %d tokens" % (
        conversation_id, added["conversation"]["message_count"],
        added["conversation"]["total_tokens"]))
    try:
        document(lib, lib.ctxkit_conversations_create_request, convs,
                 {"titel": "typo"})
    except CtxkitError as e:
        print("a misspelled member is refused: %s" % e)
    else:
        print("a misspelled member was accepted", file=sys.stderr)
        return 1
    finally:
        lib.ctxkit_conversations_close(convs)
    return 0


if __name__ == "__main__":
    if len(sys.argv) < 2:
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        sys.exit(2)
    sys.exit(main(sys.argv))
