/**
 * Every path that is no page, static file or server route. The server renders it once for all
 * of them, so it must not show the path it was asked for.
 */
export function NotFoundPage() {
  return (
    <>
      <h1>Not found</h1>
      <p>There is nothing at this address.</p>
      <p>
        <a href="/">Home</a>
      </p>
    </>
  );
}
