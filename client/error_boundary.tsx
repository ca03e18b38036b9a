import { Component, type ReactNode } from "react";

interface Props {
  readonly children: ReactNode;
}

interface State {
  readonly failed: boolean;
}

/** A fallback instead of a blank page when rendering fails; the root's `onCaughtError` reports. */
export class ErrorBoundary extends Component<Props, State> {
  override state: State = { failed: false };

  static getDerivedStateFromError(): State {
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
