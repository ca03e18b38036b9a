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
