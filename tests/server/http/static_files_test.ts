import assert from "node:assert/strict";
import { brotliDecompressSync, gunzipSync } from "node:zlib";
import {
  contentTypeFor,
  etagMatches,
  hasStaticFile,
  indexStaticFiles,
  negotiateEncoding,
  serveStatic,
} from "../../../server/http/static_files.ts";
import { RequestContext } from "../../../server/http/request_context.ts";

const ctx = () => new RequestContext("r-1", false, "/");

async function fixture(): Promise<string> {
  const dir = await Deno.makeTempDir();
  await Deno.mkdir(`${dir}/static/build`, { recursive: true });
  await Deno.writeTextFile(`${dir}/static/build/app-X1.js`, "console.log(1)");
  await Deno.writeTextFile(`${dir}/static/build/app-X1.js.gz`, "gz-bytes");
  await Deno.writeTextFile(`${dir}/static/build/app-X1.js.map`, "{}");
  await Deno.writeTextFile(`${dir}/static/build/.manifest.json`, "{}");
  await Deno.writeTextFile(`${dir}/static/hello.txt`, "hi");
  await Deno.writeTextFile(`${dir}/secret.txt`, "secret");
  await Deno.symlink(`${dir}/secret.txt`, `${dir}/static/link.txt`);
  await Deno.symlink(dir, `${dir}/static/up`);
  return dir;
}

Deno.test("indexStaticFiles: indexes files, not links, dot files, maps or compressed copies", async () => {
  const dir = await fixture();
  try {
    const index = await indexStaticFiles(`${dir}/static`, { serveSourceMaps: false });
    assert.deepEqual([...index.keys()].sort(), ["build/app-X1.js", "hello.txt"]);
    const js = index.get("build/app-X1.js")!;
    assert.deepEqual([...js.encoded.keys()], ["gzip"]);
    assert.equal(js.cacheControl, "public, max-age=31536000, immutable");
    assert.equal(index.get("hello.txt")!.cacheControl, "public, max-age=300");
    const withMaps = await indexStaticFiles(`${dir}/static`, { serveSourceMaps: true });
    assert.ok(withMaps.has("build/app-X1.js.map"));
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("indexStaticFiles: a missing folder is an empty index", async () => {
  const index = await indexStaticFiles("/nonexistent-static-dir", { serveSourceMaps: false });
  assert.equal(index.size, 0);
});

Deno.test("serveStatic: negotiation, ETag and HEAD", async () => {
  const dir = await fixture();
  try {
    const index = await indexStaticFiles(`${dir}/static`, { serveSourceMaps: false });
    const get = (headers: HeadersInit = {}, method = "GET") =>
      serveStatic(
        index,
        new Request("http://x/build/app-X1.js", { method, headers }),
        "/build/app-X1.js",
        ctx(),
      );

    const gz = (await get({ "accept-encoding": "gzip" }))!;
    assert.equal(gz.headers.get("content-encoding"), "gzip");
    assert.equal(await gz.text(), "gz-bytes");
    const plain = (await get())!;
    assert.equal(plain.headers.get("content-encoding"), null);
    assert.equal(plain.headers.get("content-type"), "text/javascript; charset=utf-8");
    assert.equal(await plain.text(), "console.log(1)");
    assert.notEqual(plain.headers.get("etag"), gz.headers.get("etag"));

    const notModified = (await get({ "if-none-match": `W/${plain.headers.get("etag")}` }))!;
    assert.equal(notModified.status, 304);
    const head = (await get({}, "HEAD"))!;
    assert.equal(head.headers.get("content-length"), "14");
    assert.equal(head.body, null);

    assert.equal(serveStatic(index, new Request("http://x/"), "/link.txt", ctx()), null);
    assert.equal(serveStatic(index, new Request("http://x/"), "/up/secret.txt", ctx()), null);
    assert.ok(hasStaticFile(index, "/hello.txt"));
    assert.ok(!hasStaticFile(index, "/../secret.txt"));
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("etagMatches: lists, wildcards and weak tags", () => {
  assert.ok(etagMatches('"a", "b"', '"b"'));
  assert.ok(etagMatches("*", '"b"'));
  assert.ok(etagMatches('W/"b"', '"b"'));
  assert.ok(!etagMatches('"a"', '"b"'));
  assert.ok(!etagMatches(null, '"b"'));
});

Deno.test("contentTypeFor: by extension, octet-stream otherwise", () => {
  assert.equal(contentTypeFor("a.css"), "text/css; charset=utf-8");
  assert.equal(contentTypeFor("a.SVG"), "image/svg+xml");
  assert.equal(contentTypeFor("a.woff2"), "font/woff2");
  assert.equal(contentTypeFor("noext"), "application/octet-stream");
});

Deno.test("indexStaticFiles: files without copies on disk are compressed in memory where it pays", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const svg = (n: number) =>
      `<svg xmlns="http://www.w3.org/2000/svg">${"<rect/>".repeat(n)}</svg>`;
    await Deno.writeTextFile(`${dir}/icon.svg`, svg(200));
    // Under 1 KiB: served as it is, though it would compress.
    await Deno.writeTextFile(`${dir}/small.svg`, svg(130));
    await Deno.mkdir(`${dir}/docs`);
    await Deno.writeTextFile(`${dir}/docs/notes.txt`, "line\n".repeat(300));
    await Deno.writeTextFile(`${dir}/tiny.txt`, "hi");
    // Random bytes do not compress, and a PNG is not even tried.
    await Deno.writeFile(`${dir}/photo.png`, crypto.getRandomValues(new Uint8Array(4096)));
    const index = await indexStaticFiles(dir, { serveSourceMaps: false });
    const serve = (path: string, acceptEncoding: string) =>
      serveStatic(
        index,
        new Request(`http://x${path}`, {
          headers: { "accept-encoding": acceptEncoding },
        }),
        path,
        ctx(),
      )!;

    for (const path of ["/icon.svg", "/docs/notes.txt"]) {
      const original = await Deno.readFile(`${dir}${path}`);
      const br = await serve(path, "gzip, br");
      assert.equal(br.headers.get("content-encoding"), "br", path);
      assert.equal(br.headers.get("vary"), "Accept-Encoding", path);
      const brBytes = new Uint8Array(await br.arrayBuffer());
      assert.ok(brBytes.length < original.length, path);
      assert.deepEqual(new Uint8Array(brotliDecompressSync(brBytes)), original, path);
      assert.equal(Number(br.headers.get("content-length")), brBytes.length);

      const gz = await serve(path, "gzip");
      assert.equal(gz.headers.get("content-encoding"), "gzip", path);
      const gzBytes = new Uint8Array(await gz.arrayBuffer());
      assert.deepEqual(new Uint8Array(gunzipSync(gzBytes)), original, path);
      assert.notEqual(gz.headers.get("etag"), br.headers.get("etag"));

      const plain = await serve(path, "identity");
      assert.equal(plain.headers.get("content-encoding"), null);
      assert.equal(plain.headers.get("vary"), "Accept-Encoding", "caches must tell them apart");
      assert.deepEqual(new Uint8Array(await plain.arrayBuffer()), original);
    }
    for (const path of ["/tiny.txt", "/small.svg", "/photo.png"]) {
      const res = await serve(path, "gzip, br");
      assert.equal(res.headers.get("content-encoding"), null, path);
      assert.equal(res.headers.get("vary"), null, `${path} has one representation`);
      await res.body?.cancel();
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("static paths: plain paths name files; every way out of the folder or to a hidden file is not found", async () => {
  const dir = await Deno.makeTempDir();
  try {
    await Deno.mkdir(`${dir}/static/build/chunks`, { recursive: true });
    for (
      const file of [
        "deno.json",
        "main.ts",
        "static/robots.txt",
        "static/a b.txt",
        "static/.env",
        "static/build/main-AB12.js",
        "static/build/main.js",
        "static/build/.manifest.json",
        "static/build/chunks/x-1.js",
      ]
    ) await Deno.writeTextFile(`${dir}/${file}`, "x");
    const index = await indexStaticFiles(`${dir}/static`, { serveSourceMaps: false });
    for (
      const path of ["/robots.txt", "/build/main-AB12.js", "/build/chunks/x-1.js", "/a%20b.txt"]
    ) {
      assert.ok(hasStaticFile(index, path), path);
    }
    const refused = [
      "/",
      "/build/",
      "/../deno.json",
      "/build/../../deno.json",
      "/%2e%2e/deno.json",
      "/%2E%2E/%2E%2E/etc/passwd",
      "/build/%2e%2e/%2e%2e/main.ts",
      "/..%2fdeno.json",
      "/build%2F..%2F..%2Fmain.ts",
      "/..%5cdeno.json",
      "/..\\deno.json",
      "/build\\..\\..\\main.ts",
      "/robots.txt%00.js",
      "/robots.txt\0",
      "//etc/passwd",
      "/C:/Windows/win.ini",
      "/./robots.txt",
      "/build//main.js",
      "/.env",
      "/build/.manifest.json",
      "/%",
      "/%zz",
      "/%c0%ae%c0%ae/deno.json",
      "relative/path",
    ];
    for (const path of refused) assert.ok(!hasStaticFile(index, path), path);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

const both = ["br", "gzip"] as const;

Deno.test("negotiateEncoding: prefers br, then gzip, then identity, among what exists", () => {
  assert.equal(negotiateEncoding("gzip, deflate, br, zstd", both), "br");
  assert.equal(negotiateEncoding("gzip, deflate", both), "gzip");
  assert.equal(negotiateEncoding("deflate", both), null);
  assert.equal(negotiateEncoding(null, both), null);
  assert.equal(negotiateEncoding("", both), null);
  assert.equal(negotiateEncoding("br, gzip", ["gzip"]), "gzip");
  assert.equal(negotiateEncoding("br", ["gzip"]), null);
  assert.equal(negotiateEncoding("br, gzip", []), null);
});

Deno.test("negotiateEncoding: honours q values, refusals, wildcards and x-gzip", () => {
  assert.equal(negotiateEncoding("br;q=0, gzip", both), "gzip");
  assert.equal(negotiateEncoding("br;q=0.5, gzip;q=0.8", both), "gzip");
  assert.equal(negotiateEncoding("br;q=0.8, gzip;q=0.8", both), "br");
  assert.equal(negotiateEncoding("*", both), "br");
  assert.equal(negotiateEncoding("*;q=0", both), null);
  assert.equal(negotiateEncoding("br;q=0, *", both), "gzip");
  assert.equal(negotiateEncoding("x-gzip", both), "gzip");
  assert.equal(negotiateEncoding("BR", both), "br");
  assert.equal(negotiateEncoding("br;q=bogus, gzip", both), "gzip");
  assert.equal(negotiateEncoding("gzip;q=0.5, br , identity;q=0", ["gzip"]), "gzip");
  assert.equal(negotiateEncoding("gzip;q=0.5, identity;q=0, br;q=0.001", both), "gzip");
});
