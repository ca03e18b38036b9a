import assert from "node:assert/strict";
import {
  headerValue,
  type ParseStep,
  ResponseParser,
} from "../../../server/tunnel/http1_response.ts";

const encoder = new TextEncoder();
const decoder = new TextDecoder();

function parse(
  text: string,
  options: { bytewise?: boolean; eof?: boolean; maxBody?: number } = {},
) {
  const parser = new ResponseParser(16 * 1024, options.maxBody ?? 1024);
  const bytes = encoder.encode(text);
  let step: ParseStep = { kind: "more" };
  if (options.bytewise) {
    for (let i = 0; i < bytes.byteLength && step.kind === "more"; i++) {
      step = parser.push(bytes.subarray(i, i + 1));
    }
  } else step = parser.push(bytes);
  if (step.kind === "more" && options.eof) step = parser.end();
  return step;
}

function done(step: ParseStep) {
  assert.equal(step.kind, "done", JSON.stringify(step));
  if (step.kind !== "done") throw new Error("unreachable");
  return { ...step.response, text: decoder.decode(step.response.body) };
}

Deno.test("a Content-Length response, whole or byte by byte, leaves the connection reusable", () => {
  const text =
    'HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 9\r\n\r\n{"id":1}\n';
  for (const bytewise of [false, true]) {
    const response = done(parse(text, { bytewise }));
    assert.equal(response.status, 200);
    assert.equal(response.text, '{"id":1}\n');
    assert.deepEqual(response.headers[0], ["content-type", "application/json"]);
    assert.equal(response.reusable, true);
  }
});

Deno.test("a chunked response with extensions and trailers, whole or byte by byte", () => {
  const text = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" +
    "4;x=y\r\nabcd\r\n2\r\nef\r\n0\r\nX-Trailer: 1\r\n\r\n";
  for (const bytewise of [false, true]) {
    const response = done(parse(text, { bytewise }));
    assert.equal(response.text, "abcdef");
    assert.equal(response.reusable, true);
  }
});

Deno.test("a body delimited by close ends at EOF and is never reusable", () => {
  assert.equal(parse("HTTP/1.1 200 OK\r\n\r\nabc").kind, "more");
  const response = done(parse("HTTP/1.1 200 OK\r\n\r\nabc", { eof: true }));
  assert.equal(response.text, "abc");
  assert.equal(response.reusable, false);
});

Deno.test("Connection: close, HTTP/1.0 and bytes after the response make it not reusable", () => {
  assert.equal(
    done(parse("HTTP/1.1 204 No Content\r\nConnection: keep-alive, close\r\n\r\n")).reusable,
    false,
  );
  assert.equal(done(parse("HTTP/1.0 200 OK\r\nContent-Length: 0\r\n\r\n")).reusable, false);
  // HTTP/1.0 keeps the connection only when it says keep-alive, and then it does.
  const kept = done(
    parse("HTTP/1.0 200 OK\r\nConnection: Keep-Alive\r\nContent-Length: 0\r\n\r\n"),
  );
  assert.deepEqual([kept.keepAlive, kept.reusable], [true, true]);
  const both = done(
    parse(
      "HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nConnection: close\r\nContent-Length: 0\r\n\r\n",
    ),
  );
  assert.equal(both.keepAlive, false);
  assert.equal(done(parse("HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\nxy")).reusable, false);
  assert.equal(done(parse("HTTP/1.1 204 No Content\r\n\r\n")).reusable, true);
  assert.equal(done(parse("HTTP/1.1 204 No Content\r\nContent-Length: 0\r\n\r\n")).reusable, true);
});

Deno.test("interim 1xx answers are skipped; 101 is an error", () => {
  const response = done(
    parse("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 201 Created\r\nContent-Length: 2\r\n\r\nok"),
  );
  assert.equal(response.status, 201);
  assert.equal(response.text, "ok");
  assert.equal(parse("HTTP/1.1 101 Switching\r\n\r\n").kind, "error");
});

Deno.test("ambiguous or malformed responses are errors, never guesses", () => {
  const bad = [
    "HTTP/1.1 200 OK\nContent-Length: 0\n\n",
    "HTTP/1.1 200 OK\r\nX-A: 1\r\n folded\r\nContent-Length: 0\r\n\r\n",
    "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n",
    "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n",
    "HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n",
    "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n",
    "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
    "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nabX\r\n",
    "HTTP/1.1 200 OK\r\nBad Name: 1\r\n\r\n",
    "HTTP/1.1 200 OK\r\nX: a\x01b\r\n\r\n",
    // A bare CR at either end of a value (trim() would have taken it for whitespace).
    "HTTP/1.1 200 OK\r\nX: b\r\r\nContent-Length: 0\r\n\r\n",
    "HTTP/1.1 200 OK\r\nX: \rb\r\nContent-Length: 0\r\n\r\n",
    "HTTP/2 200 OK\r\n\r\n",
    "HTTP/1.1 700 Odd\r\n\r\n",
    "HTTP/1.1 099 Low\r\n\r\n",
    // A 204 that declares a body: its bytes would be read as the next answer.
    "HTTP/1.1 204 No Content\r\nContent-Length: 40\r\n\r\n",
    "HTTP/1.1 204 No Content\r\nTransfer-Encoding: chunked\r\n\r\n",
  ];
  for (const text of bad) assert.equal(parse(text).kind, "error", JSON.stringify(text));
  assert.equal(
    parse("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nab", { eof: true }).kind,
    "error",
  );
});

Deno.test("header bytes 0x80-0xff are one character each (Latin-1), as fetch reads them", () => {
  const bytes = new Uint8Array([
    ...encoder.encode("HTTP/1.1 204 No Content\r\nX-A: a"),
    0x80,
    0x9f,
    0xe9,
    0xff,
    ...encoder.encode("\r\nX-B: plain\r\n\r\n"),
  ]);
  const step = new ResponseParser(1024, 1024).push(bytes);
  const response = done(step);
  assert.equal(headerValue(response.headers, "x-a"), "a\x80\x9f\xe9\xff");
  assert.equal(headerValue(response.headers, "x-b"), "plain");
});

Deno.test("only spaces and tabs are cut from a value's ends", () => {
  const step = done(parse("HTTP/1.1 200 OK\r\nX: \t a\xa0b\xa0 \t\r\nContent-Length: 0\r\n\r\n"));
  // NBSP goes over the wire as UTF-8 (C2 A0); the parser reads each byte as one character.
  assert.equal(headerValue(step.headers, "x"), "a\xc2\xa0b\xc2\xa0");
});

Deno.test("a head over its cap is an error, however it arrives", () => {
  const parser = new ResponseParser(64, 1024);
  const step = parser.push(encoder.encode(`HTTP/1.1 200 OK\r\nX: ${"a".repeat(100)}`));
  assert.equal(step.kind, "error");
});

Deno.test("the head cap holds to the byte, wherever the reads split it", () => {
  // Heads of cap - 1, cap and cap + 1 bytes (terminator not counted): the first two pass, the
  // last fails, whole or split in two at any byte, so the terminator's bytes never count.
  const cap = 64;
  for (const size of [cap - 1, cap, cap + 1]) {
    const start = "HTTP/1.1 204 No Content\r\nX: ";
    const bytes = encoder.encode(`${start}${"a".repeat(size - start.length)}\r\n\r\n`);
    const expected = size <= cap ? "done" : "error";
    for (let split = 0; split <= bytes.byteLength; split++) {
      const parser = new ResponseParser(cap, 1024);
      let step = parser.push(bytes.subarray(0, split));
      if (step.kind === "more") step = parser.push(bytes.subarray(split));
      assert.equal(step.kind, expected, `head of ${size} bytes split at ${split}`);
    }
  }
});

Deno.test("interim answers, chunk framing and trailers are bounded, not only by the timeout", () => {
  const final = "HTTP/1.1 204 No Content\r\n\r\n";
  const interim = "HTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\n";
  assert.equal(parse(interim.repeat(8) + final).kind, "done");
  assert.equal(parse(interim.repeat(9) + final).kind, "error");
  // The parser's head cap here is 16 KiB; chunk lines and trailers share one such budget.
  const chunked = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n";
  const trailers = (n: number) => chunked + "0\r\n" + "X-T: 1\r\n".repeat(n) + "\r\n";
  assert.equal(parse(trailers(1000)).kind, "done");
  assert.equal(parse(trailers(3000)).kind, "error");
  const chunks = (n: number) => chunked + `1;${"e".repeat(500)}\r\na\r\n`.repeat(n) + "0\r\n\r\n";
  assert.equal(done(parse(chunks(20))).text, "a".repeat(20));
  assert.equal(parse(chunks(40)).kind, "error");
});

Deno.test("a body over its cap stops at cap + 1 bytes, for every framing", () => {
  const cases = [
    "HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n" + "a".repeat(100),
    "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n64\r\n" + "a".repeat(100),
    "HTTP/1.1 200 OK\r\n\r\n" + "a".repeat(100),
  ];
  for (const text of cases) {
    const step = parse(text, { maxBody: 10 });
    assert.equal(step.kind, "too-large", text.slice(0, 40));
    if (step.kind === "too-large") {
      assert.equal(step.response.body.byteLength, 11);
      assert.equal(step.response.reusable, false);
    }
  }
});

Deno.test("work is linear: a 1 MB body byte by byte in 64 KiB pieces parses once", () => {
  const body = "a".repeat(1_000_000);
  const parser = new ResponseParser(16 * 1024, 2_000_000);
  const bytes = encoder.encode(`HTTP/1.1 200 OK\r\nContent-Length: ${body.length}\r\n\r\n${body}`);
  let step: ParseStep = { kind: "more" };
  for (let i = 0; i < bytes.byteLength; i += 65536) {
    step = parser.push(bytes.subarray(i, i + 65536));
  }
  assert.equal(done(step).body.byteLength, 1_000_000);
});

Deno.test("work is linear: answers pipelined into one read are parsed in place, not copied with the rest", () => {
  // As the pipeline reads them: one buffer with every answer of a batch, a parser per answer.
  const answer = (i: number) =>
    `HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 13\r\n\r\n{"id":"${
      String(i).padStart(4, "0")
    }"}`;
  const count = 400;
  const wire = encoder.encode(Array.from({ length: count }, (_, i) => answer(i)).join(""));
  let copied = 0;
  const set = Uint8Array.prototype.set;
  Uint8Array.prototype.set = function (this: Uint8Array, source: ArrayLike<number>, at?: number) {
    copied += source.length;
    return set.call(this, source, at);
  };
  const bodies: string[] = [];
  try {
    let rest = wire;
    while (rest.byteLength > 0) {
      const step = new ResponseParser(16 * 1024, 1024).push(rest);
      if (step.kind !== "done") throw new Error(JSON.stringify(step));
      bodies.push(decoder.decode(step.response.body));
      rest = rest.subarray(step.used);
    }
  } finally {
    Uint8Array.prototype.set = set;
  }
  assert.equal(bodies.length, count);
  assert.equal(bodies[count - 1], '{"id":"0399"}');
  // Each body is copied once (the caller reuses its buffer); copying the rest of the read for
  // every answer was quadratic: about 12 MB here.
  assert.ok(copied <= count * 13, `${copied} bytes copied for ${count * 13} bytes of bodies`);
});

Deno.test("what the parser keeps is its own: the caller may read the next bytes into the same buffer", () => {
  // Over half the read buffer in the first read: the case where a view would have been kept.
  const body = "x".repeat(20_000);
  for (const framing of ["length", "chunked", "close"] as const) {
    const head = framing === "length"
      ? `HTTP/1.1 200 OK\r\ncontent-length: ${body.length}\r\n\r\n`
      : framing === "chunked"
      ? "HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n" + body.length.toString(16) + "\r\n"
      : "HTTP/1.1 200 OK\r\n\r\n";
    const tail = framing === "chunked" ? "\r\n0\r\n\r\n" : "";
    const wire = encoder.encode(head + body + tail);
    // One reused read buffer, as the ingest client and the pipeline use: each read overwrites it.
    const buffer = new Uint8Array(16 * 1024);
    const parser = new ResponseParser(16 * 1024, 64 * 1024);
    let step: ParseStep = { kind: "more" };
    for (let at = 0; at < wire.length && step.kind === "more"; at += 12_000) {
      const piece = wire.subarray(at, at + 12_000);
      buffer.fill(0x42);
      buffer.set(piece);
      step = parser.push(buffer.subarray(0, piece.length));
    }
    buffer.fill(0x43);
    if (step.kind === "more") step = parser.end();
    assert.equal(done(step).text, body, framing);
  }
});

Deno.test("headerValue: as Headers.get reads it, repeated fields joined", () => {
  const headers: [string, string][] = [["retry-after", "5"], ["x-a", "1"], ["x-a", "2"]];
  assert.equal(headerValue(headers, "retry-after"), "5");
  assert.equal(headerValue(headers, "x-a"), "1, 2");
  assert.equal(headerValue(headers, "x-b"), null);
});
