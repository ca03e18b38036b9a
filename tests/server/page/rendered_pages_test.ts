import assert from "node:assert/strict";
import { readRenderedPages, writeRenderedPages } from "../../../server/page/rendered_pages.ts";

Deno.test("rendered pages: what the build writes reads back the same; anything else is refused", async () => {
  const dir = await Deno.makeTempDir();
  const file = `${dir}/.pages.json`;
  try {
    const pages = {
      pages: new Map([["/", {
        title: "Home",
        module: "client/pages/h.tsx",
        appHtml: "<main>é</main>",
      }]]),
      live: ["/data"],
      notFound: { title: "Not found", appHtml: "<main>404</main>" },
      error: { title: "Failed", description: "d", appHtml: "<main>500</main>" },
    };
    await writeRenderedPages(pages, file);
    assert.deepEqual(await readRenderedPages(file), pages);
    await Deno.writeTextFile(file, JSON.stringify({ pages: [["/", { title: 1 }]] }));
    await assert.rejects(readRenderedPages(file), /is not a page file this build writes/);
    await Deno.remove(file);
    await assert.rejects(readRenderedPages(file), /is missing: run `deno task build` first/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
