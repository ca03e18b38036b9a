/** The app's pages: each a component in client/pages/, declared here with its loader. */
import { definePage, definePages } from "./define.ts";
import { HomePage } from "../client/pages/home.tsx";
import { NotFoundPage } from "../client/pages/not_found.tsx";
import { ErrorPage } from "../client/pages/error.tsx";

export const pages = definePages({
  pages: [
    definePage({
      path: "/",
      title: "App",
      description: "A React app served by Deno.",
      Page: HomePage,
    }),
  ],
  notFound: { title: "Not found", Page: NotFoundPage },
  error: { title: "Something went wrong", Page: ErrorPage },
});
