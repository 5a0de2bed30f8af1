// Preloaded by bunfig.toml: hooks here run once for the whole `bun test` run.
import { afterAll, setDefaultTimeout } from "bun:test";
import { removeTempDirs } from "./temp";

// 30 s per test (Bun's default is 5 s, and bunfig.toml's [test] has no timeout key): tests that
// start servers need it on a loaded 2-core machine. Set here, it applies to every test file.
setDefaultTimeout(30_000);

afterAll(removeTempDirs);
