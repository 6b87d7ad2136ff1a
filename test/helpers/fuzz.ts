// How much the property tests try. A fixed seed by default, so every run (and both stores) tries
// the same cases and a failure is reproducible; FUZZ_SEED tries others, FUZZ_RUNS_FACTOR more of them
// (FUZZ_RUNS_FACTOR=10 npm test -- test/http/hostile-input.test.ts).
import type fc from 'fast-check'

/** A number from the environment; anything else stops the run rather than quietly trying nothing. */
function fromEnv(name: string, fallback: number, valid: (n: number) => boolean): number {
  const raw = process.env[name]
  const value = raw === undefined || raw === '' ? fallback : Number(raw)
  if (!valid(value)) throw new Error(`${name}=${raw}: expected ${name === 'FUZZ_SEED' ? 'an integer' : 'a positive number'}`)
  return value
}

export const FUZZ_SEED = fromEnv('FUZZ_SEED', 20_261_126, Number.isSafeInteger)
export const FUZZ_RUNS_FACTOR = fromEnv('FUZZ_RUNS_FACTOR', 1, (n) => Number.isFinite(n) && n > 0)

/** fast-check parameters: `numRuns` cases (times FUZZ_RUNS_FACTOR) from the seed. */
export function fuzzRuns(numRuns: number): fc.Parameters<unknown> {
  return { numRuns: Math.max(1, Math.round(numRuns * FUZZ_RUNS_FACTOR)), seed: FUZZ_SEED }
}
