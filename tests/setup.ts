// Preloaded by bunfig.toml: hooks here run once for the whole `bun test` run.
import { afterAll, setDefaultTimeout } from "bun:test";
import { removeTempDirs } from "./temp";

afterAll(removeTempDirs);

// bunfig.toml's [test] timeout is not a Bun setting (tests got Bun's 5 s default and failed on a
// loaded machine): 30 s per test, for every test file
setDefaultTimeout(30_000);
