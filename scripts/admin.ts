#!/usr/bin/env bun
/**
 * Operator CLI on the store the service is configured for (same env vars as the service).
 * `npm run admin -- --help` lists the commands; `<command> --help` prints its options.
 */
import { runAdmin } from "../src/admin/cli";

process.exitCode = await runAdmin(process.argv.slice(2));
