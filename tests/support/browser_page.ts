/**
 * What the browser suite does to a page: hold a script's request until the test lets it go,
 * wait for hydration, and serve the app through a proxy that rewrites its HTML.
 */
import type { Page } from "playwright-core";

/**
 * A pass-through proxy to `target` that passes HTML pages through `rewrite`, standing in for
 * a page the server could send (a tampered or broken one) while keeping its real headers.
 */
export function startRewritingProxy(target: string, rewrite: (html: string) => string) {
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (req) => {
    const url = new URL(req.url);
    let upstream: Response;
    try {
      upstream = await fetch(new URL(url.pathname + url.search, target), {
        method: req.method,
        headers: req.headers,
        body: req.body,
      });
    } catch {
      // The browser went away mid-request (a test ending while an envelope is posted): the
      // body cannot be read. Nobody is left to answer, and a thrown error would only be noise.
      return new Response("proxy: the request could not be forwarded\n", { status: 502 });
    }
    if (!upstream.headers.get("content-type")?.startsWith("text/html")) return upstream;
    const html = rewrite(await upstream.text());
    const headers = new Headers(upstream.headers);
    headers.delete("content-length");
    headers.delete("content-encoding");
    return new Response(html, { status: upstream.status, headers });
  });
  return {
    url: `http://127.0.0.1:${server.addr.port}/`,
    [Symbol.asyncDispose]: () => server.shutdown(),
  };
}

/**
 * Hold every request matching `pattern` until `release()` (or disposal); `held` resolves once
 * the first one is being held.
 */
export async function holdRequests(page: Page, pattern: RegExp) {
  let release!: () => void;
  const released = new Promise<void>((resolve) => release = resolve);
  let onHeld!: () => void;
  const held = new Promise<void>((resolve) => onHeld = resolve);
  await page.route(pattern, async (route) => {
    onHeld();
    await released;
    // The page may be gone by now if the test failed early.
    await route.continue().catch(() => {});
  });
  return { held, release, [Symbol.dispose]: release };
}

/** Wait until the app has hydrated the server's `.shell`. */
export function waitForHydration(page: Page) {
  return page.waitForSelector('.shell[data-hydrated="true"]', { state: "attached" });
}
