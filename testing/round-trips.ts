/**
 * TEST helper: a postgres.js client that counts its round trips to Postgres — how many times it
 * sent something after having heard back — so a test can say "this takes two round trips"
 * without timing anything. postgres.js sends pipelined statements in the same tick, before any
 * answer can be read, so the count does not depend on the machine's speed.
 */
import net from "node:net";
import postgres from "postgres";

export interface CountingClient {
  sql: postgres.Sql;
  /** Round trips since the last reset(). */
  readonly roundTrips: number;
  reset(): void;
  end(): Promise<void>;
}

/** One connection (so every statement shares the counted socket), bigint columns as bigint as the service reads them. */
export function countingClient(url: string): CountingClient {
  let trips = 0;
  let heardBack = true;
  // Bun's net.Socket sets `write` on the instance, again once connected: whatever it sets is
  // kept and wrapped (a property of our own), not overridden in a subclass.
  const counted = () => {
    const s = new net.Socket();
    let inner = s.write.bind(s) as (...args: unknown[]) => boolean;
    Object.defineProperty(s, "write", {
      configurable: true,
      get: () => (...args: unknown[]) => {
        if (heardBack) trips++;
        heardBack = false;
        return inner.apply(s, args);
      },
      set: (f: (...args: unknown[]) => boolean) => (inner = f),
    });
    s.on("data", () => (heardBack = true)); // before postgres.js's own listener, which may answer at once
    return s;
  };
  const sql = postgres(url, {
    max: 1,
    onnotice: () => {},
    types: { bigint: postgres.BigInt },
    socket: (o: { host: string[]; port: number[] }) => {
      const s = counted();
      s.connect(o.port[0]!, o.host[0]!);
      return s;
    },
  } as postgres.Options<{}>);
  return {
    sql,
    get roundTrips() {
      return trips;
    },
    reset() {
      trips = 0;
      heardBack = true;
    },
    end: () => sql.end(),
  };
}
