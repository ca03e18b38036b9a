/**
 * Permission preflight: a missing grant stops start-up with one line naming the flag. The entries
 * import this first, so env access is checked before React reads NODE_ENV while loading.
 */
import { type Config, exitOnStartupError, SERVER_ENV_VARIABLES, StartupError } from "./config.ts";
import { STATIC_DIR } from "../constants.ts";
import { onDenoDeploy } from "../http/request_context.ts";
import { netHosts } from "./serve_args.ts";

/** One permission the server needs: its descriptor, the flag that grants it, and why. */
function need(name: "env" | "read" | "net", value: string, why: string) {
  const key = { env: "variable", read: "path", net: "host" }[name];
  const descriptor = { name, [key]: value } as Deno.PermissionDescriptor;
  return { descriptor, flag: `--allow-${name}=${value}`, why };
}
type Need = ReturnType<typeof need>;

/** What serving needs for this configuration: the static folder, listening, the ingests. */
export function runtimePermissions(config: Config): Need[] {
  const [listen, ...ingests] = netHosts(config);
  return [
    need("read", STATIC_DIR, "to serve static files and read the build manifest"),
    need("net", listen, "to listen for requests"),
    ...ingests.map((host) => need("net", host, "to send monitoring data to Sentry")),
  ];
}

/** The one line for the first need not granted, or `undefined` when all are. */
export function missingPermission(needs: readonly Need[]): string | undefined {
  const need = needs.find((n) => Deno.permissions.querySync(n.descriptor).state !== "granted");
  return need && `missing permission ${need.flag} (needed ${need.why})`;
}

const missing = missingPermission(
  SERVER_ENV_VARIABLES.map((name) => need("env", name, "to read the configuration")),
);
if (missing) exitOnStartupError(new StartupError(missing));

// Deno Deploy sets no NODE_ENV, and React would run its development build, about 4x slower.
if (onDenoDeploy() && !Deno.env.get("NODE_ENV")) Deno.env.set("NODE_ENV", "production");
