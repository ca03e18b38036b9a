/**
 * The app's pages, declared once: the server renders the page for the request's path (or the
 * not-found page, with 404), and the browser hydrates the page for `location.pathname`.
 * To add a page, write its component in client/pages/ and add it to `pages` below.
 */
import { defineRoutes } from "./page_table.ts";
import { HomePage } from "./pages/home.tsx";
import { NotFoundPage } from "./pages/not_found.tsx";
import { ErrorPage } from "./pages/error.tsx";

/** Every page of the app, by exact path. */
export const routes = defineRoutes({
  pages: [
    { path: "/", title: "App", description: "A React app served by Deno.", Page: HomePage },
  ],
  notFound: { title: "Not found", Page: NotFoundPage },
  error: { title: "Something went wrong", Page: ErrorPage },
});
