-- The upgrade test's second image only (testing/containers.ts): a harmless migration, added to the
-- test's own build context and never to drizzle/. It only adds, as every migration does, so the
-- build before it runs on against the database after it.
CREATE TABLE IF NOT EXISTS "app"."container_upgrade_probe" (
	"id" integer PRIMARY KEY NOT NULL
);
