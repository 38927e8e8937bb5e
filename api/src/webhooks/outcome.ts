/**
 * What becomes of a delivery after one attempt: a pure rule, apart from the worker that
 * writes it (worker.ts), so the rule is read and tested in one place.
 *
 * - 2xx: `succeeded`.
 * - 410 Gone: `failed` at once, and the endpoint is to be disabled (it asked to be).
 * - anything else: `pending` again after the retry schedule's next wait (with jitter), or
 *   `failed` once the schedule is spent.
 * - an attempt the worker aborted because it is stopping: handed back, due at once, and the
 *   attempt does not count (the payer's merchant loses nothing to a deploy).
 */
import { retryDelayMs } from "../retry-schedule.ts";
import type { SendResult } from "./sender.ts";

export type DeliveryOutcome =
  | { state: "succeeded" }
  | { state: "failed"; disableEndpoint: boolean }
  | { state: "pending"; delayMs: number }
  | { state: "handed-back" };

/**
 * `attempt` is the attempt just made (1 for the first); `random` in [0, 1) draws the jitter.
 */
export function deliveryOutcome(result: Pick<SendResult, "succeeded" | "gone" | "aborted">, attempt: number, schedule: readonly number[], random: number): DeliveryOutcome {
  if (result.aborted) return { state: "handed-back" };
  if (result.succeeded) return { state: "succeeded" };
  if (result.gone) return { state: "failed", disableEndpoint: true };
  const delayMs = retryDelayMs(schedule, attempt, random);
  return delayMs === undefined ? { state: "failed", disableEndpoint: false } : { state: "pending", delayMs };
}
