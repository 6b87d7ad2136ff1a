// The clock a test app counts its windows by (AppDependencies.now): real time, plus however far the
// test moved it. A test that needs the next rate-limit window moves the clock a window ahead
// instead of sleeping through one; everything else sees time pass as usual.
export interface TestClock {
  now: () => number
  /** Moves the clock `ms` ahead, at once. */
  advance: (ms: number) => void
}

export function createTestClock(): TestClock {
  let offset = 0
  return {
    now: () => Date.now() + offset,
    advance: (ms) => {
      offset += ms
    },
  }
}
