import assert from "node:assert/strict";
import { createElement } from "react";
import { renderToString } from "react-dom/server";
import { App } from "../../client/App.tsx";
import { definePages } from "../../server/define.ts";
import { pageRef } from "../../server/page/render.ts";
import { FixtureHomePage, fixtureRoutes } from "../fixtures/routes.tsx";
import { appPages } from "../support/app_pages.ts";

const PROTOTYPE_NAMES = [...Object.getOwnPropertyNames(Object.prototype), "__proto__", "prototype"];

Deno.test("definePages: exact paths only; anything else, prototype names too, is no page", () => {
  assert.equal(fixtureRoutes.pages.get("/about")?.title, "About");
  assert.equal(fixtureRoutes.pages.get("/")?.title, "App");
  for (const path of ["/about/", "/ABOUT", "/about?x", "", "about", ...PROTOTYPE_NAMES]) {
    assert.equal(fixtureRoutes.pages.get(path), undefined, path);
  }
  for (const name of PROTOTYPE_NAMES) assert.equal(fixtureRoutes.pages.get(`/${name}`), undefined);
});

// Whatever pages the team declares (loaded as the server loads them, CSS imports dropped).
Deno.test("server/pages.ts: every page has a path, a title and a component in client/pages/; / is one", async () => {
  const { pages, pageModules } = await appPages();
  assert.ok(pages.pages.has("/"));
  for (const [path, page] of pages.pages) {
    assert.equal(page.path, path);
    assert.ok(page.title && typeof page.Page === "function", path);
    assert.match(pageRef(page, path, pageModules).module ?? "", /^client\/pages\//, path);
  }
  for (const page of [pages.notFound, pages.error]) {
    assert.ok(page.title && pageRef(page, page.title, pageModules).module, page.title);
  }
});

Deno.test("definePages: a malformed or repeated path throws", () => {
  const { notFound, error } = fixtureRoutes;
  for (const path of ["", "about", "/a?b", "/a#b", "/a b"]) {
    assert.throws(
      () => definePages({ pages: [{ path, title: "x", Page: FixtureHomePage }], notFound, error }),
      /must start with \//,
    );
  }
  const page = { path: "/x", title: "x", Page: FixtureHomePage };
  assert.throws(() => definePages({ pages: [page, page], notFound, error }), /declared twice/);
});

Deno.test("pageRef: a component no page module exports is named, with its page", () => {
  const modules = [["client/pages/home.tsx", { FixtureHomePage }]] as const;
  assert.equal(
    pageRef({ title: "x", Page: FixtureHomePage }, "/", modules).component,
    "FixtureHomePage",
  );
  assert.throws(
    () => pageRef({ title: "x", Page: () => null }, "/lost", modules),
    /^Error: page \/lost: its component is not exported by a module in client\/pages\/$/,
  );
});

// What hydration relies on: the page the server names renders the same HTML again.
Deno.test("the shell renders a page the same way every time", () => {
  for (const page of [...fixtureRoutes.pages.values(), fixtureRoutes.notFound]) {
    const html = renderToString(createElement(App, { Page: page.Page }));
    assert.match(html, /^<div class="shell" data-hydrated="false">/);
    assert.equal(renderToString(createElement(App, { Page: page.Page })), html, page.title);
  }
});

Deno.test("definePage: a page whose props need data, declared without a loader, fails deno check naming the page", async () => {
  // In the project, so deno.json's imports resolve; removed after.
  const dir = await Deno.makeTempDir({ dir: "tests", prefix: ".define-check-" });
  const page = (declaration: string) =>
    `import { definePage, type PageProps } from "../../server/define.ts";

function NeedsDataPage({ data }: PageProps<{ name: string }>) {
  return <h1>{data.name}</h1>;
}

export const page = definePage(${declaration});
`;
  const check = async (name: string, declaration: string) => {
    await Deno.writeTextFile(`${dir}/${name}.tsx`, page(declaration));
    const { code, stdout, stderr } = await new Deno.Command(Deno.execPath(), {
      args: ["check", `${dir}/${name}.tsx`],
      env: { NO_COLOR: "1" },
    }).output();
    return { code, output: new TextDecoder().decode(stdout) + new TextDecoder().decode(stderr) };
  };
  try {
    // Both declarations in one file: deno check reports each.
    const failed = await check(
      "failed",
      '{ path: "/needs-data", title: "Needs data", Page: NeedsDataPage });\n' +
        'definePage({ path: "/wrong", title: "Wrong", loader: () => ({ nom: 1 }), Page: NeedsDataPage }',
    );
    assert.notEqual(failed.code, 0);
    assert.match(failed.output, /page \/needs-data needs a loader: its props need data/);
    assert.match(failed.output, /\{ nom: number; \}.*is not assignable to/);
    const typed = await check(
      "typed",
      '{ path: "/typed", title: "Typed", loader: async (req) => ({ name: req.url }), Page: NeedsDataPage }',
    );
    assert.equal(typed.code, 0, typed.output);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
