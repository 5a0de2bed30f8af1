import { announce, boot, onShutdown } from "./server";

/** Bun entry point. */
const { config, deps, app } = await boot(process.env);
const server = Bun.serve({ port: config.PORT, hostname: config.HOST, fetch: app.fetch });
announce({ ...config, PORT: server.port ?? config.PORT });
onShutdown(() => server.stop(), deps);
