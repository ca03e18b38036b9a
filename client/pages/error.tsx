/** Shown with 500 when a loader fails; rendered once for all failures, so it shows no request. */
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
