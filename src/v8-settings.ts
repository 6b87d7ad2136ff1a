// What `threadline serve` sets of V8 from here, before the server is loaded, so that every way of
// starting it has them (flags that size the heap, such as --max-semi-space-size, are fixed when the
// process starts and would need every user to pass them): three settings of its heap, the
// optimizing compiler off until it listens, and Node's process.nextTick compiled first. Each was
// measured to take effect when done so (docs/performance.md has the figures and how they were
// taken).
//
// The young generation while the server starts. Loading the server (some 750 modules, the schema,
// the routes) allocates fast and keeps most of what it allocates, so V8 doubles the young
// generation's two semi-spaces up to their 16 MB maximum within the first second; and a server
// that then waits for requests makes too little garbage for V8 to shrink them soon: 30 MB of an
// idle server's resident memory were empty young-generation pages. So growth is held off while the
// server starts (the semi-spaces stay at their first 1 MB; what the start keeps is promoted sooner,
// as it would have been anyway) and allowed again once it listens: under load the young
// generation grows as it always did.
//
// The old generation under load. After each full collection V8 lets the old generation grow to a
// multiple of what survived before it collects again, a multiple it picks between 1.1 and 4 from
// how fast it collects; under GraphQL load a server with 37 MB alive let it reach 76 MB, mostly
// garbage. A fixed 30% bounds that growth: the peak of the same load fell by about 40 MB, at the
// same throughput within the noise of the measurement. V8 takes this one into account only when
// it is set before the first full collection: set once the server listened, it changed nothing.
//
// No pretenuring by allocation site. V8 makes in the old generation directly the objects of a site
// whose objects mostly survived its scavenges. The start keeps most of what it makes, and the young
// generation is held small meanwhile, so a site that later makes each request's short-lived objects
// could be judged long-lived: servers started alike then ran a full collection every 150 ms and
// answered at a third of the speed of their twins, for good, which of them depending on what the
// start met first. Set before the server loads, the flag is read at every scavenge
// (docs/decisions/0075-no-pretenuring-by-allocation-site.md).
//
// No optimizing compiler while the server starts. V8 optimizes what the start runs hot (the module
// loader, the schema's and the routes' builders), code that never runs again once the server
// listens, on worker threads whose malloc arenas keep what the compilations used: 4-14 MB of an
// idle server's resident memory, a different amount at each start. With TurboFan off until the
// server listens those arenas held under 1 MB, the server rested at 75 MB instead of 82-89 and
// listened in 0.7 s instead of 0.95 (pinned to one core); once it listens TurboFan is on again,
// and a request's CPU under load was the same within the noise.
//
// process.nextTick, first. It builds each tick's record as an object literal with two computed
// (symbol) keys, and V8 keeps one shape of feedback for each such key: a start as long as the
// server's (thousands of ticks run by the interpreter while modules load and the database opens)
// left that feedback generic in 13 starts of 14 measured, and from then on every tick, some eight a
// request inside Node's streams, defined its two keys through V8's runtime: 130-200 ns a tick
// against 22 once compiled with the literal's shape, 2-3 us of CPU a request (GET one user with no
// cached answer 31.3 -> 28.7 us). Called ten thousand times before the server loads, it is
// compiled for the literal's one shape and stays so. (V8 compiles it on a worker thread: whether
// it compiles there is read only when the process starts, and --no-concurrent-recompilation set
// from here, as this once did around the calls, changed nothing that V8's trace shows.)
import v8 from 'node:v8'

/** V8's own default, restored once the server listens. */
const V8_SEMI_SPACE_GROWTH_FACTOR = 2
/** How far the old generation may grow past what survived the last full collection, in percent. */
export const OLD_GENERATION_GROWTH_PERCENT = 30

/** Calls of process.nextTick that take it past V8's budget for optimizing it (3,000 were enough). */
const NEXT_TICK_WARM_UP_CALLS = 10_000

const ignoreTick = (): void => {}

/** process.nextTick optimized now, while its feedback has the one shape; the ticks it queued run at once. */
function compileNextTick(): void {
  for (let i = 0; i < NEXT_TICK_WARM_UP_CALLS; i++) process.nextTick(ignoreTick)
}

/**
 * Bounds the old generation's growth, turns off pretenuring by allocation site, compiles
 * process.nextTick, and runs `start` (the server's start, until it listens) with the young
 * generation kept at its first size and the optimizing compiler off. `nodeOptions`:
 * NODE_OPTIONS (the config's); a flag given there or on node's command line is left as its giver
 * set it (Node refuses these heap flags in NODE_OPTIONS: for them, the command line).
 */
export async function withServerV8Settings<T>(nodeOptions: readonly string[], start: () => Promise<T>): Promise<T> {
  const chosenAtStart = (flag: string): boolean =>
    [...process.execArgv, ...nodeOptions].some((arg) => {
      const given = arg.replace(/_/g, '-')
      return given === `--${flag}` || given.startsWith(`--${flag}=`)
    })
  if (!chosenAtStart('heap-growing-percent')) v8.setFlagsFromString(`--heap-growing-percent=${OLD_GENERATION_GROWTH_PERCENT}`)
  if (!chosenAtStart('allocation-site-pretenuring') && !chosenAtStart('no-allocation-site-pretenuring'))
    v8.setFlagsFromString('--no-allocation-site-pretenuring')
  const holdYoung = !chosenAtStart('semi-space-growth-factor')
  if (holdYoung) v8.setFlagsFromString('--semi-space-growth-factor=1')
  // After the young generation is held: the ticks queued at once would otherwise grow it.
  compileNextTick()
  // After process.nextTick is compiled, which needs the optimizing compiler.
  const holdOptimizing = !['turbofan', 'no-turbofan', 'opt', 'no-opt'].some(chosenAtStart)
  if (holdOptimizing) v8.setFlagsFromString('--no-turbofan')
  try {
    return await start()
  } finally {
    if (holdYoung) v8.setFlagsFromString(`--semi-space-growth-factor=${V8_SEMI_SPACE_GROWTH_FACTOR}`)
    if (holdOptimizing) v8.setFlagsFromString('--turbofan')
  }
}
