#!/usr/bin/env python3
"""A minimal OpenAI-compatible model server for benchmarks: answers every
chat request at once with the same SQL (streamed as SSE when asked), so a
benchmark measures aiq, not a model.

    python3 benches/mock_llm.py PORT "SQL"
"""
import json
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

PORT = int(sys.argv[1])
ANSWER = "```sql\n" + sys.argv[2] + "\n```"


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # Headers and body go out as separate writes; with Nagle's algorithm the
    # body would wait for the client's delayed ACK (~40 ms), as no real
    # model server makes it wait.
    disable_nagle_algorithm = True

    def log_message(self, *args):
        pass

    def do_POST(self):
        length = int(self.headers.get("content-length", 0))
        request = json.loads(self.rfile.read(length) or b"{}")
        if request.get("stream"):
            chunks = [
                {"choices": [{"index": 0, "delta": {"content": ANSWER}}]},
                {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]},
            ]
            body = "".join("data: " + json.dumps(c) + "\n\n" for c in chunks) + "data: [DONE]\n\n"
            kind = "text/event-stream"
        else:
            body = json.dumps({"choices": [{"index": 0, "message": {"role": "assistant", "content": ANSWER}}]})
            kind = "application/json"
        data = body.encode()
        self.send_response(200)
        self.send_header("content-type", kind)
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


ThreadingHTTPServer(("127.0.0.1", PORT), Handler).serve_forever()
