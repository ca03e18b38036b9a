/** Every path that is no page, file or route; rendered once for all, so it shows no path. */
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
