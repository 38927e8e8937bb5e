/** Liveness and readiness for orchestrators. */
import { Elysia } from "elysia";
import { ApiError } from "../errors.ts";
import { readMigrations } from "../db/migrate.ts";
import { doc, Health } from "./schemas.ts";
import type { Services } from "./services.ts";

const TAG = "Health";

export function healthRoutes(services: Services) {
  const expected = readMigrations().map((m) => m.tag);
  return new Elysia()
    .get("/healthz", () => ({ status: "ok" }), {
      detail: doc({ tag: TAG, summary: "Liveness: the process answers", ok: { status: 200, schema: Health, description: "Alive." }, errors: [] }),
    })
    .get(
      "/readyz",
      async () => {
        try {
          const rows = await services.database.sql`select tag from app.__migrations`;
          const applied = new Set(rows.map((r) => r.tag as string));
          if (expected.some((tag) => !applied.has(tag))) throw new Error("migrations pending");
        } catch {
          throw new ApiError("service_unavailable", "The database is unreachable or not migrated.");
        }
        return { status: "ready" };
      },
      {
        detail: doc({
          tag: TAG,
          summary: "Readiness: the database answers and is migrated",
          ok: { status: 200, schema: Health, description: "Ready." },
          errors: ["service_unavailable"],
        }),
      },
    );
}
