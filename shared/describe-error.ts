/**
 * The one way an error becomes text: a log line, a stored failure reason, a message answered.
 *
 *   messageOf(e)              the outermost message (or the thrown value itself, as a string):
 *                             what `String((e as Error)?.message ?? e)` said, with no cast
 *   describeError(e)          the whole cause chain (error-chain.ts walks it), outermost first,
 *                             each wrapped error with its name and code, URLs redacted: for logs
 *   describeError(e, { links: 1, firstLines: true, maxLength: 500, redact: false })
 *                             the first line of the outermost message, as stored before: a sweep's
 *                             failure reason, a webhook attempt's error (the dashboard and the API
 *                             show those, so they keep the words they always had)
 *
 * Secrets: configuration secrets print as "[redacted]" on their own (config.ts); what is left is
 * URLs, since an RPC URL often carries a provider's key in its path and viem puts the URL of a
 * failed request in its error's message. So every URL is redacted unless the caller says
 * `redact: false` (a stored string that must read as it always did, and holds no RPC URL).
 *
 * Pure, imports only error-chain.ts.
 */
import { errorChain } from "./error-chain.ts";

/** Every http(s)/ws(s) URL, whole: its path or query may hold a key. */
export const redactUrls = (text: string): string => text.replace(/\b(https?|wss?):\/\/[^\s"']+/g, "$1://<redacted>");

/** The message of a thrown value: its `message` if it has one, else the value as a string. */
export function messageOf(err: unknown): string {
  if (typeof err === "object" && err !== null) {
    const message = (err as { message?: unknown }).message;
    if (message !== undefined && message !== null) return String(message);
  }
  return String(err);
}

export interface DescribeOptions {
  /** Links of the chain to print, outermost first (default: all of them). */
  links?: number;
  /** Only the first line of each link (a one-line log, a stored reason). */
  firstLines?: boolean;
  /** Each link that is an Error with a stack printed by its stack (an unhandled error's log). */
  stack?: boolean;
  /** The text is cut to this many characters (after redaction). */
  maxLength?: number;
  /** What takes secrets out of the text (default: redactUrls); false: nothing is taken out. */
  redact?: ((text: string) => string) | false;
}

const firstLine = (text: string) => text.split("\n")[0]!;

const PLAIN = new Set(["", "Error", "Object"]);

/** "PostgresError 57014" for a wrapped error: its class (when not plain Error) and code. */
function label(link: unknown): string {
  if (typeof link !== "object" || link === null) return "";
  const { name, code } = link as { name?: unknown; code?: unknown };
  // Some classes (drizzle's DrizzleQueryError) leave `name` at "Error": their constructor names them.
  const className = [name, link.constructor?.name].find((n): n is string => typeof n === "string" && !PLAIN.has(n)) ?? "";
  const parts = [className, typeof code === "string" || typeof code === "number" ? String(code) : ""];
  return parts.filter(Boolean).join(" ");
}

function linkText(link: unknown, outermost: boolean, opts: DescribeOptions): string {
  const stack = opts.stack && link instanceof Error && typeof link.stack === "string" ? link.stack : undefined;
  let text = stack ?? messageOf(link);
  if (opts.firstLines) text = firstLine(text);
  const details = typeof link === "object" && link !== null ? (link as { details?: unknown }).details : undefined;
  // viem's errors and ours say more in `details`; viem's message already holds them (ours do not).
  if (typeof details === "string" && details !== "" && !messageOf(link).includes(details)) text += opts.firstLines ? ` (${firstLine(details)})` : `\n${details}`;
  if (outermost || stack) return text;
  const name = label(link);
  return name ? `${name}: ${text}` : text;
}

/** The error and its causes as text; see the top of the file. */
export function describeError(err: unknown, opts: DescribeOptions = {}): string {
  const chain = errorChain(err);
  const links = chain.length === 0 ? [err] : chain.slice(0, opts.links ?? chain.length);
  const separator = opts.firstLines ? "; caused by " : "\ncaused by ";
  let out = "";
  links.forEach((link, i) => {
    const text = linkText(link, i === 0, opts);
    if (i === 0) return void (out = text);
    // A cause its wrapper already quotes (RowShapeMismatch, viem's errors) is not said twice.
    const said = opts.firstLines ? firstLine(messageOf(link)) : messageOf(link);
    if (!opts.stack && said !== "" && out.includes(said)) return;
    out += separator + text;
  });
  if (opts.redact !== false) out = (opts.redact ?? redactUrls)(out);
  return opts.maxLength === undefined ? out : out.slice(0, opts.maxLength);
}
