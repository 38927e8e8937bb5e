/**
 * Security notices, pure: the mail a line of the security history sends (the trigger on
 * app.security_events queues it in the change's transaction; drizzle/0030_mail_outbox.sql names
 * the lines). Written when sent, from the line as recorded: who, what, when, from where, and what
 * to do if it was not them. Plain text: nothing in it is a link that signs anyone in.
 */
export interface NoticeLine {
  action: string;
  environment: string | null;
  email: string | null;
  ip: string | null;
  detail: Record<string, unknown>;
  createdAt: Date;
  merchantName: string;
}

export interface WrittenMail {
  subject: string;
  text: string;
}

const utc = (d: Date) => `${d.toISOString().slice(0, 16).replace("T", " ")} UTC`;

/** Who did it, as the history names them: the person, or an API key by its prefix. */
function who(line: NoticeLine): string {
  if (line.email) return line.email;
  return typeof line.detail.keyPrefix === "string" ? `API key ${line.detail.keyPrefix}…` : "someone";
}

/** What a created key may do, as its history line says (credentials/store.ts): lines older than scopes say nothing, and get nothing. */
function keyLimitsText(detail: Record<string, unknown>): string[] {
  const scopes = detail.scopes;
  const access = Array.isArray(scopes) ? `It may only: ${scopes.join(", ")}.` : scopes === "full access" ? "It has full access." : undefined;
  const expiry = typeof detail.expiresAt === "string" ? `It expires on ${utc(new Date(detail.expiresAt))}.` : detail.expiresAt === null ? "It does not expire." : undefined;
  const said = [access, expiry].filter((x) => x !== undefined);
  return said.length ? [said.join(" ")] : [];
}

export function writeNotice(line: NoticeLine, dashboardUrl: string): WrittenMail {
  const from = line.ip ? ` from the address ${line.ip}` : "";
  const at = utc(line.createdAt);
  const history = `${dashboardUrl}/${line.environment ?? "production"}/settings/security`;
  const notYou = (what: string) => `If you do not know about this change, ${what}, and look at the security history: ${history}`;
  switch (line.action) {
    case "settlement_address_changed": {
      const network = typeof line.detail.network === "string" ? line.detail.network : `chain ${String(line.detail.chainId ?? "?")}`;
      const previous = typeof line.detail.previousAddress === "string" ? line.detail.previousAddress : "(none)";
      return {
        subject: `${line.merchantName}: the production settlement address on ${network} was changed`,
        text: [
          `On ${at}, ${who(line)} changed where ${line.merchantName}'s production payments on ${network} settle${from}.`,
          ``,
          `  before: ${previous}`,
          `  now:    ${String(line.detail.address ?? "?")}`,
          ``,
          `Payments created from now on settle at the new address.`,
          notYou("sign in at once, set the address back, revoke the production API keys and change your password"),
        ].join("\n"),
      };
    }
    case "api_key_created":
      return {
        subject: `${line.merchantName}: a production API key was created`,
        text: [
          `On ${at}, ${who(line)} created the production API key "${String(line.detail.name ?? "")}" (${String(line.detail.prefix ?? "")}…)${from}.`,
          ...keyLimitsText(line.detail),
          ``,
          notYou("sign in and revoke it"),
        ].join("\n"),
      };
    case "password_changed":
    case "password_reset":
      return {
        subject: `${line.merchantName}: your Paysession password was ${line.action === "password_reset" ? "reset" : "changed"}`,
        text: [
          `On ${at}, the password of ${line.email ?? "your account"} was ${line.action === "password_reset" ? "reset by an emailed link" : "changed in the dashboard"}${from}. Every other signed-in device was signed out.`,
          ``,
          `If it was not you, ask for a new password at once (${dashboardUrl}/forgot-password) and tell your account's owner.`,
        ].join("\n"),
      };
    case "sign_in":
      return {
        subject: `${line.merchantName}: a new sign-in to your Paysession account`,
        text: [
          `On ${at}, ${line.email ?? "your account"} signed in with ${typeof line.detail.device === "string" ? line.detail.device : "a browser"}${from}: a device not seen in the last 90 days.`,
          ``,
          `If it was you, nothing to do. If not, set a new password at once (${dashboardUrl}/forgot-password), then sign out every other device under Your account.`,
        ].join("\n"),
      };
    case "two_factor_enabled":
    case "two_factor_disabled":
      return {
        subject: `${line.merchantName}: two-factor sign-in was turned ${line.action === "two_factor_enabled" ? "on" : "off"}`,
        text: [`On ${at}, two-factor sign-in of ${line.email ?? "your account"} was turned ${line.action === "two_factor_enabled" ? "on" : "off"}${from}.`, ``, notYou("set a new password at once")].join("\n"),
      };
    default:
      return { subject: `${line.merchantName}: a security change`, text: `On ${at}, ${who(line)}: ${line.action}${from}.\n\n${history}` };
  }
}
