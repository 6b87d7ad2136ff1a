// Loaded into a benchmarked server with `node --import` (bench/profile.ts --allocations), never by
// the service itself: the first SIGUSR2 starts V8's sampling heap profiler, keeping the samples of
// objects the collector has since taken (what a request makes, not only what it keeps); the second
// stops it and writes the profile as JSON to the file named by THREADLINE_ALLOCATION_PROBE.
import { renameSync, writeFileSync } from 'node:fs'
import { Session } from 'node:inspector'

/** One sample about every this many bytes allocated: fine enough for a request of a few KB. */
const SAMPLING_INTERVAL_BYTES = 256

const file = process.env.THREADLINE_ALLOCATION_PROBE
if (file !== undefined && file !== '') {
  const session = new Session()
  session.connect()
  let sampling = false
  process.on('SIGUSR2', () => {
    if (!sampling) {
      sampling = true
      session.post('HeapProfiler.startSampling', {
        samplingInterval: SAMPLING_INTERVAL_BYTES,
        includeObjectsCollectedByMinorGC: true,
        includeObjectsCollectedByMajorGC: true,
      })
      return
    }
    sampling = false
    session.post('HeapProfiler.stopSampling', (error, result) => {
      if (error !== null) throw error
      // Whole or not at all: the reader waits for the name.
      writeFileSync(`${file}.tmp`, JSON.stringify(result.profile))
      renameSync(`${file}.tmp`, file)
    })
  })
}
