import { customAlphabet } from "nanoid";

/**
 * Every id is a type prefix plus a nanoid, so a stray id in a log tells what it names.
 * Public ids use 24 characters of a 62-letter alphabet (~143 bits); secrets use 40 (~238 bits).
 */
const ALPHABET = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
const publicPart = customAlphabet(ALPHABET, 24);
const secretPart = customAlphabet(ALPHABET, 40);

export const ID_PREFIX = {
  merchant: "acct_",
  paymentSession: "ps_",
  event: "evt_",
  apiKey: "key_",
  request: "req_",
  webhookEndpoint: "whe_",
  sweep: "swp_",
  sweepTransaction: "stx_",
  webhookAttempt: "wha_",
  dashboardUser: "usr_",
  securityEvent: "sec_",
  node: "node_",
  refund: "rf_",
  autoReturn: "ar_",
  mail: "mail_",
  invitation: "inv_",
  paymentLink: "plink_",
} as const;

export type IdKind = keyof typeof ID_PREFIX;

export function newId(kind: IdKind): string {
  return ID_PREFIX[kind] + publicPart();
}

/** Random secret material (API keys, session tokens). */
export function newSecret(): string {
  return secretPart();
}

/** Whether `id` has the exact shape of an id of this kind (checked before it reaches a query). */
export function isId(kind: IdKind, id: string): boolean {
  return id.length === ID_PREFIX[kind].length + 24 && id.startsWith(ID_PREFIX[kind]) && /^[0-9A-Za-z]{24}$/.test(id.slice(-24));
}
