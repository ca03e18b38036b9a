import { Component, type ReactNode } from "react";

/** A fallback instead of a blank page when rendering fails; the root's `onCaughtError` reports. */
export class ErrorBoundary extends Component<{ readonly children: ReactNode }> {
  override state = { failed: false };

  static getDerivedStateFromError() {
    return { failed: true };
  }

  override render(): ReactNode {
    if (!this.state.failed) return this.props.children;
    return (
      <div role="alert" className="shell-main">
        <h1>Something went wrong</h1>
        <p>The error has been recorded. Reloading the page may help.</p>
      </div>
    );
  }
}
