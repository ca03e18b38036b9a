/**
 * Headless Chromium for the end-to-end tests, driven by playwright-core over the DevTools
 * protocol. Chromium is the system's (`CHROMIUM_PATH`, else Debian's `/usr/bin/chromium`);
 * when there is none, {@link startChromium} says why instead of failing, so tests can be ignored,
 * unless `REQUIRE_BROWSER=1` or `CI=true` (as `.ci/run` sets), where it fails.
 *
 * @example
 * const started = await startChromium();
 * if (started.chromium === null) console.log(`browser tests ignored: ${started.reason}`);
 * else await using chromium = started.chromium; // chromium.browser is a Playwright Browser
 */
import fs from "node:fs";
import type { Browser, BrowserContext, Page } from "playwright-core";

/** Where Chromium is looked for when `CHROMIUM_PATH` is not set. */
export const DEFAULT_CHROMIUM_PATH = "/usr/bin/chromium";

/** The flags Chromium runs with: headless, no sandbox, no traffic of its own, tab capture allowed. */
export const CHROMIUM_ARGS: readonly string[] = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
  // Feedback's "Add a screenshot" captures the tab (getDisplayMedia): accepted without a prompt.
  "--auto-accept-this-tab-capture",
];

// A cold start on a busy 2-core machine takes about a second; this is only the give-up point.
const START_TIMEOUT_MS = 20_000;
const STOP_TIMEOUT_MS = 5_000;
// Kept for the error message if Chromium dies before it listens.
const STDERR_TAIL_CHARS = 4_000;

/** A running Chromium with Playwright connected to it. */
export interface RunningChromium extends AsyncDisposable {
  readonly browser: Browser;
  /** Disconnect Playwright, stop Chromium and delete its temporary profile. */
  close(): Promise<void>;
}

/** Either a running browser, or null and one line saying why there is none. */
export type ChromiumStart =
  | { readonly chromium: RunningChromium; readonly reason?: undefined }
  | { readonly chromium: null; readonly reason: string };

/** Whether a missing Chromium fails the tests instead of ignoring them (CI). */
export function browserRequired(): boolean {
  const on = (name: string) => /^(1|true|yes)$/i.test(Deno.env.get(name)?.trim() ?? "");
  return on("REQUIRE_BROWSER") || on("CI");
}

/** The Chromium executable to use: `CHROMIUM_PATH` if set, else {@link DEFAULT_CHROMIUM_PATH}. */
export function chromiumPath(): string {
  return Deno.env.get("CHROMIUM_PATH")?.trim() || DEFAULT_CHROMIUM_PATH;
}

/**
 * Start headless Chromium with a fresh temporary profile and connect Playwright to it.
 * Resolves `{ chromium: null, reason }` when the executable is missing or cannot be run; any
 * other failure (Chromium crashes, never listens) throws, so a broken browser is never skipped.
 *
 * Chromium is spawned here rather than by `chromium.launch()` because Playwright first checks
 * the executable with `fs.existsSync`, which under the tests' `--allow-read=.` cannot see
 * `/usr/bin/chromium`; spawning needs only `--allow-run`.
 */
export async function startChromium(path: string = chromiumPath()): Promise<ChromiumStart> {
  const { chromium } = await importPlaywright();
  const dir = await Deno.makeTempDir({ prefix: "e2e-chromium-" });
  const removeDir = () => Deno.remove(dir, { recursive: true }).catch(() => {});
  let child: Deno.ChildProcess;
  try {
    child = new Deno.Command(path, {
      args: [
        ...CHROMIUM_ARGS,
        `--user-data-dir=${dir}/profile`,
        "--remote-debugging-port=0",
        "about:blank",
      ],
      stdin: "null",
      stdout: "null",
      stderr: "piped",
    }).spawn();
  } catch (error) {
    await removeDir();
    const reason = error instanceof Deno.errors.NotFound
      ? `no Chromium at ${path} (apt-get install -y chromium, or set CHROMIUM_PATH)`
      : error instanceof Deno.errors.PermissionDenied
      ? `Chromium at ${path} is not executable`
      : undefined;
    if (reason === undefined) throw error;
    if (browserRequired()) throw new Error(`${reason}; REQUIRE_BROWSER or CI is set`);
    return { chromium: null, reason };
  }

  const stderr = drainStderr(child.stderr);
  const stop = async () => {
    try {
      child.kill("SIGTERM");
    } catch { /* already exited */ }
    let timer: ReturnType<typeof setTimeout> | undefined;
    const exited = await Promise.race([
      child.status.then(() => true),
      new Promise<false>((resolve) => timer = setTimeout(() => resolve(false), STOP_TIMEOUT_MS)),
    ]);
    clearTimeout(timer);
    if (!exited) child.kill("SIGKILL");
    await child.status;
    await stderr.done;
    await removeDir();
  };

  let browser: Browser;
  try {
    const endpoint = await stderr.endpoint;
    await Deno.mkdir(`${dir}/artifacts`);
    // Inside our temporary directory, so it is deleted with the profile.
    browser = await chromium.connectOverCDP(endpoint, {
      artifactsDir: `${dir}/artifacts`,
      timeout: START_TIMEOUT_MS,
    });
  } catch (error) {
    await stop();
    throw error;
  }
  let closed: Promise<void> | undefined;
  const close = () =>
    closed ??= (async () => {
      await browser.close().catch(() => {});
      await stop();
    })();
  return { chromium: { browser, close, [Symbol.asyncDispose]: close } };
}

// Chromium prints "DevTools listening on ws://..." on stderr once it accepts connections; the
// rest of stderr is read and dropped, because a full pipe would block Chromium.
function drainStderr(stream: ReadableStream<Uint8Array>) {
  let text = "";
  let found!: (url: string) => void;
  let failed!: (error: Error) => void;
  const endpoint = new Promise<string>((resolve, reject) => {
    found = resolve;
    failed = reject;
  });
  let timer: ReturnType<typeof setTimeout> | undefined = setTimeout(() => {
    timer = undefined;
    failed(new Error(`Chromium did not listen within ${START_TIMEOUT_MS} ms:\n${text}`));
  }, START_TIMEOUT_MS);
  const settle = () => {
    clearTimeout(timer);
    timer = undefined;
  };
  const done = (async () => {
    const decoder = new TextDecoder();
    for await (const chunk of stream) {
      if (timer === undefined) continue;
      text = (text + decoder.decode(chunk, { stream: true })).slice(-STDERR_TAIL_CHARS);
      const match = /DevTools listening on (ws:\/\/\S+)/.exec(text);
      if (match) {
        settle();
        found(match[1]);
      }
    }
    if (timer !== undefined) {
      settle();
      failed(new Error(`Chromium exited before it listened:\n${text}`));
    }
  })();
  return { endpoint, done };
}

// playwright-core checks for WSL with `fs.existsSync("/proc/...")` as it loads. Node answers
// false for a path it may not read; Deno throws NotCapable under `--allow-read=.`, which would
// abort the import. Give Node's answer while the module loads, then put the original back.
async function importPlaywright(): Promise<typeof import("playwright-core")> {
  const existsSync = fs.existsSync;
  fs.existsSync = (path) => {
    try {
      return existsSync(path);
    } catch (error) {
      if (error instanceof Deno.errors.NotCapable) return false;
      throw error;
    }
  };
  try {
    return await import("playwright-core");
  } finally {
    fs.existsSync = existsSync;
  }
}

/**
 * Record every `securitypolicyviolation` in the context's pages, as "directive blocked-uri".
 * The init script runs before any page script and outside the page's CSP, so it sees them all.
 */
export async function recordCspViolations(context: BrowserContext): Promise<void> {
  await context.addInitScript(() => {
    const seen: string[] = [];
    Object.assign(globalThis, { __cspViolations: seen });
    document.addEventListener("securitypolicyviolation", (e) => {
      seen.push(`${e.effectiveDirective} ${e.blockedURI}`);
    });
  });
}

/** The violations {@link recordCspViolations} has seen in `page` so far. */
export function cspViolations(page: Page): Promise<string[]> {
  return page.evaluate(() => Reflect.get(globalThis, "__cspViolations") as string[]);
}
