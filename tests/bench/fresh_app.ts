/**
 * Measurements that need an app of their own, started fresh for them: the time from spawning
 * to the first 200, and the peak RSS under many concurrent 1 MiB uploads through the tunnel.
 */
import { CONNECTIONS, ingestStats, runWrk } from "./load.ts";
import { peakRss, type Pinning, type Server, startApp } from "./processes.ts";
import type { WrkRun } from "./report.ts";

/** Many large uploads at once: the tunnel streams a few and the rest wait, unread. */
export const MANY_UPLOADS = 200;
/** Start-ups measured, after one warm-up. */
export const STARTS = 5;

/** Where the fresh apps and wrk run, and for how long each upload run lasts. */
export interface FreshAppOptions {
  readonly env: Record<string, string>;
  readonly pinning: Pinning | undefined;
  readonly seconds: number;
}

/** Milliseconds from spawn to the first 200 of {@link STARTS} apps, after one warm-up. */
export async function measureStartups({ env, pinning }: FreshAppOptions): Promise<number[]> {
  console.log(`start-up to first 200: ${STARTS} starts after one warm-up...`);
  const startups: number[] = [];
  for (let i = 0; i <= STARTS; i++) {
    const app = await startApp(env, pinning?.servers);
    await app.stop();
    if (i > 0) startups.push(app.startMs);
  }
  return startups;
}

/** A fresh app's wrk run and peak RSS under CONNECTIONS concurrent uploads of `body`. */
export async function measureUploads(
  { env, pinning, seconds }: FreshAppOptions,
  body: string,
): Promise<{ uploads: WrkRun; uploadRss: number }> {
  console.log(`peak RSS of a fresh app under ${CONNECTIONS} concurrent 1 MiB uploads...`);
  const fresh = await startApp(env, pinning?.servers);
  try {
    const load = {
      label: "1 MiB uploads (fresh app)",
      url: new URL("/monitoring", fresh.url).href,
      server: fresh,
      body,
    };
    const uploads = await runWrk(load, seconds, pinning?.wrk);
    return { uploads, uploadRss: await peakRss(fresh.pid) };
  } finally {
    await fresh.stop();
  }
}

/** What {@link manyUploads} measured. */
export type ManyUploads = Awaited<ReturnType<typeof manyUploads>>;

/**
 * A fresh app under MANY_UPLOADS concurrent 1 MiB uploads: its peak RSS, and whether every
 * envelope wrk got an answer for reached the ingest (uploads wrk cuts off as it stops may
 * arrive too, so delivered >= answered).
 */
export async function manyUploads(
  { env, pinning, seconds }: FreshAppOptions,
  body: string,
  ingest: Server,
) {
  console.log(`peak RSS of a fresh app under ${MANY_UPLOADS} concurrent 1 MiB uploads...`);
  const fresh = await startApp(env, pinning?.servers);
  try {
    const before = await ingestStats(ingest);
    const run = await runWrk(
      {
        label: `1 MiB uploads x ${MANY_UPLOADS} (fresh app)`,
        url: new URL("/monitoring", fresh.url).href,
        server: fresh,
        body,
        connections: MANY_UPLOADS,
      },
      seconds,
      pinning?.wrk,
    );
    const rss = await peakRss(fresh.pid);
    // Let uploads the app was still forwarding when wrk stopped land before counting.
    await new Promise((resolve) => setTimeout(resolve, 500));
    const delivered = (await ingestStats(ingest)).large - before.large;
    const ok = run.errors.status === 0 && run.errors.timeout === 0 && run.requests > 0 &&
      delivered >= run.requests;
    return { run, rss, delivered, ok };
  } finally {
    await fresh.stop();
  }
}
