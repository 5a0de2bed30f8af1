// Preloaded by bunfig.toml: hooks here run once for the whole `bun test` run.
import { afterAll } from "bun:test";
import { removeTempDirs } from "./temp";

afterAll(removeTempDirs);
