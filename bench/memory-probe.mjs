// Loaded into a benchmarked server with `node --import` (bench/memory.ts), never by the service
// itself: on SIGUSR2 it writes what only the process can tell about its memory (V8's heap by space,
// process.memoryUsage(), the CommonJS modules loaded) as JSON to the file named by
// THREADLINE_MEMORY_PROBE. Until then it holds one signal listener and nothing else.
import { renameSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import v8 from 'node:v8'

const file = process.env.THREADLINE_MEMORY_PROBE
if (file !== undefined && file !== '') {
  process.on('SIGUSR2', () => {
    const report = {
      usage: process.memoryUsage(),
      heap: v8.getHeapStatistics(),
      spaces: v8.getHeapSpaceStatistics(),
      code: v8.getHeapCodeStatistics(),
      commonJsModules: Object.keys(createRequire(import.meta.url).cache).length,
    }
    // Started with --expose-gc (by hand, to tell live objects from garbage): a full collection, then the heap's live size.
    if (typeof globalThis.gc === 'function') {
      globalThis.gc()
      report.liveAfterFullGc = v8.getHeapStatistics().used_heap_size
    }
    // Whole or not at all: the reader waits for the name.
    writeFileSync(`${file}.tmp`, JSON.stringify(report))
    renameSync(`${file}.tmp`, file)
  })
}
