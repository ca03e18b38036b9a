/** The app's pages, for render and hydration: write a page in client/pages/ and add it here. */
import { defineRoutes } from "./page_table.ts";
import { HomePage } from "./pages/home.tsx";
import { NotFoundPage } from "./pages/not_found.tsx";
import { ErrorPage } from "./pages/error.tsx";

export const routes = defineRoutes({
  pages: [
    { path: "/", title: "App", description: "A React app served by Deno.", Page: HomePage },
  ],
  notFound: { title: "Not found", Page: NotFoundPage },
  error: { title: "Something went wrong", Page: ErrorPage },
});
