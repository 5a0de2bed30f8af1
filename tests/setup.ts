// Preloaded by bunfig.toml: hooks here run once for the whole `bun test` run.
import { afterAll } from "bun:test";
import { stopMongo } from "./support/mongo";
import { removeTempDirs } from "./support/temp";

afterAll(removeTempDirs);
// the FerretDB a test file started through tests/support/mongo.ts (one per run)
afterAll(stopMongo);
