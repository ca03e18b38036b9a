/** User Feedback, a chunk of its own: loaded only with SENTRY_FEEDBACK. */
import {
  buildFeedbackIntegration,
  feedbackModalIntegration,
  feedbackScreenshotIntegration,
} from "@sentry/feedback";
import { addIntegration } from "../monitoring.ts";
import { pageNonce } from "../page_nonce.ts";
import type { FeedbackOptions } from "../sentry_options.ts";

// What @sentry/browser's `feedbackIntegration` is, built from its own package.
const feedbackIntegration = buildFeedbackIntegration({
  getModalIntegration: () => feedbackModalIntegration,
  getScreenshotIntegration: () => feedbackScreenshotIntegration,
});

/** Show Sentry's feedback button; returns what opens its form for app code. */
export function startFeedback(options: FeedbackOptions): () => Promise<void> {
  // Its shadow DOM's `<style>` elements apply only with the page's nonce (`style-src`).
  const nonce = pageNonce();
  const feedback = feedbackIntegration({ ...options, styleNonce: nonce, scriptNonce: nonce });
  addIntegration(feedback);
  let form: ReturnType<typeof feedback.createForm> | undefined;
  return async () => {
    const dialog = await (form ??= feedback.createForm());
    dialog.appendToDom();
    dialog.open();
  };
}
