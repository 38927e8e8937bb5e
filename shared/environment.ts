/**
 * One deployment serves both environments; every credential belongs to one of them and
 * says so in its prefix, so data of the two never mixes (docs/decisions.md, "Environments and credentials").
 */
export const ENVIRONMENTS = ["sandbox", "production"] as const;
export type Environment = (typeof ENVIRONMENTS)[number];

/** The short tag used in credential prefixes: sk_test_…, sk_live_…, mch_test_…, pst_test_… */
export const ENV_TAG: Record<Environment, "test" | "live"> = { sandbox: "test", production: "live" };

export function environmentFromTag(tag: string): Environment | undefined {
  if (tag === "test") return "sandbox";
  if (tag === "live") return "production";
  return undefined;
}
