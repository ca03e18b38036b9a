/** Certificates for tests of TLS to an ingest: what production does against sentry.io. */

/**
 * A throwaway CA and a certificate it signed for 127.0.0.1, as PEM, made with `openssl`.
 *
 * @example
 * const { ca, cert, key } = await makeCertificates();
 * Deno.serve({ hostname: "127.0.0.1", port: 0, cert, key }, handler);
 */
export async function makeCertificates(): Promise<{ ca: string; cert: string; key: string }> {
  const dir = await Deno.makeTempDir();
  const run = async (...args: string[]) => {
    const { success, stderr } = await new Deno.Command("openssl", { args, cwd: dir }).output();
    if (!success) throw new Error(`openssl ${args[0]}: ${new TextDecoder().decode(stderr)}`);
  };
  try {
    await run(
      "req",
      "-x509",
      "-newkey",
      "rsa:2048",
      "-nodes",
      "-days",
      "1",
      "-subj",
      "/CN=test ca",
      "-keyout",
      "ca.key",
      "-out",
      "ca.pem",
    );
    await run(
      "req",
      "-newkey",
      "rsa:2048",
      "-nodes",
      "-subj",
      "/CN=127.0.0.1",
      "-keyout",
      "key.pem",
      "-out",
      "req.csr",
    );
    await Deno.writeTextFile(`${dir}/san.ext`, "subjectAltName=IP:127.0.0.1\n");
    await run(
      "x509",
      "-req",
      "-in",
      "req.csr",
      "-CA",
      "ca.pem",
      "-CAkey",
      "ca.key",
      "-CAcreateserial",
      "-days",
      "1",
      "-extfile",
      "san.ext",
      "-out",
      "cert.pem",
    );
    const read = (name: string) => Deno.readTextFile(`${dir}/${name}`);
    return { ca: await read("ca.pem"), cert: await read("cert.pem"), key: await read("key.pem") };
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}
