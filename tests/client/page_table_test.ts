import assert from "node:assert/strict";
import { createElement } from "react";
import { renderToString } from "react-dom/server";
import { App } from "../../client/App.tsx";
import { defineRoutes, resolvePage } from "../../client/page_table.ts";
import { FixtureHomePage, fixtureRoutes } from "../fixtures/routes.tsx";
import { appPages } from "../support/app_pages.ts";

const PROTOTYPE_NAMES = [...Object.getOwnPropertyNames(Object.prototype), "__proto__", "prototype"];

Deno.test("resolvePage: exact paths only; anything else, prototype names too, is not found", () => {
  assert.equal(resolvePage(fixtureRoutes, "/about").title, "About");
  assert.equal(resolvePage(fixtureRoutes, "/").title, "App");
  for (const path of ["/about/", "/ABOUT", "/about?x", "", "about", ...PROTOTYPE_NAMES]) {
    assert.equal(resolvePage(fixtureRoutes, path), fixtureRoutes.notFound, path);
  }
  for (const name of PROTOTYPE_NAMES) {
    assert.equal(resolvePage(fixtureRoutes, `/${name}`), fixtureRoutes.notFound, name);
  }
});

// Whatever pages the team declares (loaded as the server loads them, CSS imports dropped).
Deno.test("client/routes.tsx: every page has a path, a title and a component; / is one of them", async () => {
  const { routes } = await appPages();
  assert.ok(routes.pages.has("/"));
  for (const [path, page] of routes.pages) {
    assert.equal(page.path, path);
    assert.ok(page.title && typeof page.Page === "function", path);
    assert.equal(resolvePage(routes, path), page, "the browser's lookup finds it");
  }
  assert.ok(routes.notFound.title && routes.error.title);
});

Deno.test("defineRoutes: a malformed or repeated path throws", () => {
  const { notFound, error } = fixtureRoutes;
  for (const path of ["", "about", "/a?b", "/a#b", "/a b"]) {
    assert.throws(
      () => defineRoutes({ pages: [{ path, title: "x", Page: FixtureHomePage }], notFound, error }),
      /must start with \//,
    );
  }
  const page = { path: "/x", title: "x", Page: FixtureHomePage };
  assert.throws(() => defineRoutes({ pages: [page, page], notFound, error }), /declared twice/);
});

// What hydration relies on: the browser's lookup of its location renders what the server sent.
Deno.test("server and browser render the same HTML for a path", () => {
  for (const path of ["/", "/about", "/nothing-here", "/constructor"]) {
    const html = renderToString(createElement(App, { page: resolvePage(fixtureRoutes, path) }));
    assert.match(html, /^<div class="shell" data-hydrated="false">/);
    const again = renderToString(createElement(App, { page: resolvePage(fixtureRoutes, path) }));
    assert.equal(again, html, path);
  }
});
