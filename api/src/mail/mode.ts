/**
 * Where this service's mail goes, decided once at boot from its settings (pure):
 *
 *   smtp    — SERVICE_SMTP_URL is set: the operator's SMTP server.
 *   catcher — no SMTP URL and only sandbox networks (`bun run dev`, the tests): a real SMTP server
 *             in the process (mail/catcher.ts) keeps each mail under <data dir>/mail and the sandbox
 *             dashboard's Outbox shows it, so a newcomer reads a reset link with nothing set up.
 *   off     — no SMTP URL and a production network: nothing is queued, and what needs mail (reset
 *             by link) says so instead of promising a mail that never comes. Said once at boot.
 */
import type { MailSettings } from "../config.ts";

export type MailMode = "smtp" | "catcher" | "off";

export function mailModeOf(settings: Pick<MailSettings, "smtpUrl">, hasProductionNetwork: boolean): MailMode {
  if (settings.smtpUrl) return "smtp";
  return hasProductionNetwork ? "off" : "catcher";
}

/** The boot line that says where mail goes (never the SMTP URL: it may hold a password). */
export function mailModeLine(mode: MailMode, where: string): string {
  switch (mode) {
    case "smtp":
      return `mail: through SMTP at ${where}`;
    case "catcher":
      return `mail: kept by the local mail catcher (SMTP ${where}, files under its mail folder, the sandbox dashboard's Outbox); set SERVICE_SMTP_URL to send for real`;
    case "off":
      return "mail: off — a production network and no SERVICE_SMTP_URL: password reset by mail and security notices are not available until it is set";
  }
}

/** host:port of an SMTP URL, for the log (user and password left out). */
export function smtpWhere(url: string): string {
  try {
    const u = new URL(url);
    return `${u.protocol}//${u.hostname}${u.port ? `:${u.port}` : ""}`;
  } catch {
    return "(unparsable)";
  }
}
