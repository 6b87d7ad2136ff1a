// How much the property tests try. A fixed seed by default, so every run (and both stores) tries
// the same cases and a failure is reproducible; FUZZ_SEED tries others, FUZZ_RUNS_FACTOR more of them
// (FUZZ_RUNS_FACTOR=10 npm test -- test/http/hostile-input.test.ts).
import type fc from 'fast-check'

export const FUZZ_SEED = Number(process.env.FUZZ_SEED ?? 20_261_126)
const FACTOR = Number(process.env.FUZZ_RUNS_FACTOR ?? 1)

/** fast-check parameters: `numRuns` cases (times FUZZ_RUNS_FACTOR) from the seed. */
export function fuzzRuns(numRuns: number): fc.Parameters<unknown> {
  return { numRuns: Math.max(1, Math.round(numRuns * FACTOR)), seed: FUZZ_SEED }
}
