/**
 * What a failed send means for its mail, pure. An SMTP server's 5xx answer is permanent (a
 * mailbox that does not exist, a message refused): retrying cannot change it, so the mail is
 * failed at once and shown so. Anything else — a 4xx, a refused or timed-out connection, a TLS
 * failure — is retried on MAIL_RETRY_SCHEDULE (about a day in all), then failed.
 */
import { parseSchedule, retryDelayMs } from "../retry-schedule.ts";

export const MAIL_RETRY_SCHEDULE = parseSchedule("30s,2m,10m,30m,1h,2h,4h,8h,8h")!;

export type MailOutcome = { state: "failed"; error: string } | { state: "pending"; error: string; delayMs: number };

/** nodemailer's errors carry the server's reply code as `responseCode`. */
export function sendFailureOutcome(error: unknown, attempt: number, random = Math.random()): MailOutcome {
  const code = (error as { responseCode?: unknown } | null)?.responseCode;
  const message = describe(error, code);
  if (typeof code === "number" && code >= 500 && code < 600) return { state: "failed", error: message };
  const delayMs = retryDelayMs(MAIL_RETRY_SCHEDULE, attempt, random);
  return delayMs === undefined ? { state: "failed", error: `${message} (gave up after ${attempt} attempts)` } : { state: "pending", error: message, delayMs };
}

/** One line for the row and the Outbox: the code and the server's words, never the message body. */
function describe(error: unknown, code: unknown): string {
  const text = error instanceof Error ? error.message : String(error);
  const line = text.split("\n")[0]!.slice(0, 300);
  return typeof code === "number" && !line.includes(String(code)) ? `${code} ${line}` : line;
}
