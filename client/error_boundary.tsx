import { Component, type ErrorInfo, type ReactNode } from "react";

interface Props {
  readonly children: ReactNode;
}

interface State {
  readonly failed: boolean;
}

/**
 * Shows a fallback instead of a blank page when rendering fails. React reports the error
 * through the root's `onCaughtError`, which sends it to monitoring.
 */
export class ErrorBoundary extends Component<Props, State> {
  override state: State = { failed: false };

  static getDerivedStateFromError(): State {
    return { failed: true };
  }

  override componentDidCatch(_error: unknown, _info: ErrorInfo): void {
    // Reported by the root's onCaughtError; nothing more to do here.
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
