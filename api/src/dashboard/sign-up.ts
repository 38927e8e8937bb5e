/**
 * A dashboard sign-up (docs/dashboard.md, "Accounts"): a new merchant, its first user and that
 * user's first login, with the login's security-history line, in one transaction — nothing of
 * it exists unless all of it does (a refused email or a line that cannot be written leaves no
 * merchant behind).
 */
import type { Db } from "../db/client.ts";
import { createMerchant } from "../credentials/store.ts";
import { startLogin } from "./logins.ts";
import { insertUser, prepareUser } from "./users.ts";

export interface SignUpInput {
  /** The business's name, trimmed and non-empty. */
  name: string;
  email: string;
  password: string;
  ip: string | null;
  /** The browser's User-Agent, for the person's device list. */
  userAgent?: string | null;
}

/** Throws UserInputError (with the message the form shows) for an email or password refused. */
export async function signUp(db: Db, input: SignUpInput): Promise<{ token: string }> {
  const user = await prepareUser(input.email, input.password);
  return db.transaction(async (tx) => {
    const merchant = await createMerchant(tx, input.name);
    const row = await insertUser(tx, merchant.id, user);
    const { token } = await startLogin(tx, row, input.ip, { signUp: true }, input.userAgent ?? null);
    return { token };
  });
}
