// V8's young generation while the server starts. Loading the server (some 750 modules, the schema,
// the routes) allocates fast and keeps most of what it allocates, so V8 doubles the young
// generation's two semi-spaces up to their 16 MB maximum within the first second; and a server
// that then waits for requests makes too little garbage for V8 ever to shrink them: 30 MB of an
// idle server's resident memory were empty young-generation pages. So growth is held off while
// the server starts (the semi-spaces stay at their first 1 MB; what the start keeps is promoted
// sooner, as it would have been anyway) and allowed again once it listens: under load the young
// generation grows as it always did. V8 reads this flag each time it would grow, so setting it
// now takes effect (the maximum size, by contrast, is fixed when the process starts; see
// docs/performance.md).
import v8 from 'node:v8'

const FLAG = 'semi-space-growth-factor'
/** V8's own default, restored once the server listens. */
const V8_DEFAULT_GROWTH_FACTOR = 2

/** Whether whoever started node chose the growth factor themselves (their choice stands). */
const chosenAtStart = (): boolean =>
  [...process.execArgv, ...(process.env.NODE_OPTIONS ?? '').split(/\s+/)].some((arg) => arg.replace(/_/g, '-').startsWith(`--${FLAG}`))

/** Runs `start` with the young generation kept at its first size, and lets it grow again after. */
export async function withYoungGenerationHeld<T>(start: () => Promise<T>): Promise<T> {
  if (chosenAtStart()) return start()
  v8.setFlagsFromString(`--${FLAG}=1`)
  try {
    return await start()
  } finally {
    v8.setFlagsFromString(`--${FLAG}=${V8_DEFAULT_GROWTH_FACTOR}`)
  }
}
