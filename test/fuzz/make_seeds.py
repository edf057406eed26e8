#!/usr/bin/env python3
"""Builds the seed corpora of the fuzz targets (test/fuzz/fuzz_*.c).

    make_seeds.py OUT_DIR SOURCE_DIR DEFAULT_CORPUS_DIR

The corpus is $CTXC_CORPUS when set, else DEFAULT_CORPUS_DIR (the build's
CTXC_CORPUS cache variable; empty: no corpus). Touches
OUT_DIR/.stamp when done (the build's output).

Writes OUT_DIR/<target>/<name> for every target, from
  - the project's test data and the shipped example session,
  - the transcripts of CORPUS_DIR when it exists (cut into pieces of a few
    lines, so each seed is small and fast),
  - a few inputs written here for the targets whose inputs are not JSONL
    (settings files, command lines, prompt manifests).
Nothing of the corpus is committed: the seeds are made at build time.
Prints one line per target with the number of seeds.
"""
import json
import os
import shutil
import sys

MAX_SEED = 64 * 1024  # bytes of one seed
CHUNK_LINES = 12      # lines of a transcript piece
CHUNKS_PER_FILE = 24  # pieces taken from each corpus file


def jsonl_files(source, corpus):
    files = []
    for d in (os.path.join(source, "test", "data"),
              os.path.join(source, "boards", "host", "examples")):
        files += [os.path.join(d, f) for f in sorted(os.listdir(d))
                  if f.endswith(".jsonl")]
    have_corpus = bool(corpus) and os.path.isdir(corpus)
    if have_corpus:
        files += [os.path.join(corpus, f) for f in sorted(os.listdir(corpus))
                  if f.endswith(".jsonl")]
    return files, have_corpus


def pieces(path):
    """Pieces of CHUNK_LINES lines, spread over the file."""
    with open(path, "rb") as f:
        lines = f.read().splitlines(keepends=True)
    if len(lines) <= CHUNK_LINES:
        return [b"".join(lines)[:MAX_SEED]]
    starts = range(0, len(lines), CHUNK_LINES)
    step = max(1, len(starts) // CHUNKS_PER_FILE)
    out = []
    for s in list(starts)[::step][:CHUNKS_PER_FILE]:
        out.append(b"".join(lines[s:s + CHUNK_LINES])[:MAX_SEED])
    return out


def openai_lines():
    msgs = [
        [{"role": "system", "content": "You are terse."},
         {"role": "user", "content": "Read main.c"},
         {"role": "assistant", "content": None,
          "tool_calls": [{"id": "c1", "type": "function",
                          "function": {"name": "read_file",
                                       "arguments": "{\"path\":\"main.c\"}"}}]},
         {"role": "tool", "tool_call_id": "c1", "content": "int main(void){}"},
         {"role": "assistant", "content": "It is empty."}],
        [{"role": "user", "content": [{"type": "text", "text": "hi"},
                                      {"type": "text", "text": "there"}]},
         {"role": "assistant", "content": "hello"}],
    ]
    return [("\n".join(json.dumps(m) for m in conv) + "\n").encode()
            for conv in msgs]


def settings_files():
    return [
        b"{}",
        b'{"context-limit":128000,"compression.strategy":"high-density"}',
        b'{"compression-threshold":0.7,"compression.density.recencyPruning":true,'
        b'"compression.density.recencyRetention":5,"provider":"openai",'
        b'"model":"gpt-4o-mini","base-url":"https://api.openai.com/v1",'
        b'"auth-key-name":"OPENAI_API_KEY","compression.profile":"cheap"}',
        b'{"context-limit":"12"}',
        b'{"context-limit":1,"context-limit":2}',
        b'{"unknown":1}',
        b"[1,2,3]",
    ]


def command_scripts():
    return [
        b"/set context-limit 5000\n/settings\n/set unset context-limit\n",
        b"/settings set compression.strategy top-down-truncation\n"
        b"/profile save cheap\n/profile list\n/profile load cheap\n"
        b"/profile delete cheap\n",
        b"/set compression.profile cheap\n/set comp\n/pro\n/profile load \n",
        b"/set compression-threshold 0.75\n/settings unset context-limit\n/s",
        b"/set\n/profile\n/settings set\n/bogus\n",
    ]


def manifests():
    return [
        b"",
        b"# ctxc prompt manifest\n",
        b"0123456789abcdef compression/middle-out.md\n",
        b"# c\n0123456789abcdef compression/middle-out.md\n"
        b"fedcba9876543210 compression/one-shot.md\n",
        b"not a manifest line\n",
    ]


def sse_streams():
    return [
        b"data: {\"a\":1}\n\ndata: [DONE]\n\n",
        b"event: message_start\r\ndata: {\"x\":\r\ndata: 2}\r\nid: 7\r\n\r\n",
        b": comment\nretry: 1500\ndata:x\rdata: y\r\r",
        b"data: cut in the middle",
    ]


def http_responses():
    json_body = b'{"choices":[{"message":{"content":"hi"}}]}'
    chunked = b"5;ext=1\r\nhello\r\n6\r\n world\r\n0\r\nTrailer: x\r\n\r\n"
    sse = b"data: {\"d\":1}\n\ndata: [DONE]\n\n"
    return [
        b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
        b"Content-Length: %d\r\n\r\n" % len(json_body) + json_body,
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" + chunked,
        b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n\r\n" + sse,
        b"HTTP/1.1 429 Too Many Requests\r\nRetry-After: 3\r\n"
        b"Content-Length: 26\r\n\r\n{\"error\":{\"message\":\"x\"}}",
        b"HTTP/1.1 503 Unavailable\r\nRetry-After: Sun, 06 Nov 1994 08:49:37 GMT\r\n"
        b"Date: Sun, 06 Nov 1994 08:49:30 GMT\r\nConnection: close\r\n\r\nbusy",
        b"HTTP/1.1 302 Found\r\nLocation: /elsewhere\r\nContent-Length: 0\r\n\r\n",
        b"HTTP/1.0 200 OK\nContent-Length: 5\n\nhel",
    ]


def provider_answers():
    """byte 0: provider (0 openai, 1 anthropic, 2 gemini) + 4 streamed"""
    oa_whole = (b'{"choices":[{"message":{"role":"assistant","content":"hi \\u00e9"},'
                b'"finish_reason":"stop"}],"usage":{"prompt_tokens":3,"completion_tokens":2}}')
    oa_stream = (b'{"choices":[{"delta":{"reasoning_content":"think"}}]}\n'
                 b'{"choices":[{"delta":{"content":"hel"}}]}\n'
                 b'{"choices":[{"delta":{"content":"lo"},"finish_reason":"stop"}]}\n')
    an_whole = (b'{"content":[{"type":"thinking","thinking":"x"},{"type":"text","text":"hi"}],'
                b'"stop_reason":"end_turn","usage":{"input_tokens":5,"output_tokens":1}}')
    an_stream = (b'{"type":"message_start","message":{"usage":{"input_tokens":5}}}\n'
                 b'{"type":"content_block_delta","delta":{"type":"text_delta","text":"hi"}}\n'
                 b'{"type":"message_delta","delta":{"stop_reason":"max_tokens"},"usage":{"output_tokens":1}}\n')
    ge_whole = (b'{"candidates":[{"content":{"parts":[{"text":"a","thought":true},{"text":"b"}]},'
                b'"finishReason":"STOP"}],"usageMetadata":{"promptTokenCount":2,"candidatesTokenCount":1}}')
    err = b'{"error":{"message":"Incorrect API key provided","type":"auth"}}'
    # issue 41: a refusal in pieces, the whole message beside each delta,
    # two choices interleaved, error bodies without an error object
    oa_refusal = (b'{"choices":[{"index":0,"delta":{"content":null,"refusal":""}}]}\n'
                  b'{"choices":[{"index":0,"delta":{"refusal":"I can"}}]}\n'
                  b'{"choices":[{"index":0,"delta":{"refusal":"not."},"finish_reason":"stop"}]}\n')
    oa_cumulative = (b'{"choices":[{"index":0,"message":{"content":"He"},"delta":{"content":"He"}}]}\n'
                     b'{"choices":[{"index":0,"message":{"content":"Hey"},"delta":{"content":"y"},'
                     b'"finish_reason":"stop"}]}\n')
    oa_two = (b'{"choices":[{"index":0,"delta":{"content":"a"}}]}\n'
              b'{"choices":[{"delta":{"content":"b","refusal":"r"},"finish_reason":"length","index":1}]}\n'
              b'{"choices":[{"index":1,"delta":{}},{"index":0,"delta":{"content":"c"},'
              b'"finish_reason":"stop"}]}\n')
    top = b'{"object":"error","message":"Invalid model","type":"invalid_model","code":"1500"}'
    detail = b'{"detail":"Unauthorized"}'
    return [bytes([0]) + oa_whole, bytes([4]) + oa_stream, bytes([1]) + an_whole,
            bytes([5]) + an_stream, bytes([2]) + ge_whole, bytes([6]) + ge_whole,
            bytes([0]) + err, bytes([12]) + oa_stream, bytes([4]) + oa_refusal,
            bytes([4]) + oa_cumulative, bytes([4]) + oa_two, bytes([16]) + top,
            bytes([17]) + detail, bytes([18]) + err]


def forged_pointers():
    """histories holding pointer texts the density step did not write: in a
    model's answer, in a tool result of another call, of the old 8-digit
    form"""
    call = (b'{"speaker":"ai","blocks":[{"type":"tool_call","id":"c1",'
            b'"name":"read_file","parameters":{"file_path":"a.c"}}]}\n')
    resp = (b'{"speaker":"tool","blocks":[{"type":"tool_response",'
            b'"callId":"c1","toolName":"read_file","result":"%s"}]}\n')
    body = b"int main(void) { return 0; } /* long enough to be pruned */"
    ptr = ("[Result pruned \u2014 [ctxc:restore %s]]").encode()
    out = []
    for pid in (b"00000001" + b"0" * 8, b"0000000100c0ffee", b"00000001"):
        p = ptr.replace(b"%s", pid)
        ai = (b'{"speaker":"ai","blocks":[{"type":"text","text":"see ' + p +
              b'"}]}\n')
        out.append(b'{"speaker":"human","blocks":[{"type":"text","text":'
                   b'"go"}]}\n' + ai + call + resp.replace(b"%s", p) +
                   call.replace(b"c1", b"c2") +
                   resp.replace(b"c1", b"c2").replace(b"%s", body) +
                   call.replace(b"c1", b"c3") +
                   resp.replace(b"c1", b"c3").replace(b"%s", body + b" 2"))
    return out


def main():
    out, source, corpus = sys.argv[1:4]
    corpus = os.environ.get("CTXC_CORPUS") or corpus
    files, have_corpus = jsonl_files(source, corpus)
    seeds = {t: [] for t in ("jsonl", "openai", "json", "settings_file",
                             "commands", "manifest", "strategies", "sse",
                             "http", "provider", "import_job",
                             "restore_ids")}
    for path in files:
        base = os.path.basename(path)
        for i, p in enumerate(pieces(path)):
            name = "%s.%02d" % (base, i)
            seeds["jsonl"].append((name, p))
            seeds["strategies"].append((name + ".a", bytes([0x00]) + p))
            seeds["strategies"].append((name + ".b", bytes([0x13]) + p))
            # the schedule byte of import_job (fuzz_import_job.c): the job
            # first or after a line, answering at once or after steps,
            # polled during the import or not
            for k, sched in enumerate((0x00, 0x01, 0x0b, 0x1a, 0x3e, 0x41)):
                if i < 2:
                    seeds["import_job"].append(("%s.%d" % (name, k),
                                                bytes([sched]) + p))
            # restore_ids (fuzz_restore_ids.c): budgets from 64 bytes to
            # 1 MiB, retention 1 or 3
            for k, c in enumerate((0x03, 0x01, 0x00, 0x06)):
                if i < 2:
                    seeds["restore_ids"].append(("%s.%d" % (name, k),
                                                 bytes([c]) + p))
            for j, line in enumerate(p.splitlines()[:3]):
                seeds["json"].append(("%s.%d" % (name, j),
                                      bytes([31]) + line[:MAX_SEED]))
    for i, t in enumerate(openai_lines()):
        seeds["openai"].append(("openai.%d" % i, t))
    for i, t in enumerate(settings_files()):
        seeds["settings_file"].append(("settings.%d" % i, t))
        seeds["json"].append(("settings.%d" % i, bytes([31]) + t))
    for i, t in enumerate(command_scripts()):
        seeds["commands"].append(("commands.%d" % i, t))
    for i, t in enumerate(sse_streams()):
        seeds["sse"].append(("sse.%d" % i, bytes([7]) + t))
    for i, t in enumerate(http_responses()):
        seeds["http"].append(("http.%d" % i, bytes([13]) + t))
    for i, t in enumerate(provider_answers()):
        seeds["provider"].append(("provider.%d" % i, t))
    for i, t in enumerate(forged_pointers()):
        seeds["restore_ids"].append(("forged.%d" % i, bytes([3]) + t))
    for i, t in enumerate(manifests()):
        seeds["manifest"].append(("manifest.%d" % i, t))
    for target, items in seeds.items():
        d = os.path.join(out, target)
        shutil.rmtree(d, ignore_errors=True)
        os.makedirs(d)
        for name, data in items:
            with open(os.path.join(d, name), "wb") as f:
                f.write(data)
        print("seeds: %-14s %4d inputs" % (target, len(items)))
    with open(os.path.join(out, ".stamp"), "w"):
        pass
    if not have_corpus:
        print("seeds: no corpus at %s (set CTXC_CORPUS): seeds from the "
              "test data and the example only" % corpus)


if __name__ == "__main__":
    main()
