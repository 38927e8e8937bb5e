/** `bun api/src/db/migrate-cli.ts` — apply migrations to DATABASE_URL and exit. */
import postgres from "postgres";
import { migrate } from "./migrate.ts";

const url = process.env.DATABASE_URL;
if (!url) {
  console.error("DATABASE_URL is required");
  process.exit(2);
}
const sql = postgres(url, { max: 1, onnotice: () => {} });
try {
  const applied = await migrate(sql);
  console.log(JSON.stringify({ applied }));
} finally {
  await sql.end();
}
