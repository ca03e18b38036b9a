/**
 * Shown with status 500 when a page's loader fails (the error is logged and reported; nothing of
 * it reaches the page). Rendered once for every such failure, so it must not show the request.
 */
export function ErrorPage() {
  return (
    <>
      <h1>Something went wrong</h1>
      <p>The error has been recorded. Please try again in a moment.</p>
      <p>
        <a href="/">Home</a>
      </p>
    </>
  );
}
