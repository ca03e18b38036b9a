/**
 * Which hostile parts of a request a failure needs: each ablation puts one part of the request
 * back to what a plain client sends (GET, `Host: 127.0.0.1`, HTTP/1.1, no extra headers, no
 * body, one write). A part is needed when putting it back makes the failure go away. The survey
 * names failure classes by these parts, so one bug reached many ways is one row.
 *
 * @example
 * const parts = ABLATIONS.filter((a) => a.apply(request) !== null).map((a) => a.part);
 */
import type { RawRequest } from "./raw_request.ts";

/** One part of a request and how to make it plain; `apply` is null when it already is. */
export interface Ablation {
  readonly part: string;
  apply(request: RawRequest): RawRequest | null;
}

const FRAMING = new Set(["content-length", "transfer-encoding", "content-encoding"]);

/** Every ablation, in the order the survey reports needed parts. */
export const ABLATIONS: readonly Ablation[] = [
  {
    part: "method",
    apply: (r) => r.method === "GET" ? null : { ...r, method: "GET" },
  },
  {
    part: "Host",
    apply: (r) => {
      const hosts = r.headers.filter(([name]) => name.toLowerCase() === "host");
      if (hosts.length === 1 && hosts[0][1] === "127.0.0.1") return null;
      const rest = r.headers.filter(([name]) => name.toLowerCase() !== "host");
      return { ...r, headers: [["Host", "127.0.0.1"], ...rest] };
    },
  },
  {
    part: "target form",
    apply: (r) => r.target.startsWith("/") ? null : { ...r, target: pathOf(r.target) },
  },
  {
    part: "version",
    apply: (r) => r.version === "HTTP/1.1" ? null : { ...r, version: "HTTP/1.1" },
  },
  {
    part: "other headers",
    apply: (r) => {
      const kept = r.headers.filter(([name]) =>
        name.toLowerCase() === "host" || FRAMING.has(name.toLowerCase())
      );
      return kept.length === r.headers.length ? null : { ...r, headers: kept };
    },
  },
  {
    part: "body and framing",
    apply: (r) => {
      const kept = r.headers.filter(([name]) => !FRAMING.has(name.toLowerCase()));
      return kept.length === r.headers.length && r.body === ""
        ? null
        : { ...r, headers: kept, body: "" };
    },
  },
  {
    part: "split writes",
    apply: (r) => r.cuts.length === 0 ? null : { ...r, cuts: [] },
  },
];

/** The parts `fails` needs: those whose ablation makes `fails` false. */
export async function neededParts(
  request: RawRequest,
  fails: (request: RawRequest) => Promise<boolean>,
): Promise<string[]> {
  const needed: string[] = [];
  for (const ablation of ABLATIONS) {
    const plain = ablation.apply(request);
    if (plain !== null && !await fails(plain)) needed.push(ablation.part);
  }
  return needed;
}

// An absolute-form target's path, or `/` when it has none a URL parser accepts.
function pathOf(target: string): string {
  try {
    const url = new URL(target);
    return url.pathname + url.search;
  } catch {
    return "/";
  }
}
